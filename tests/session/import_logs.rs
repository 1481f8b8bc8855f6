//! Other agents' logs opened by the library: a Claude Code log and a Codex
//! rollout as a `Session` in one call, and `import` whole and streamed alike.

use std::io::Write as _;

use agentmsg::import::{self, Severity, WarningCode};
use agentmsg::session::{SessionFormat, WarningKind};
use agentmsg::Session;

/// A small Claude Code log: a call, a line that is no entry, its result, a
/// refusal. (`export_file` shows it too.)
pub(crate) const CLAUDE: &str = concat!(
    r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"write a"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
    "\n",
    r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"a"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":9}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    "\n",
    "not an entry\n",
    r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"wrote a"}]},"uuid":"r1","timestamp":"2026-01-01T00:00:02.000Z"}"#,
    "\n",
    r#"{"parentUuid":"r1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Done."}],"stop_reason":"refusal","usage":{"input_tokens":9,"output_tokens":3}},"uuid":"a2","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    "\n",
);

/// A small compacted Claude Code log: a turn, the compaction's boundary
/// (a root naming the turn as its logical parent, keeping the turn), its
/// summary, a turn after the kept one.
pub(crate) const CLAUDE_COMPACTED: &str = concat!(
    r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"write a"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
    "\n",
    r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Wrote a."}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":9}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    "\n",
    r#"{"parentUuid":null,"logicalParentUuid":"a1","isSidechain":false,"sessionId":"s","type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":900,"preservedSegment":{"headUuid":"u1","anchorUuid":"cs","tailUuid":"a1"}},"uuid":"cb","timestamp":"2026-01-01T00:00:02.000Z"}"#,
    "\n",
    r#"{"parentUuid":"cb","isSidechain":false,"sessionId":"s","type":"user","isCompactSummary":true,"message":{"role":"user","content":[{"type":"text","text":"Summary: a was written."}]},"uuid":"cs","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    "\n",
    r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"now b"},"uuid":"u2","timestamp":"2026-01-01T00:00:04.000Z"}"#,
    "\n",
    r#"{"parentUuid":"u2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Wrote b."}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":3}},"uuid":"a2","timestamp":"2026-01-01T00:00:05.000Z"}"#,
    "\n",
);

/// A compacted Claude Code log opens as one tree: the compacted turn on the
/// path to the leaf, the context starting at the summary. (The kept
/// segment, `u1`…`a1`, is the whole history: it follows the summary, and
/// the boundary is then a root, what the first kept message followed.)
#[test]
fn a_compacted_claude_code_log_opens_as_one_tree() {
    let (_dir, path) = file(CLAUDE_COMPACTED);
    let session = Session::open(&path).unwrap();
    let ids: Vec<&str> = session
        .path(None)
        .unwrap()
        .iter()
        .filter_map(|e| e.id().map(|id| id.as_str()))
        .collect();
    assert_eq!(ids, ["cb", "cs", "u1", "a1", "u2", "a2"]);
    assert_eq!(session.total_usage().output, 12);
    let context = session.context(None).unwrap();
    let sent = agentmsg::to_llm(&context.messages);
    let texts: Vec<String> = sent
        .iter()
        .map(|m| match (m.as_user(), m.as_assistant()) {
            (Some(u), _) => u.text(),
            (_, Some(a)) => a.text_content(),
            _ => String::new(),
        })
        .collect();
    assert!(texts[0].contains("Summary: a was written."), "{texts:?}");
    assert_eq!(texts[1..], ["write a", "Wrote a.", "now b", "Wrote b."]);
}

/// A small Codex rollout: a prompt, a call, its output, the answer.
pub(crate) const CODEX: &str = concat!(
    r#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"s","cwd":"/w","model_provider":"openai"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:00.500Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.3-codex"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list it"}]}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"cmd\":\"ls\"}","call_id":"c1"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a.rs"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"One file."}]}}"#,
    "\n",
);

fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    (dir, path)
}

fn roles(session: &Session) -> Vec<String> {
    session
        .context(None)
        .unwrap()
        .messages
        .iter()
        .filter_map(|m| m.as_llm().map(|m| m.role().to_string()))
        .collect()
}

#[test]
fn a_claude_code_log_opens_as_a_session_in_one_call() {
    let (_dir, path) = file(CLAUDE);
    let session = Session::open(&path).unwrap();
    assert_eq!(session.format(), SessionFormat::ClaudeCode);
    assert_eq!(
        roles(&session),
        ["user", "assistant", "toolResult", "assistant"]
    );
    // The tree is the log's: the last message hangs from the result.
    let last = session.entry("a2").unwrap();
    assert_eq!(last.parent_id(&session).unwrap().as_str(), "r1");
    // The stop reason is the runtime's one mapping (as `decode` reads it).
    let context = session.context(None).unwrap();
    let reply = context.messages.last().unwrap().as_llm().unwrap();
    let reply = reply.as_assistant().unwrap();
    assert_eq!(reply.stop_reason.as_str(), "guardRail");
    // What the import said is among the session's warnings, at the log's line.
    let said: Vec<_> = session
        .warnings()
        .iter()
        .filter_map(|w| match &w.kind {
            WarningKind::Imported(i) => Some((w.line, i.code)),
            _ => None,
        })
        .collect();
    assert_eq!(said, [(3, WarningCode::NotAnEntry)]);
}

#[test]
fn a_codex_rollout_opens_as_a_session_in_one_call() {
    let (_dir, path) = file(CODEX);
    let session = Session::open(&path).unwrap();
    assert_eq!(session.format(), SessionFormat::Codex);
    assert_eq!(
        roles(&session),
        ["user", "assistant", "toolResult", "assistant"]
    );
    // The path of a leaf reads the same session (converted whole).
    let leaf = session.leaf_id().unwrap().clone();
    let path_only = Session::open_path(&path, Some(leaf.as_str())).unwrap();
    assert_eq!(roles(&path_only), roles(&session));
}

#[test]
fn streamed_and_whole_imports_write_the_same_transcript() {
    for log in [CLAUDE, CODEX] {
        let (_dir, path) = file(log);
        let whole = import::import(log.as_bytes()).unwrap();
        let mut out = Vec::new();
        let streamed = import::import_path(&path, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            String::from_utf8(whole.text).unwrap()
        );
        assert_eq!(streamed.lines, whole.lines);
        assert_eq!(streamed.messages, whole.messages);
        assert_eq!(streamed.warnings, whole.warnings);
        assert!(streamed.text.is_empty());
    }
}

#[test]
fn a_pi_message_entry_without_a_message_is_an_error_at_its_line() {
    let pi = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#,
        "\n",
        r#"{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z"}"#,
        "\n",
    );
    assert_eq!(
        SessionFormat::detect(pi.as_bytes()),
        SessionFormat::Pi { version: 3 }
    );
    let imported = import::import(pi.as_bytes()).unwrap();
    let warning = &imported.warnings[0];
    assert_eq!((warning.line, warning.code), (2, WarningCode::BadMessage));
    assert_eq!(warning.severity, Severity::Error);
    assert!(imported.has_problems());
}

#[test]
fn a_log_no_importer_reads_is_refused_naming_its_first_line() {
    let err = import::import(b"\n{\"role\":\"user\",\"content\":\"hi\"}\n").unwrap_err();
    match err {
        import::ImportError::Unrecognised { line, text } => {
            assert_eq!(line, 2);
            assert!(text.starts_with("{\"role\""));
        }
        other => panic!("{other}"),
    }
}

/// The arguments a model wrote, in its order at every depth (sorted, `edits`
/// would come first and `a` before `z`).
const ORDERED_ARGS: &str =
    r#"{"path":"a.rs","old":"x","new":"y","edits":[{"z":1,"a":{"y":2,"b":3}}]}"#;

/// The arguments of the first tool call on the path of `session`.
fn first_call_arguments(session: &Session) -> String {
    let context = session.context(None).unwrap();
    let first = context
        .messages
        .iter()
        .filter_map(|m| m.as_llm()?.as_assistant())
        .flat_map(|a| a.tool_calls())
        .map(|c| c.arguments.as_str().to_owned())
        .next();
    first.unwrap()
}

#[test]
fn a_claude_code_call_keeps_the_order_of_its_arguments() {
    let log = CLAUDE.replace(r#"{"file_path":"a"}"#, ORDERED_ARGS);
    let (_dir, path) = file(&log);
    let session = Session::open(&path).unwrap();
    assert_eq!(first_call_arguments(&session), ORDERED_ARGS);
}

#[test]
fn a_codex_call_keeps_the_order_of_its_arguments() {
    let quoted = serde_json::to_string(ORDERED_ARGS).unwrap();
    let log = CODEX.replace(r#""{\"cmd\":\"ls\"}""#, &quoted);
    assert_ne!(log, CODEX);
    let (_dir, path) = file(&log);
    let session = Session::open(&path).unwrap();
    assert_eq!(first_call_arguments(&session), ORDERED_ARGS);
}

mod no_panic {
    use proptest::prelude::*;

    use super::{CLAUDE, CLAUDE_COMPACTED, CODEX};
    use agentmsg::import;
    use agentmsg::Session;

    /// Lines of a log, mutated: cut, glued, of other types, not JSON.
    fn mutated(log: &'static str) -> impl Strategy<Value = String> {
        let lines: Vec<&'static str> = log.lines().collect();
        prop::collection::vec(
            (0..lines.len(), 0usize..400, any::<u8>(), prop::bool::ANY),
            1..12,
        )
        .prop_map(move |picks| {
            let mut out = String::from(lines[0]);
            out.push('\n');
            for (i, cut, byte, glue) in picks {
                let line = lines[i];
                let cut = cut.min(line.len());
                let piece = line.get(..cut).unwrap_or(line);
                out.push_str(piece);
                if byte.is_ascii_graphic() {
                    out.push(char::from(byte));
                }
                if !glue {
                    out.push('\n');
                }
            }
            out
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn a_mutated_log_imports_and_opens_without_a_panic(log in prop_oneof![mutated(CLAUDE), mutated(CLAUDE_COMPACTED), mutated(CODEX)]) {
            let imported = import::import(log.as_bytes()).unwrap();
            let text = String::from_utf8(imported.text.clone()).unwrap();
            prop_assert_eq!(text.lines().count(), imported.lines);
            for line in text.lines() {
                prop_assert!(serde_json::from_str::<serde_json::Value>(line).is_ok(), "{}", line);
            }
            if let Ok(session) = Session::read(log.as_bytes()) {
                prop_assert_eq!(session.to_bytes(), imported.text);
                let _ = session.context(None);
            }
        }
    }
}
