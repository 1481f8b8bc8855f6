//! Sessions on pi's own session files (../shared/conformance/transcripts/pi):
//! the context agentmsg rebuilds is the one pi sends, and a session saved
//! unchanged is the same file.
//!
//! The expected numbers come from a separate walk of pi's
//! `buildSessionContext` over the same files (pi's v1 migration, then leaf to
//! root, the last compaction's summary, its kept entries, what follows).

use crate::common;

use std::collections::BTreeMap;

use agentmsg::custom::{BashExecution, COMPACTION_SUMMARY_PREFIX};
use agentmsg::session::{EntryKind, SessionFormat};
use agentmsg::{to_llm, AgentMessage, Message, Session};

fn roles(messages: &[impl std::borrow::Borrow<AgentMessage>]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for m in messages {
        *counts.entry(m.borrow().kind().to_owned()).or_default() += 1;
    }
    counts
}

#[test]
fn before_compaction_sends_the_last_summary_and_what_it_kept() {
    let dir = common::require_conformance!();
    let path = dir.join("transcripts/pi/before-compaction.jsonl");
    let bytes = std::fs::read(&path).unwrap();
    let session = Session::read(&bytes).unwrap();
    assert_eq!(session.format(), SessionFormat::Pi { version: 1 });
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
    assert_eq!(session.to_bytes(), bytes, "saved unchanged, byte for byte");

    let context = session.context(None).unwrap();
    // pi sends 446 messages, not the 1,002 entries of the file.
    assert_eq!(context.messages.len(), 446);
    let expected: BTreeMap<String, usize> = [
        ("assistant", 219),
        ("toolResult", 192),
        ("user", 31),
        ("bashExecution", 3),
        ("compactionSummary", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(roles(&context.messages), expected);
    // The summary is the last compaction's, first.
    let compactions: Vec<_> = session
        .entries()
        .iter()
        .filter_map(|e| match e.kind() {
            EntryKind::Compaction(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(compactions.len(), 2);
    let summary = context.messages[0]
        .downcast_ref::<agentmsg::custom::CompactionSummary>()
        .unwrap();
    assert_eq!(summary.summary, compactions[1].summary);
    assert_eq!(summary.tokens_before, 185_014);
    // The kept entries start at the migrated `firstKeptEntryIndex` (551).
    let first_kept = &session.entries()[551];
    assert_eq!(context.entry_ids[1].as_ref(), first_kept.id());

    // Projected: every message reaches the model (no bash command was `!!`),
    // the summary and the bash runs as user text worded as pi words them.
    let sent = to_llm(&context.messages);
    assert_eq!(sent.len(), 446);
    assert!(sent[0]
        .as_user()
        .unwrap()
        .text()
        .starts_with(COMPACTION_SUMMARY_PREFIX));
    let bash: Vec<&BashExecution> = context
        .messages
        .iter()
        .filter_map(|m| m.downcast_ref::<BashExecution>())
        .collect();
    assert_eq!(bash[0].command, "ls");
    let bash_text = sent
        .iter()
        .filter_map(|m| m.as_user())
        .find(|u| u.text().starts_with("Ran `ls`"))
        .expect("the bash run is sent as user text");
    assert!(bash_text.text().starts_with("Ran `ls`\n```\nAGENTS.md\n"));

    // The model the path set last: an assistant message's.
    let model = context.model.unwrap();
    assert_eq!(model.provider, "anthropic");
    assert_eq!(context.thinking_level, "off");
}

#[test]
fn large_session_sends_every_message() {
    let dir = common::require_conformance!();
    let bytes = std::fs::read(dir.join("transcripts/pi/large-session.jsonl")).unwrap();
    let session = Session::read(&bytes).unwrap();
    assert_eq!(session.to_bytes(), bytes);
    let context = session.context(None).unwrap();
    assert_eq!(context.messages.len(), 914);
    assert_eq!(to_llm(&context.messages).len(), 914);
    // The last thinking_level_change on the path wins.
    let last_level = session
        .entries()
        .iter()
        .rev()
        .find_map(|e| match e.kind() {
            EntryKind::ThinkingLevelChange { level } => Some(level.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(context.thinking_level, last_level);
}

#[test]
fn an_entry_appended_to_a_pi_session_is_a_pi_entry() {
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        "\n",
        r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1735689601000}}"#,
        "\n"
    );
    let mut session = Session::read(text.as_bytes()).unwrap();
    let reply = Message::Assistant(agentmsg::AssistantMessage::new([
        agentmsg::AssistantContent::Thinking(agentmsg::ThinkingContent {
            thinking: "hmm".into(),
            signature: Some("sig".into()),
        }),
        agentmsg::AssistantContent::RedactedThinking(agentmsg::RedactedThinkingContent::new(
            "opaque",
        )),
    ]));
    let id = session.append(reply.into()).unwrap();
    assert_eq!(id.as_str().len(), 8);
    assert!(id.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
    let bytes = session.to_bytes();
    let written = std::str::from_utf8(&bytes).unwrap();
    assert!(written.starts_with(text));
    let line = written.lines().last().unwrap();
    let value: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(value["type"], "message");
    assert_eq!(value["parentId"], "a1b2c3d4");
    assert!(value["timestamp"].as_str().unwrap().ends_with('Z'));
    let blocks = value["message"]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["thinkingSignature"], "sig");
    assert!(blocks[0].get("signature").is_none());
    assert_eq!(blocks[1]["type"], "thinking");
    assert_eq!(blocks[1]["redacted"], true);
    assert_eq!(blocks[1]["thinkingSignature"], "opaque");

    // Read back: the same tree, and pi's redacted thinking is redactedThinking.
    let again = Session::read(&bytes).unwrap();
    let context = again.context(None).unwrap();
    assert_eq!(context.messages.len(), 2);
    let assistant = context.messages[1]
        .as_llm()
        .unwrap()
        .as_assistant()
        .unwrap();
    assert_eq!(assistant.redacted_thinking().next().unwrap().data, "opaque");
}

#[test]
fn pi_tree_branches_labels_and_custom_entries() {
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        "\n",
        r#"{"type":"message","id":"00000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}"#,
        "\n",
        r#"{"type":"model_change","id":"00000002","parentId":"00000001","timestamp":"2025-01-01T00:00:02.000Z","provider":"openai","modelId":"gpt-5"}"#,
        "\n",
        r#"{"type":"message","id":"00000003","parentId":"00000002","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"abandoned","timestamp":3}}"#,
        "\n",
        r#"{"type":"branch_summary","id":"00000004","parentId":"00000002","timestamp":"2025-01-01T00:00:04.000Z","fromId":"00000002","summary":"Tried X."}"#,
        "\n",
        r#"{"type":"custom","id":"00000005","parentId":"00000004","timestamp":"2025-01-01T00:00:05.000Z","customType":"state","data":{"n":1}}"#,
        "\n",
        r#"{"type":"custom_message","id":"00000006","parentId":"00000005","timestamp":"2025-01-01T00:00:06.000Z","customType":"note","content":[{"type":"text","text":"injected"}],"display":false}"#,
        "\n",
        r#"{"type":"message","id":"00000007","parentId":"00000006","timestamp":"2025-01-01T00:00:07.000Z","message":{"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false,"timestamp":7,"excludeFromContext":true}}"#,
        "\n",
        r#"{"type":"thinking_level_change","id":"00000008","parentId":"00000007","timestamp":"2025-01-01T00:00:08.000Z","thinkingLevel":"high"}"#,
        "\n",
        r#"{"type":"label","id":"00000009","parentId":"00000008","timestamp":"2025-01-01T00:00:09.000Z","targetId":"00000001","label":"start"}"#,
        "\n",
        r#"{"type":"session_info","id":"0000000a","parentId":"00000009","timestamp":"2025-01-01T00:00:10.000Z","name":"demo"}"#,
        "\n",
    );
    let session = Session::read(text.as_bytes()).unwrap();
    assert_eq!(session.to_bytes(), text.as_bytes());
    assert_eq!(session.leaves().len(), 2);
    assert_eq!(session.children("00000002").unwrap().len(), 2);
    assert_eq!(session.label_of("00000001"), Some("start"));
    let context = session.context(None).unwrap();
    let kinds: Vec<&str> = context.messages.iter().map(|m| m.kind()).collect();
    assert_eq!(kinds, ["user", "branchSummary", "custom", "bashExecution"]);
    assert_eq!(context.thinking_level, "high");
    assert_eq!(context.model.as_ref().unwrap().model_id, "gpt-5");
    let sent = to_llm(&context.messages);
    // The bash run is `!!` (excluded); the custom message goes as user content.
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[2].as_user().unwrap().text(), "injected");
    assert!(sent[1].as_user().unwrap().text().contains("Tried X."));
    // The abandoned branch.
    let other = session.context(Some("00000003")).unwrap();
    assert_eq!(other.messages.len(), 2);
    assert_eq!(other.model.unwrap().model_id, "gpt-5");
    assert_eq!(other.thinking_level, "off");
}

#[test]
fn imported_pi_settings_set_the_model_and_thinking_level() {
    let text = [
        r#"{"role":"user","content":"hi","timestamp":1,"id":"a"}"#,
        r#"{"role":"extension","kind":"pi.thinking_level_change","data":{"type":"thinking_level_change","thinkingLevel":"high"},"id":"b"}"#,
        r#"{"role":"extension","kind":"pi.model_change","data":{"type":"model_change","provider":"openai","modelId":"gpt-5"},"id":"c"}"#,
    ]
    .join("\n");
    let context = Session::read(text.as_bytes())
        .unwrap()
        .into_context(None)
        .unwrap();
    assert_eq!(context.thinking_level, "high");
    assert_eq!(context.model.unwrap().model_id, "gpt-5");
    // Extension lines never reach the model.
    assert_eq!(to_llm(&context.messages).len(), 1);
}

/// pi's v1 file, migrated as pi migrates it on load: every entry gains its id
/// and parent, compactions keep from an id, the header says version 3, the
/// context is the same, and entries can be appended.
#[test]
fn a_v1_session_migrates_to_v3_with_the_same_context_and_takes_appends() {
    let dir = common::require_conformance!();
    let bytes = std::fs::read(dir.join("transcripts/pi/before-compaction.jsonl")).unwrap();
    let mut session = Session::read(&bytes).unwrap();
    let before = session.context(None).unwrap().into_owned();
    assert!(matches!(
        session.append(Message::user("more").into()),
        Err(agentmsg::session::SessionError::NeedsMigration)
    ));
    assert!(session.migrate().unwrap());
    assert!(!session.migrate().unwrap(), "once is enough");
    let migrated = session.to_bytes();
    let text = String::from_utf8(migrated.clone()).unwrap();
    let mut compactions = 0;
    for line in text.lines().skip(1) {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(value["id"].is_string(), "{line}");
        assert!(value.get("parentId").is_some(), "{line}");
        if value["type"] == "compaction" {
            compactions += 1;
            assert!(value.get("firstKeptEntryIndex").is_none());
            assert!(value["firstKeptEntryId"].is_string());
        }
    }
    assert_eq!(compactions, 2);
    let again = Session::read(&migrated).unwrap();
    assert_eq!(again.format(), SessionFormat::Pi { version: 3 });
    assert!(again.warnings().is_empty(), "{:?}", again.warnings());
    let after = again.context(None).unwrap();
    assert_eq!(after.messages.len(), 446);
    assert_eq!(roles(&after.messages), roles(&before.messages));
    assert_eq!(after.entry_ids, before.entry_ids);
    // Values keep their text: the original lines are the migrated ones minus
    // the keys the migration added.
    let original = String::from_utf8(bytes).unwrap();
    let second = original.lines().nth(1).unwrap();
    let second_migrated = text.lines().nth(1).unwrap();
    assert!(
        second_migrated.starts_with(&second[..second.len() - 1]),
        "{second_migrated}"
    );
    // Appends go on the migrated file, and read back on the path.
    let mut session = again;
    let id = session.append(Message::user("more").into()).unwrap();
    let reread = Session::read(&session.to_bytes()).unwrap();
    let context = reread.context(None).unwrap();
    assert_eq!(context.entry_ids.last().unwrap().as_ref(), Some(&id));
    assert_eq!(context.messages.len(), 447);
}

/// A pi session (version `version`) of a user message `a`, the entries given
/// (each a line with its own id and parent), and a user message after them.
fn pi_file(version: u32, middle: &[&str]) -> String {
    let mut lines = vec![
        format!(r#"{{"type":"session","version":{version},"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}}"#),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#.to_owned(),
    ];
    lines.extend(middle.iter().map(|l| (*l).to_owned()));
    lines.push(r#"{"type":"message","id":"z","parentId":"b","timestamp":"2025-01-01T00:00:09.000Z","message":{"role":"user","content":[{"type":"text","text":"next"}],"timestamp":9}}"#.to_owned());
    lines.join("\n") + "\n"
}

/// The user texts the context at the last entry sends.
fn sent_texts(file: &str) -> Vec<String> {
    let session = Session::read(file.as_bytes()).unwrap();
    let context = session.context(None).unwrap();
    to_llm(&context.messages)
        .iter()
        .map(|m| match m.as_ref() {
            Message::User(u) => u.text(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// What pi's `buildSessionContext` + `convertToLlm` send, entry type by entry
/// type: no `system` message, no `hookMessage` in a version 3 file (pi renames
/// it only when migrating an older one), a message of role
/// `compactionSummary` as user text that drops nothing, and no branch summary
/// without text.
#[test]
fn a_pi_context_sends_what_pi_sends() {
    let system = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"system","content":[{"type":"text","text":"be terse"}],"timestamp":2}}"#;
    assert_eq!(sent_texts(&pi_file(3, &[system])), ["hi", "next"]);

    let hook = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"x","content":"from a hook","display":true,"timestamp":2}}"#;
    assert_eq!(sent_texts(&pi_file(3, &[hook])), ["hi", "next"]);
    assert_eq!(
        sent_texts(&pi_file(2, &[hook])),
        ["hi", "from a hook", "next"]
    );

    let summary = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"compactionSummary","summary":"We met.","tokensBefore":5,"timestamp":2}}"#;
    let sent = sent_texts(&pi_file(3, &[summary]));
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[0], "hi");
    assert!(sent[1].starts_with(COMPACTION_SUMMARY_PREFIX) && sent[1].contains("We met."));

    let empty = r#"{"type":"branch_summary","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","fromId":"a","summary":""}"#;
    assert_eq!(sent_texts(&pi_file(3, &[empty])), ["hi", "next"]);
}

/// pi cuts strings at UTF-16 offsets and may write half of an emoji
/// (`"cut \ud83d"`). The message is read and sent with U+FFFD in its place,
/// with a warning naming the line; the file keeps its bytes.
#[test]
fn a_lone_surrogate_is_sent_as_a_replacement_character() {
    let cut = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":[{"type":"text","text":"cut \ud83d"}],"timestamp":2}}"#;
    let file = pi_file(3, &[cut]);
    assert_eq!(sent_texts(&file), ["hi", "cut \u{fffd}", "next"]);
    let session = Session::read(file.as_bytes()).unwrap();
    assert_eq!(session.to_bytes(), file.as_bytes());
    let warnings: Vec<String> = session.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("line 3: ") && warnings[0].contains("surrogate"));
    // An agentmsg transcript line reads the same way.
    let line =
        AgentMessage::from_line(r#"{"role":"user","content":"cut \ud83d","timestamp":1}"#).unwrap();
    assert_eq!(
        line.as_llm().unwrap().as_user().unwrap().text(),
        "cut \u{fffd}"
    );
}
