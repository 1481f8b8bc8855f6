//! Sessions as trees: bad input is an error naming the ids (never a hang), a
//! missing parent makes a root, joined lines give every entry; and, as
//! properties, the context of any tree is the one a plain walk gives, a
//! planned compaction never parts a call from its result, and a session
//! written and read back is the same session.

use std::collections::HashMap;

use agentmsg::custom::CompactionSummary;
use agentmsg::session::{plan_compaction, SessionError, WarningKind};
use agentmsg::{
    to_llm, AgentMessage, AssistantContent, AssistantMessage, Message, MessageId, ParentId,
    Session, StopReason, ToolCall, ToolResultMessage,
};
use proptest::prelude::*;

fn user(text: &str, id: &str, parent: ParentId) -> String {
    AgentMessage::from(Message::user(text))
        .with_id(Some(MessageId::from(id)))
        .with_parent_id(parent)
        .to_line()
        .unwrap()
}

fn pid(id: &str) -> ParentId {
    ParentId::Id(MessageId::from(id))
}

#[test]
fn a_parent_cycle_is_an_error_naming_its_ids() {
    let text = [
        user("root", "r", ParentId::Root),
        user("a", "a", pid("c")),
        user("b", "b", pid("a")),
        user("c", "c", pid("b")),
    ]
    .join("\n");
    match Session::read(text.as_bytes()) {
        Err(SessionError::Cycle { ids }) => {
            for id in ["a", "b", "c"] {
                assert!(ids.iter().any(|i| i == id), "{ids:?}");
            }
            let message = SessionError::Cycle { ids }.to_string();
            assert!(message.starts_with("parentId cycle: "), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // An entry that is its own parent.
    let text = user("self", "s", pid("s"));
    assert!(matches!(
        Session::read(text.as_bytes()),
        Err(SessionError::Cycle { ids }) if ids == ["s", "s"]
    ));
}

/// A parent written after its child (an edited or merged file) is still
/// its parent; one that is nowhere makes a root, with a warning.
#[test]
fn a_parent_written_after_its_child_is_found() {
    let text = [
        user("child", "c", pid("p")),
        user("parent", "p", ParentId::Root),
        user("orphan", "o", pid("gone")),
        user("last", "l", pid("c")),
    ]
    .join("\n");
    let session = Session::read(text.as_bytes()).unwrap();
    let path: Vec<&str> = session
        .path(Some("l"))
        .unwrap()
        .iter()
        .map(|e| e.id().unwrap().as_str())
        .collect();
    assert_eq!(path, ["p", "c", "l"]);
    assert_eq!(session.leaf_id().unwrap().as_str(), "l");
    assert_eq!(session.warnings().len(), 1, "{:?}", session.warnings());
    assert!(session.warnings()[0].to_string().contains("`gone`"));
    assert_eq!(session.path(Some("o")).unwrap().len(), 1);
}

#[test]
fn a_duplicate_id_is_an_error_naming_both_lines() {
    let text = [
        user("one", "x", ParentId::Previous),
        user("two", "x", ParentId::Previous),
    ]
    .join("\n");
    let error = Session::read(text.as_bytes()).unwrap_err();
    assert_eq!(
        error,
        SessionError::DuplicateId {
            id: MessageId::from("x"),
            first_line: 1,
            second_line: 2
        }
    );
    assert_eq!(error.to_string(), "duplicate id `x`: line 1 and line 2");
}

#[test]
fn a_missing_parent_makes_a_root_with_a_warning() {
    let text = [
        user("one", "a", ParentId::Root),
        user("two", "b", pid("gone")),
    ]
    .join("\n");
    let session = Session::read(text.as_bytes()).unwrap();
    assert_eq!(session.warnings().len(), 1);
    let warning = &session.warnings()[0];
    assert_eq!(warning.line, 2);
    assert!(matches!(&warning.kind, WarningKind::MissingParent { parent, .. } if parent == "gone"));
    assert!(warning.to_string().contains("`gone`"), "{warning}");
    // The path of `b` ends at `b`.
    assert_eq!(session.context(Some("b")).unwrap().messages.len(), 1);
    assert_eq!(session.leaves().len(), 2);
}

#[test]
fn a_line_holding_two_objects_gives_both_entries() {
    let text = format!(
        "{}\n{}{}\n",
        user("one", "a", ParentId::Previous),
        user("two", "b", ParentId::Previous),
        user("three", "c", ParentId::Previous)
    );
    let session = Session::read(text.as_bytes()).unwrap();
    assert_eq!(session.entries().len(), 3);
    assert!(matches!(
        session.warnings()[0].kind,
        WarningKind::JoinedObjects { count: 2 }
    ));
    assert_eq!(session.warnings()[0].line, 2);
    assert_eq!(session.context(None).unwrap().messages.len(), 3);
    assert_eq!(session.to_bytes(), text.as_bytes(), "kept byte for byte");
}

/// A file of over 8 MiB (its text and entries allocated at their size, and
/// backed by huge pages where the system has them) whose first MiB holds a
/// few long lines and the rest many short ones, so the room made for its
/// entries from its first MiB is too little: every entry is read, at its
/// line, with the warnings of the lines that are not entries, the same
/// through `open` and `read`, and written back byte for byte.
#[test]
fn a_big_file_whose_first_mib_misleads_is_read_whole() {
    let mut text = String::new();
    let long = "x".repeat(300_000);
    for i in 0..4 {
        text.push_str(&user(&long, &format!("long{i}"), ParentId::Previous));
        text.push('\n');
    }
    let short = "y".repeat(8000);
    let mut n = 4;
    while text.len() < 9 << 20 {
        text.push_str(&user(&short, &format!("s{n}"), ParentId::Previous));
        text.push('\n');
        n += 1;
    }
    // Near the end: a line that is no JSON (kept) and two entries glued.
    text.push_str("not json\n");
    text.push_str(&user("a", "glued1", ParentId::Previous));
    text.push_str(&user("b", "glued2", ParentId::Previous));
    text.push('\n');
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    std::fs::write(&path, &text).unwrap();
    let opened = Session::open(&path).unwrap();
    let read = Session::read(text.as_bytes()).unwrap();
    for session in [&opened, &read] {
        assert_eq!(session.entries().len(), n + 3);
        assert_eq!(session.entries()[n - 1].line_no(), n);
        assert_eq!(session.entries()[n].line_no(), n + 1);
        assert!(session.entries()[n].message().unwrap().is_unknown());
        assert_eq!(session.entry("glued2").unwrap().line_no(), n + 2);
        assert_eq!(session.warnings().len(), 1, "{:?}", session.warnings());
        assert_eq!(session.warnings()[0].line, n + 2);
        assert_eq!(session.context(None).unwrap().messages.len(), n + 3);
        assert_eq!(session.to_bytes(), text.as_bytes(), "kept byte for byte");
    }
}

/// A fragment a crash cut off, then a whole line with no newline between
/// (issue 23): the session reads the whole line's entry, as `check` does (it
/// said no entry had that id, and the context dropped it); the fragment is
/// kept, and so are the bytes.
#[test]
fn a_fragment_glued_to_a_whole_line_gives_its_entry() {
    let whole = user("three", "c", ParentId::Id(MessageId::from("a")));
    let text = format!(
        "{}
{{\"role\":\"user\",\"cont{whole}\n",
        user("one", "a", ParentId::Previous),
    );
    let session = Session::read(text.as_bytes()).unwrap();
    assert!(session.entry("c").is_some(), "{:?}", session.warnings());
    assert!(matches!(
        session.warnings()[0].kind,
        WarningKind::JoinedObjects { count: 2 }
    ));
    let context = session.context(Some("c")).unwrap();
    assert_eq!(context.messages.len(), 2);
    assert_eq!(session.to_bytes(), text.as_bytes(), "kept byte for byte");
}

/// Joined lines of kinds no type claims, and of a malformed first object,
/// still give both entries.
#[test]
fn a_line_holding_two_unknown_or_broken_objects_gives_both() {
    for (a, b) in [
        (
            r#"{"role":"nobodys","x":1,"id":"a"}"#,
            r#"{"role":"nobodys","x":2,"id":"b"}"#,
        ),
        (
            r#"{"role":"user","content":5,"id":"a"}"#,
            r#"{"role":"user","content":"ok","id":"b"}"#,
        ),
        (
            r#"{"role":"user","content":"a","id":"a"}"#,
            r#"{"role":"nobodys","id":"b"}"#,
        ),
    ] {
        let text = format!("{a}{b}\n");
        let session = Session::read(text.as_bytes()).unwrap();
        assert_eq!(session.entries().len(), 2, "{text}");
        assert!(
            matches!(
                session.warnings()[0].kind,
                WarningKind::JoinedObjects { count: 2 }
            ),
            "{text}: {:?}",
            session.warnings()
        );
        assert_eq!(session.to_bytes(), text.as_bytes());
    }
}

/// `}{` inside a string is text, not two entries, in either format; a pi
/// line that lost its newline gives both entries.
#[test]
fn braces_in_a_string_join_nothing() {
    let text = concat!(
        r#"{"role":"user","content":"\\frac{a}{b}","timestamp":1,"id":"a"}"#,
        "\n"
    );
    let session = Session::read(text.as_bytes()).unwrap();
    assert_eq!(session.entries().len(), 1);
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
    let pi = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"f(){}{}","timestamp":1}}"#,
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"}{","timestamp":2}}"#,
        "\n"
    );
    let session = Session::read(pi.as_bytes()).unwrap();
    assert_eq!(session.entries().len(), 3);
    assert_eq!(session.warnings().len(), 1, "{:?}", session.warnings());
    assert!(matches!(
        session.warnings()[0].kind,
        WarningKind::JoinedObjects { count: 2 }
    ));
    let context = session.context(None).unwrap();
    assert_eq!(context.messages.len(), 2);
    assert_eq!(session.to_bytes(), pi.as_bytes());
}

#[test]
fn an_old_linear_transcript_is_one_branch_and_appends_follow_it() {
    let text = "{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}\n{\"role\":\"user\",\"content\":\"again\",\"timestamp\":2}\n";
    let mut session = Session::read(text.as_bytes()).unwrap();
    assert_eq!(session.leaves().len(), 1);
    session.append(Message::user("third").into()).unwrap();
    let bytes = session.to_bytes();
    let written = std::str::from_utf8(&bytes).unwrap();
    assert!(written.starts_with(text));
    // The appended line follows the line before it: no `parentId`, a UUIDv7 id.
    let last = written.lines().last().unwrap();
    assert!(!last.contains("parentId"), "{last}");
    assert_eq!(
        AgentMessage::from_line(last)
            .unwrap()
            .id()
            .unwrap()
            .as_str()
            .len(),
        36
    );
    // Entries are named by id; an id no entry has is an error.
    assert!(session.entries()[0].id().is_none());
    assert!(matches!(
        session.compact("s", "nope", 1),
        Err(SessionError::NoSuchEntry(id)) if id == "nope"
    ));
    assert!(session.branch("nope").is_err());
}

/// A random tree: each entry's parent is an earlier entry or none; some
/// entries are compactions keeping from an earlier entry.
#[derive(Debug, Clone)]
struct Tree {
    parents: Vec<Option<usize>>,
    compaction: Vec<Option<usize>>,
    leaf: usize,
}

fn tree() -> impl Strategy<Value = Tree> {
    (1usize..40).prop_flat_map(|n| {
        (
            proptest::collection::vec((any::<prop::sample::Index>(), 0u8..10), n),
            any::<prop::sample::Index>(),
            proptest::collection::vec(any::<prop::sample::Index>(), n),
        )
            .prop_map(move |(choices, leaf, kept)| {
                let mut parents = Vec::with_capacity(n);
                let mut compaction = Vec::with_capacity(n);
                for (i, (p, kind)) in choices.into_iter().enumerate() {
                    // Mostly the previous entry, sometimes a branch or a root.
                    let parent = match (i, kind) {
                        (0, _) | (_, 0) => None,
                        (_, 1..=3) => Some(p.index(i)),
                        _ => Some(i - 1),
                    };
                    parents.push(parent);
                    compaction.push(if kind == 9 && i > 0 {
                        Some(kept[i].index(i))
                    } else {
                        None
                    });
                }
                Tree {
                    parents,
                    compaction,
                    leaf: leaf.index(n),
                }
            })
    })
}

fn id(i: usize) -> String {
    format!("e{i}")
}

fn write_tree(tree: &Tree) -> String {
    let mut lines = Vec::new();
    for (i, parent) in tree.parents.iter().enumerate() {
        let parent = match parent {
            None => ParentId::Root,
            Some(p) if *p + 1 == i => ParentId::Previous,
            Some(p) => pid(&id(*p)),
        };
        let message = match tree.compaction[i] {
            Some(kept) => {
                let mut c = CompactionSummary::new(format!("summary {i}"), 10);
                c.first_kept_id = Some(MessageId::from(id(kept)));
                AgentMessage::custom(c)
            }
            None => Message::user(format!("m{i}")).into(),
        };
        lines.push(
            message
                .with_id(Some(MessageId::from(id(i))))
                .with_parent_id(parent)
                .to_line()
                .unwrap(),
        );
    }
    lines.join("\n") + "\n"
}

/// The context by the rules, walked plainly: the texts the model sees.
fn reference(tree: &Tree) -> Vec<String> {
    let mut path = vec![tree.leaf];
    while let Some(p) = tree.parents[*path.last().unwrap()] {
        path.push(p);
    }
    path.reverse();
    let text = |i: usize| format!("m{i}");
    let last = path.iter().rposition(|&i| tree.compaction[i].is_some());
    match last {
        None => path
            .iter()
            .filter(|&&i| tree.compaction[i].is_none())
            .map(|&i| text(i))
            .collect(),
        Some(at) => {
            let c = path[at];
            let kept = tree.compaction[c].unwrap();
            let mut out = vec![format!("summary {c}")];
            if let Some(from) = path[..at].iter().position(|&i| i == kept) {
                out.extend(
                    path[from..at]
                        .iter()
                        .filter(|&&i| tree.compaction[i].is_none())
                        .map(|&i| text(i)),
                );
            }
            out.extend(
                path[at + 1..]
                    .iter()
                    .filter(|&&i| tree.compaction[i].is_none())
                    .map(|&i| text(i)),
            );
            out
        }
    }
}

fn texts(messages: &[impl std::borrow::Borrow<AgentMessage>]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m.borrow())
        .map(|m| match m.downcast_ref::<CompactionSummary>() {
            Some(c) => c.summary.clone(),
            None => m.as_llm().unwrap().as_user().unwrap().text(),
        })
        .collect()
}

fn call_turn(id: &str) -> [AgentMessage; 2] {
    [
        Message::Assistant(
            AssistantMessage::new([AssistantContent::ToolCall(ToolCall::new(
                id,
                "read",
                serde_json::json!({"path": "x".repeat(40)}),
            ))])
            .with_stop_reason(agentmsg::StopReason::ToolUse),
        )
        .into(),
        Message::ToolResult(ToolResultMessage::new(id, "read", ["y".repeat(200)])).into(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_context_of_any_tree_is_the_plain_walk(tree in tree()) {
        let session = Session::read(write_tree(&tree).as_bytes()).unwrap();
        let context = session.context(Some(&id(tree.leaf))).unwrap();
        prop_assert_eq!(texts(&context.messages), reference(&tree));
    }

    #[test]
    fn a_planned_compaction_never_parts_a_call_from_its_result(
        turns in proptest::collection::vec(0u8..3, 1..30),
        keep in 0u64..400,
    ) {
        let mut session = Session::new();
        for (i, turn) in turns.iter().enumerate() {
            match turn {
                0 => { session.append(Message::user(format!("question {i}")).into()).unwrap(); }
                _ => {
                    // One call, or two in parallel with their results after both.
                    let [call, result] = call_turn(&format!("c{i}"));
                    if *turn == 1 {
                        session.append(call).unwrap();
                        session.append(result).unwrap();
                    } else {
                        let [call2, result2] = call_turn(&format!("d{i}"));
                        let mut both = call.as_llm().unwrap().as_assistant().unwrap().clone();
                        both.content.extend(call2.as_llm().unwrap().as_assistant().unwrap().content.clone());
                        session.append(Message::Assistant(both).into()).unwrap();
                        session.append(result).unwrap();
                        session.append(result2).unwrap();
                    }
                }
            }
        }
        let context = session.context(None).unwrap().into_owned();
        if let Some(plan) = plan_compaction(&context, keep) {
            let cut = plan.first_kept_index;
            let mut called_before = HashMap::new();
            for (i, m) in context.messages.iter().enumerate() {
                if let Some(Message::Assistant(a)) = m.as_llm() {
                    for c in a.tool_calls() { called_before.insert(c.id.clone(), i); }
                }
            }
            for m in &context.messages[cut..] {
                if let Some(Message::ToolResult(r)) = m.as_llm() {
                    prop_assert!(called_before[&r.tool_call_id] >= cut, "result of {} kept, its call summarised", r.tool_call_id);
                }
            }
            prop_assert_eq!(plan.summarized, cut);
            prop_assert_eq!(Some(&plan.first_kept), context.entry_ids[cut].as_ref());
            // Compacting there and rebuilding sends the summary and the rest.
            session.apply_compaction(&plan, "S").unwrap();
            let after = session.context(None).unwrap();
            prop_assert_eq!(after.messages.len(), context.messages.len() - cut + 1);
        }
    }

    #[test]
    fn a_session_written_and_read_back_is_the_same(ops in proptest::collection::vec((0u8..5, any::<prop::sample::Index>()), 1..40)) {
        let mut session = Session::new();
        for (op, pick) in ops {
            let ids: Vec<String> = session.entries().iter().filter_map(|e| e.id()).map(|i| i.to_string()).collect();
            match (op, ids.is_empty()) {
                (1, false) => session.branch(&ids[pick.index(ids.len())]).unwrap(),
                (2, false) => { session.branch_with_summary(&ids[pick.index(ids.len())], "went back").unwrap(); }
                (3, false) => { session.compact("summary", &ids[pick.index(ids.len())], 5).unwrap(); }
                (4, false) => { session.label(&ids[pick.index(ids.len())], Some("mark")).unwrap(); }
                _ => { session.append(Message::user("hi").into()).unwrap(); }
            }
        }
        let bytes = session.to_bytes();
        let back = Session::read(&bytes).unwrap();
        prop_assert_eq!(back.to_bytes(), bytes.clone());
        prop_assert_eq!(back.entries().len(), session.entries().len());
        // The leaf is not stored: read back, it is the last entry (as pi's).
        prop_assert_eq!(back.leaf_id(), session.entries().last().and_then(|e| e.id()));
        for (a, b) in session.entries().iter().zip(back.entries()) {
            prop_assert_eq!(a.id(), b.id());
            prop_assert_eq!(a.parent_id(&session), b.parent_id(&back));
            prop_assert_eq!(a.message(), b.message());
        }
        for leaf in back.leaves() {
            let id = leaf.id().unwrap().as_str();
            let before = session.context(Some(id)).unwrap();
            let after = back.context(Some(id)).unwrap();
            prop_assert_eq!(to_llm(&before.messages), to_llm(&after.messages));
        }
    }

    #[test]
    fn any_bytes_read_without_panic_and_write_back_unchanged(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        pi in any::<bool>(),
    ) {
        let mut input = Vec::new();
        if pi {
            input.extend_from_slice(br#"{"type":"session","version":2,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}"#);
            input.push(b'\n');
        }
        input.extend_from_slice(&bytes);
        if let Ok(session) = Session::read(&input) {
            prop_assert_eq!(session.to_bytes(), input);
            let _ = session.context(None).unwrap();
            for leaf in session.leaves() {
                if let Some(id) = leaf.id() {
                    let _ = session.context(Some(id.as_str())).unwrap();
                }
            }
        }
    }

    #[test]
    fn any_ids_and_parents_read_or_fail_cleanly(
        lines in proptest::collection::vec((0usize..6, 0u8..5, 0usize..6, any::<bool>()), 0..20),
    ) {
        // Ids and parents drawn from a few names: duplicates, cycles, self
        // parents and missing parents all occur.
        let mut text = String::new();
        for (id, parent, target, pi_line) in lines {
            let parent = match parent {
                0 => String::new(),
                1 => r#","parentId":null"#.to_owned(),
                _ => format!(r#","parentId":"e{target}""#),
            };
            if pi_line {
                text.push_str(&format!(r#"{{"role":"user","content":"x","timestamp":1,"id":"e{id}"{parent}}}"#));
            } else {
                text.push_str(&format!(r#"{{"role":"custom","customType":"t","content":"y","display":true,"timestamp":2{parent}}}"#));
            }
            text.push('\n');
        }
        match Session::read(text.as_bytes()) {
            Ok(session) => {
                prop_assert_eq!(session.to_bytes(), text.as_bytes());
                for leaf in session.leaves() {
                    if let Some(id) = leaf.id() {
                        let context = session.context(Some(id.as_str())).unwrap();
                        prop_assert!(context.messages.len() <= session.entries().len());
                    }
                }
            }
            Err(SessionError::Cycle { ids }) => prop_assert!(ids.len() >= 2),
            Err(SessionError::DuplicateId { first_line, second_line, .. }) => prop_assert!(first_line < second_line),
            Err(other) => prop_assert!(false, "{other}"),
        }
    }

    #[test]
    fn the_path_read_of_a_file_gives_the_context_open_gives(
        tree in tree(),
        lines in proptest::collection::vec((0usize..6, 0u8..6, 0usize..6), 0..16),
        leaf in 0usize..8,
    ) {
        // A well-formed tree, and lines of few names (duplicates, cycles,
        // missing parents, numbers for ids, lines that are no JSON).
        let mut hostile = String::new();
        for (id, parent, target) in lines {
            let parent = match parent {
                0 => String::new(),
                1 => r#","parentId":null"#.to_owned(),
                2 => r#","parentId":7"#.to_owned(),
                _ => format!(r#","parentId":"e{target}""#),
            };
            match id {
                5 => hostile.push_str("not json"),
                4 => hostile.push_str(&format!(r#"{{"role":"user","content":"x","timestamp":1,"id":4{parent}}}"#)),
                _ => hostile.push_str(&format!(r#"{{"role":"user","content":"x","timestamp":1,"id":"e{id}"{parent}}}"#)),
            }
            hostile.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [("tree.jsonl", write_tree(&tree)), ("hostile.jsonl", hostile)] {
            let file = dir.path().join(name);
            std::fs::write(&file, &text).unwrap();
            let whole = Session::read(text.as_bytes());
            let leaves: Vec<Option<String>> = match &whole {
                Ok(session) => std::iter::once(None)
                    .chain(session.entries().iter().filter_map(|e| e.id()).map(|id| Some(id.to_string())))
                    .chain([Some(format!("e{leaf}")), Some("nowhere".to_owned())])
                    .collect(),
                Err(_) => vec![None],
            };
            for leaf in leaves {
                let path = Session::open_path(&file, leaf.as_deref());
                match (&whole, path) {
                    (Ok(session), Ok(path)) => {
                        let expected = session.context(leaf.as_deref()).unwrap();
                        prop_assert_eq!(path.context(None).unwrap(), expected);
                    }
                    (Ok(session), Err(e)) => {
                        let expected = session.context(leaf.as_deref());
                        prop_assert!(expected.is_err(), "{e}");
                    }
                    (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                    (Err(a), Ok(_)) => prop_assert!(false, "open failed ({a}), the path read did not"),
                }
            }
        }
    }
}

/// The summariser's input, the context size and a second compaction that
/// updates the first one's summary, with a recorded-looking reply's usage.
#[test]
fn compaction_to_the_end() {
    use agentmsg::session::{estimate_context_tokens, UPDATE_SUMMARY_PROMPT};
    use agentmsg::Usage;
    let mut session = Session::new();
    session
        .append(Message::user("Read a.rs and b.rs").into())
        .unwrap();
    let call = ToolCall::new(
        "call_1",
        "read",
        serde_json::json!({"limit": 10, "path": "a.rs"}),
    );
    let reply = AssistantMessage::new([call])
        .with_stop_reason(StopReason::ToolUse)
        .with_usage(Usage::new(370, 7));
    session.append(Message::Assistant(reply).into()).unwrap();
    session
        .append(Message::tool_result("call_1", "read", "x".repeat(2500)).into())
        .unwrap();
    for i in 0..4 {
        session
            .append(Message::user(format!("step {i} {}", "y".repeat(400))).into())
            .unwrap();
    }
    let context = session.context(None).unwrap();
    // The reply's real 377 tokens, plus an estimate of the five messages after it.
    let tokens = estimate_context_tokens(&context.messages);
    assert_eq!(tokens.usage_tokens, 377);
    assert_eq!(tokens.last_usage_index, Some(1));
    assert_eq!(tokens.trailing_tokens, 625 + 4 * 102);
    let plan = plan_compaction(&context, 250).unwrap();
    assert_eq!(plan.tokens_before, tokens.tokens);
    assert_eq!(plan.first_kept_index, 4);
    assert_eq!(plan.previous_summary, None);
    let conversation = &plan.conversation;
    assert!(conversation.starts_with(
        "[User]: Read a.rs and b.rs\n\n[Assistant tool calls]: read(limit=10, path=\"a.rs\")\n\n[Tool result]: xxx"
    ));
    assert!(conversation.contains("\n\n[... 500 more characters truncated]\n\n[User]: step 0"));
    assert!(!plan.prompt().unwrap().contains("<previous-summary>"));
    assert_eq!(plan.files.read_files, ["a.rs"]);
    let requests = plan.requests("claude-haiku-4-5", 16_384);
    assert_eq!(requests.len(), 1);
    let (part, request) = &requests[0];
    assert_eq!(*part, agentmsg::session::SummaryPart::History);
    assert_eq!(request.max_tokens, Some(13_107));
    assert_eq!(request.messages.len(), 1);
    assert!(request
        .system
        .as_deref()
        .unwrap()
        .contains("Do NOT continue the conversation"));
    session.apply_compaction(&plan, "First summary.").unwrap();

    // A second compaction folds the new span into the first summary.
    for i in 4..8 {
        session
            .append(Message::user(format!("step {i} {}", "z".repeat(400))).into())
            .unwrap();
    }
    let context = session.context(None).unwrap();
    let plan = plan_compaction(&context, 250).unwrap();
    assert_eq!(plan.previous_summary.as_deref(), Some("First summary."));
    assert!(plan.conversation.starts_with("[User]: step 1"));
    // The file lists the first compaction carried.
    assert_eq!(plan.files.read_files, ["a.rs"]);
    let prompt = plan.prompt().unwrap();
    assert!(prompt.contains("<previous-summary>\nFirst summary.\n</previous-summary>\n\n"));
    assert!(prompt.ends_with(UPDATE_SUMMARY_PROMPT));
    assert!(!agentmsg::session::DEFAULT_SUMMARY_PROMPT.contains("coding"));
}

/// A session's total usage counts every reply it holds: those a compaction
/// summarized (off the context) and those of other branches; the context's
/// usage counts only what the next request sends.
#[test]
fn total_usage_counts_every_reply_on_every_branch_and_before_a_compaction() {
    use agentmsg::transcript::MessageQuery;
    let reply = |id: &str, parent: &str, output: u64| {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{id}"}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{{"input":10,"output":{output},"cacheRead":0,"cacheWrite":0,"totalTokens":{}}},"stopReason":"stop","timestamp":1,"id":"{id}","parentId":{parent}}}"#,
            10 + output
        )
    };
    let text = [
        r#"{"role":"user","content":"hi","timestamp":1,"id":"u1","parentId":null}"#.to_owned(),
        reply("a1", r#""u1""#, 100),
        r#"{"role":"user","content":"more","timestamp":1,"id":"u2","parentId":"a1"}"#.to_owned(),
        reply("a2", r#""u2""#, 200),
        reply("b2", r#""u2""#, 400),
        r#"{"role":"compactionSummary","summary":"all of it","tokensBefore":700,"timestamp":1,"id":"c1","parentId":"a2"}"#.to_owned(),
        r#"{"role":"user","content":"go on","timestamp":1,"id":"u3","parentId":"c1"}"#.to_owned(),
        reply("a3", r#""u3""#, 1),
    ]
    .join("\n");
    let session = Session::read(text.as_bytes()).unwrap();
    let total = session.total_usage();
    assert_eq!(total.output, 100 + 200 + 400 + 1);
    assert_eq!(total.input, 40);
    assert_eq!(session.total_stats().usage, total);
    let context = session.context(None).unwrap();
    let in_context = context.messages.iter().map(|m| &**m).summarize().usage;
    assert_eq!(in_context.output, 1);
}
