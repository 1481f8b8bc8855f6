//! The transcript reader and writer: lenient and strict modes, line numbers,
//! torn last lines, the JSON-array form, appending with fsync, and real pi
//! sessions read and written back.

use crate::common;

use std::io::Write;

use agentmsg::custom::{BashExecution, Registry};
use agentmsg::transcript::{
    read_transcript, write_jsonl, DecodeError, DecodeMode, ReadError, UnknownReason,
};
use agentmsg::{AgentMessage, JsonlReader, JsonlWriter, Message};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
struct Notice {
    text: String,
}

/// The exact text of every `message` object of a pi session file.
fn pi_messages(name: &str) -> Vec<String> {
    #[derive(Deserialize)]
    struct Entry<'a> {
        #[serde(borrow, default)]
        message: Option<&'a serde_json::value::RawValue>,
    }
    let path = common::conformance_dir().join("transcripts/pi").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter_map(|line| {
            let entry: Entry = serde_json::from_str(line).unwrap();
            entry.message.map(|m| m.get().to_owned())
        })
        .collect()
}

/// The same object with `"role"` moved to the end (key order kept otherwise).
fn role_last(line: &str) -> String {
    let prefix = "{\"role\":";
    let rest = line.strip_prefix(prefix).expect("pi writes the role first");
    let role_end = rest.find(',').unwrap();
    let (role, body) = (&rest[..role_end], &rest[role_end + 1..]);
    let body = body.strip_suffix('}').unwrap();
    format!("{{{body},\"role\":{role}}}")
}

fn read(text: &str, registry: &Registry, mode: DecodeMode) -> Vec<Result<AgentMessage, ReadError>> {
    JsonlReader::new(text.as_bytes())
        .with_registry(registry)
        .mode(mode)
        .collect()
}

#[test]
fn pi_sessions_read_and_write_back() {
    common::require_conformance!();
    for name in ["before-compaction.jsonl", "large-session.jsonl"] {
        let lines = pi_messages(name);
        assert!(lines.len() > 900, "{name}: {}", lines.len());
        let text = lines.join("\n") + "\n";
        // Without a type for bashExecution, those lines are kept byte for byte.
        let registry = Registry::new();
        let messages: Vec<AgentMessage> = read(&text, &registry, DecodeMode::Lenient)
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(messages.len(), lines.len());
        let unknown: Vec<_> = messages
            .iter()
            .filter_map(AgentMessage::as_unknown)
            .collect();
        for kept in &unknown {
            assert_eq!(kept.kind(), "bashExecution", "{:?}", kept.reason());
            assert_eq!(kept.reason(), &UnknownReason::UnknownKind);
        }
        // The reader's direct decoding agrees with the core codec, with the role
        // first (as pi writes it) and with the role moved last.
        for (line, message) in lines.iter().zip(&messages) {
            if let Some(llm) = message.as_llm_message() {
                let direct: agentmsg::LlmMessage = serde_json::from_str(line).unwrap();
                assert_eq!(llm, &direct);
                let moved = role_last(line);
                let again =
                    agentmsg::transcript::decode_line(&moved, &registry, DecodeMode::Strict)
                        .unwrap();
                assert_eq!(again.as_llm_message(), Some(&direct), "{moved}");
            }
        }
        let written = write_jsonl(Vec::new(), &messages).unwrap();
        let written = String::from_utf8(written).unwrap();
        for (original, rewritten) in lines.iter().zip(written.lines()) {
            if original.contains("\"role\":\"bashExecution\"") {
                assert_eq!(original, rewritten);
            } else {
                // LLM lines go through the core codec (whose fidelity to pi is
                // tested with the core types): the same bytes as encoding it directly.
                let direct: agentmsg::LlmMessage = serde_json::from_str(original).unwrap();
                let direct = serde_json::to_string(&direct).unwrap();
                assert!(
                    direct == rewritten,
                    "{name}: {original}\nwritten back as\n{rewritten}"
                );
            }
        }
        // With the type registered (agentmsg's built-in one), they decode into it.
        let registry = Registry::new().with::<BashExecution>();
        let typed: Vec<AgentMessage> = read(&text, &registry, DecodeMode::Strict)
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        let bash = typed
            .iter()
            .filter_map(|m| m.downcast_ref::<BashExecution>())
            .count();
        assert_eq!(bash, unknown.len(), "{name}");
    }
}

#[test]
fn strict_mode_names_the_line_and_the_reason() {
    let text = "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"notice\",\"text\":\"n\"}\n{\"role\":\"mystery\"}\n";
    let registry = Registry::new().with::<Notice>();
    let lenient = read(text, &registry, DecodeMode::Lenient);
    assert_eq!(lenient.len(), 3);
    assert!(lenient.iter().all(Result::is_ok));
    let strict = read(text, &registry, DecodeMode::Strict);
    match &strict[2] {
        Err(ReadError::Line {
            line: 4,
            source: DecodeError::Rejected { kind, reason },
        }) => {
            assert_eq!(kind, "mystery");
            assert_eq!(reason, &UnknownReason::UnknownKind);
        }
        other => panic!("{other:?}"),
    }
    let message = strict[2].as_ref().unwrap_err().to_string();
    assert!(message.starts_with("line 4: kind `mystery`"), "{message}");
}

/// The kept line of a lenient read, and why it was kept.
fn malformed(item: &Result<AgentMessage, ReadError>) -> (&str, &UnknownReason) {
    let kept = item.as_ref().unwrap().as_unknown().unwrap();
    (kept.raw(), kept.reason())
}

#[test]
fn errors_do_not_stop_the_iterator() {
    let text = "not json\n{\"role\":\"user\",\"content\":\"a\"}\n{\"x\":1}\n\u{1}\n";
    // Strict: each line that is not a message is an error naming it.
    let items = read(text, &Registry::new(), DecodeMode::Strict);
    assert_eq!(items.len(), 4);
    assert!(matches!(
        &items[0],
        Err(ReadError::Line {
            line: 1,
            source: DecodeError::NotJson(_)
        })
    ));
    assert!(items[1].is_ok());
    assert!(matches!(
        &items[2],
        Err(ReadError::Line {
            line: 3,
            source: DecodeError::MissingRole
        })
    ));
    assert!(matches!(&items[3], Err(ReadError::Line { line: 4, .. })));
    // Lenient: each is kept byte for byte, with why.
    let items = read(text, &Registry::new(), DecodeMode::Lenient);
    assert_eq!(items.len(), 4);
    assert!(
        matches!(malformed(&items[0]), ("not json", UnknownReason::Malformed(e)) if matches!(**e, DecodeError::NotJson(_)))
    );
    assert!(items[1].as_ref().unwrap().is_llm());
    assert!(
        matches!(malformed(&items[2]), ("{\"x\":1}", UnknownReason::Malformed(e)) if **e == DecodeError::MissingRole)
    );
    assert_eq!(malformed(&items[3]).0, "\u{1}");
    let out = write_jsonl(Vec::new(), items.iter().map(|i| i.as_ref().unwrap())).unwrap();
    let out = String::from_utf8(out).unwrap();
    let kept: Vec<&str> = out
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, l)| l)
        .collect();
    assert_eq!(kept, ["not json", "{\"x\":1}", "\u{1}"]);
}

#[test]
fn invalid_utf8_is_kept_byte_for_byte_or_reported_with_its_line() {
    let mut bytes = b"{\"role\":\"user\",\"content\":\"a\"}\n".to_vec();
    bytes.extend_from_slice(b"{\"role\":\"user\",\"content\":\"\xff\"}\n");
    let items: Vec<_> = JsonlReader::new(&bytes[..]).strict().collect();
    assert!(items[0].is_ok());
    assert!(
        matches!(&items[1], Err(ReadError::NotUtf8 { line: 2, .. })),
        "{:?}",
        items[1]
    );
    let read = read_transcript(&bytes[..]).unwrap();
    let kept = read.messages[1].as_unknown().unwrap();
    assert_eq!(kept.reason(), &UnknownReason::NotUtf8 { valid_up_to: 26 });
    let out = write_jsonl(Vec::new(), &read.messages).unwrap();
    assert!(
        out.ends_with(&bytes[31..]),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[test]
fn torn_last_line_is_reported_after_every_line_before_it() {
    let whole = "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"user\",\"content\":\"b\"}\n";
    let text = format!("{whole}{{\"role\":\"assistant\",\"content\":[{{\"type\":\"te");
    let transcript = read_transcript(text.as_bytes()).unwrap();
    assert_eq!(transcript.messages.len(), 2);
    let torn = transcript.torn.unwrap();
    assert_eq!((torn.line, torn.bytes()), (3, 42));
    assert_eq!(torn.raw, text.as_bytes()[whole.len()..]);
    let items: Vec<_> = JsonlReader::new(text.as_bytes()).collect();
    let error = items[2].as_ref().unwrap_err();
    assert!(matches!(error, ReadError::TornLastLine { line: 3, .. }));
    assert!(error.to_string().contains("torn last line"), "{error}");

    // A complete last line without a newline is not torn.
    let complete = format!("{whole}{{\"role\":\"user\",\"content\":\"c\"}}");
    let transcript = read_transcript(complete.as_bytes()).unwrap();
    assert_eq!(transcript.messages.len(), 3);
    assert_eq!(transcript.torn, None);
    // A broken line in the middle is that line's problem, not a torn end: kept
    // (lenient), or an error naming it (strict), and reading goes on.
    let middle = format!("{{\"role\":\"us\n{whole}");
    let transcript = read_transcript(middle.as_bytes()).unwrap();
    assert_eq!(transcript.messages.len(), 3);
    assert_eq!(
        transcript.messages[0].as_unknown().unwrap().raw(),
        "{\"role\":\"us"
    );
    assert!(matches!(
        JsonlReader::new(middle.as_bytes()).strict().read_all(),
        Err(ReadError::Line { line: 1, .. })
    ));
}

#[test]
fn json_array_form_is_accepted() {
    let text = r#"
    [
      {"role": "user", "content": "hi"},
      {
        "role": "future",
        "payload": [1, 2]
      },
      {"role":"notice","text":"n","id":"n1"}
    ]"#;
    let registry = Registry::new().with::<Notice>();
    let messages: Vec<AgentMessage> = read(text, &registry, DecodeMode::Lenient)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(messages.len(), 3);
    assert!(messages[0].is_llm());
    let kept = messages[1].as_unknown().unwrap();
    assert!(kept.raw().contains("\"payload\": [1, 2]"), "{}", kept.raw());
    assert_eq!(messages[2].downcast_ref::<Notice>().unwrap().text, "n");
    // Written as JSON Lines, the multi-line element becomes one line.
    let out = String::from_utf8(write_jsonl(Vec::new(), &messages).unwrap()).unwrap();
    assert_eq!(out.lines().count(), 3);
    let back: Vec<AgentMessage> = read(&out, &registry, DecodeMode::Lenient)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        back[1].as_unknown().unwrap().to_value().unwrap(),
        kept.to_value().unwrap()
    );
    // Strict mode names the element.
    let strict = read(text, &registry, DecodeMode::Strict);
    assert!(matches!(
        &strict[1],
        Err(ReadError::Element { index: 1, .. })
    ));
    // Not one whole array: read as lines, and nothing is lost.
    let broken = read_transcript(&b"[1, "[..]).unwrap();
    assert!(broken.messages.is_empty());
    assert_eq!(broken.torn.unwrap().raw, b"[1, ");
}

#[test]
fn crlf_and_odd_spacing_survive_byte_for_byte() {
    let text = "{ \"role\" : \"mystery\" , \"a\" : 1 }\r\n{\"x\":2,\"role\":\"other\"}\n";
    let messages = read_transcript(text.as_bytes()).unwrap().messages;
    assert_eq!(messages.len(), 2);
    let out = write_jsonl(Vec::new(), &messages).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), text);
}

#[test]
fn appending_writer_flushes_syncs_and_isolates_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    {
        let mut writer = JsonlWriter::append(&path).unwrap().fsync(true);
        writer.write(&Message::user("one").into()).unwrap();
        writer
            .write(&AgentMessage::custom(Notice { text: "two".into() }))
            .unwrap();
        // Buffered until flushed.
        assert_eq!(std::fs::read(&path).unwrap().len(), 0);
        writer.flush().unwrap();
        assert_eq!(writer.written(), 2);
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    // A crash leaves a torn line; the next append starts on a fresh line.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"role\":\"user\",\"cont")
        .unwrap();
    {
        let mut writer = JsonlWriter::append(&path).unwrap();
        writer.write(&Message::user("three").into()).unwrap();
        writer.flush().unwrap();
    }
    let file = std::fs::File::open(&path).unwrap();
    let items: Vec<_> = JsonlReader::new(std::io::BufReader::new(file)).collect();
    assert_eq!(items.len(), 4);
    assert!(matches!(
        malformed(&items[2]),
        ("{\"role\":\"user\",\"cont", UnknownReason::Malformed(_))
    ));
    assert_eq!(
        items[3]
            .as_ref()
            .unwrap()
            .as_llm()
            .unwrap()
            .as_user()
            .unwrap()
            .text(),
        "three"
    );
    assert_eq!(
        items[1]
            .as_ref()
            .unwrap()
            .downcast_ref::<Notice>()
            .unwrap()
            .text,
        "two"
    );
}

/// A type whose `Serialize` is not a map cannot be a line.
#[derive(Debug, Clone, PartialEq, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "scalar")]
struct Scalar {
    n: u8,
}

impl Serialize for Scalar {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.n)
    }
}

#[test]
fn a_message_that_does_not_encode_is_a_typed_error() {
    let mut writer = JsonlWriter::new(Vec::new());
    writer.write(&Message::user("ok").into()).unwrap();
    let error = writer
        .write(&AgentMessage::custom(Scalar { n: 1 }))
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("message 1") && text.contains("scalar"),
        "{text}"
    );
    assert!(serde_json::to_string(&AgentMessage::custom(Scalar { n: 1 })).is_err());
}

#[test]
fn an_array_then_a_torn_line_reads_as_the_array_and_writes_back_the_same() {
    // Found by the fuzzer: read as lines, the two kept lines would form this
    // array once the torn line was left out, and read back as its elements.
    let text = "[{\"role\":\"a\"},\n{\"role\":\"b\"}]\n{";
    let read = read_transcript(text.as_bytes()).unwrap();
    let kinds: Vec<&str> = read.messages.iter().map(AgentMessage::kind).collect();
    assert_eq!(kinds, ["a", "b"]);
    let torn = read.torn.unwrap();
    assert_eq!((torn.line, torn.raw.as_slice()), (3, &b"{"[..]));
    let written = write_jsonl(Vec::new(), &read.messages).unwrap();
    let again = read_transcript(&written[..]).unwrap();
    assert_eq!(again.messages, read.messages);
    assert!(again.torn.is_none());
    // A whole last line after the array is no tear: the file is read as lines.
    let text = "[{\"role\":\"a\"},\n{\"role\":\"b\"}]\nx";
    let read = read_transcript(text.as_bytes()).unwrap();
    assert_eq!(read.messages.len(), 3);
    assert!(read.torn.is_none());
}

#[test]
fn a_byte_order_mark_starts_no_line() {
    // Found by the fuzzer: a line of only a BOM after a blank line was kept,
    // then written first, where the next read skipped it as the file's BOM.
    for text in [
        "\u{feff}\u{feff}",
        "\u{feff}\u{feff}[]    ",
        "\n\u{feff}", "\u{feff}\n", "\n\u{feff}[]", "\u{feff}[{\"role\":\"user\",\"content\":\"a\"}]\n\u{feff}", "\u{feff}{\"x\":1,\"role\":\"user\",\"content\":\"a\"}\n\u{feff}{\"role\":\"user\",\"content\":\"b\"}\n"] {
        let read = read_transcript(text.as_bytes()).unwrap();
        let written = write_jsonl(Vec::new(), &read.messages).unwrap();
        let again = read_transcript(&written[..]).unwrap();
        assert_eq!(again.messages, read.messages, "{text:?}");
        assert!(read.messages.iter().all(AgentMessage::is_llm), "{text:?}: {:?}", read.messages);
    }
}
