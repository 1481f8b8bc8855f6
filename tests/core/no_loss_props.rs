//! Nothing is lost, whatever happened to the bytes: real transcript lines
//! mutated (byte flips, truncations, splices, byte-order marks, invalid UTF-8,
//! lines that are not objects, lost newlines), up to 64 kB a line, are each
//! decoded or kept byte for byte by the lenient reader, which never fails, and
//! written back unchanged.

use agentmsg::custom::Registry;
use agentmsg::transcript::{read_transcript, write_jsonl};
use agentmsg::{AgentMessage, JsonlReader};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
struct Notice {
    text: String,
}

/// Lines as agents write them: every role, thinking with a signature, tool
/// calls and results, images, a custom kind, an unknown kind, and a long one.
fn corpus() -> Vec<String> {
    let long = "a long tool output line, ".repeat(2600); // about 64 kB
    vec![
        r#"{"role":"system","content":[{"type":"text","text":"You are terse."}],"timestamp":1765233665292}"#.to_owned(),
        r#"{"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1765233665292,"id":"u1"}"#.to_owned(),
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Let me look…","signature":"EqQB"},{"type":"toolCall","id":"toolu_01","name":"read","arguments":{"path":"a.rs"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":2775,"output":141,"cacheRead":0,"cacheWrite":0,"totalTokens":2916,"cost":{"input":0.0139,"output":0.0035,"cacheRead":0,"cacheWrite":0,"total":0.0174}},"stopReason":"toolUse","timestamp":1765233669389}"#.to_owned(),
        format!(r#"{{"role":"toolResult","toolCallId":"toolu_01","toolName":"read","content":[{{"type":"text","text":"{long}"}}],"isError":false,"timestamp":1765233669400,"details":{{"bytes":12}}}}"#),
        r#"{"role":"notice","text":"session resumed","id":"0193a4b2-7c1e-7000-8000-000000000001"}"#.to_owned(),
        r#"{"role":"bashExecution","command":"ls","output":"a\nb\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1765238302057}"#.to_owned(),
        r#"{"role":"user","content":"caf\u00e9 \ud83d\ude00 ünïcödé","timestamp":3}"#.to_owned(),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Keep,
    Flip(usize, u8),
    Truncate(usize),
    Splice(usize, Vec<u8>),
    Bom,
    InvalidUtf8(usize),
    NotAnObject(&'static str),
    JoinWithNext,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => Just(Mutation::Keep),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::Splice(at, bytes)),
        1 => Just(Mutation::Bom),
        1 => any::<usize>().prop_map(Mutation::InvalidUtf8),
        1 => prop::sample::select(&["[1]", "42", "\"text\"", "null", "{}", "{\"role\":7}", "\u{a0}"][..])
            .prop_map(Mutation::NotAnObject),
        1 => Just(Mutation::JoinWithNext),
    ]
}

/// Applies `mutation` to `line` (never producing a newline inside it); the
/// bool says whether the newline after it is lost.
fn mutate(line: &[u8], mutation: &Mutation) -> (Vec<u8>, bool) {
    let mut out = line.to_vec();
    let at = |n: usize| n % (out.len() + 1);
    match mutation {
        Mutation::Keep => {}
        Mutation::Flip(n, b) => {
            if !out.is_empty() {
                let i = n % out.len();
                out[i] = *b;
            }
        }
        Mutation::Truncate(n) => {
            let i = at(*n);
            out.truncate(i);
        }
        Mutation::Splice(n, bytes) => {
            let i = at(*n);
            out.splice(i..i, bytes.iter().copied());
        }
        Mutation::Bom => {
            out.splice(0..0, *b"\xEF\xBB\xBF");
        }
        Mutation::InvalidUtf8(n) => {
            let i = at(*n);
            out.insert(i, 0xC3);
            out.insert(i + 1, b'(');
        }
        Mutation::NotAnObject(text) => out = text.as_bytes().to_vec(),
        Mutation::JoinWithNext => return (out, true),
    }
    for b in &mut out {
        if *b == b'\n' {
            *b = b' ';
        }
    }
    (out, false)
}

/// Whether the reader skips `line` as blank (JSON's whitespace only).
fn blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_line_is_decoded_or_kept_byte_for_byte(
        picks in prop::collection::vec((0usize..7, mutation()), 1..12),
        newline_at_end in any::<bool>(),
    ) {
        let corpus = corpus();
        let mut file = Vec::new();
        for (k, (pick, m)) in picks.iter().enumerate() {
            let (line, joined) = mutate(corpus[*pick].as_bytes(), m);
            file.extend_from_slice(&line);
            if (!joined || k + 1 == picks.len()) && (k + 1 < picks.len() || newline_at_end) {
                file.push(b'\n');
            }
        }
        // A whole array of objects is the array form, not lines.
        let body = file.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&file);
        let array = serde_json::from_slice::<Vec<serde_json::Value>>(body);
        prop_assume!(!array.is_ok_and(|a| a.iter().all(serde_json::Value::is_object)));
        let registry = Registry::new().with::<Notice>();
        let read = JsonlReader::new(&file[..]).with_registry(&registry).read_all();
        let read = match read {
            Ok(read) => read,
            Err(e) => return Err(TestCaseError::fail(format!("lenient read failed: {e}"))),
        };
        // The lines of the file, as the reader splits them.
        let ends_clean = file.last() == Some(&b'\n');
        let mut lines: Vec<&[u8]> = file.split(|b| *b == b'\n').collect();
        if ends_clean || file.is_empty() {
            lines.pop();
        }
        let mut expected: Vec<(usize, &[u8])> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            // A byte-order mark starts no line: the reader skips it.
            let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            if !blank(line) {
                expected.push((i + 1, line));
            }
        }
        let torn = usize::from(read.torn.is_some());
        prop_assert_eq!(read.messages.len() + torn, expected.len());
        if let Some(torn) = &read.torn {
            let (number, bytes) = expected[expected.len() - 1];
            prop_assert_eq!(torn.line, number);
            prop_assert_eq!(&torn.raw[..], lines[number - 1]);
            prop_assert_eq!(bytes, lines[number - 1].strip_prefix(b"\xEF\xBB\xBF").unwrap_or(lines[number - 1]));
            prop_assert!(!ends_clean);
        }
        for (message, (number, line)) in read.messages.iter().zip(&expected) {
            match message {
                AgentMessage::Unknown(kept) => {
                    prop_assert_eq!(kept.raw_bytes(), *line, "line {}", number);
                }
                // Decoded: it was one JSON object with a string role (read
                // as pi reads it when a string holds a lone surrogate, which
                // is U+FFFD in the message).
                decoded => {
                    let lenient = std::str::from_utf8(line)
                        .ok()
                        .and_then(agentmsg::transcript::replace_lone_surrogates)
                        .map(String::into_bytes);
                    let value: serde_json::Value = serde_json::from_slice(lenient.as_deref().unwrap_or(line))
                        .map_err(|e| TestCaseError::fail(format!("line {number} decoded as {decoded:?} but is not JSON: {e}")))?;
                    prop_assert!(value.get("role").is_some_and(|r| r.is_string()), "line {}", number);
                }
            }
        }
        // Written back, every kept line is its bytes again, and reading that
        // gives the same messages.
        let out = write_jsonl(Vec::new(), &read.messages).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (written, message) in out.split(|b| *b == b'\n').zip(&read.messages) {
            if let AgentMessage::Unknown(kept) = message {
                prop_assert_eq!(written, kept.raw_bytes());
            }
        }
        let again = JsonlReader::new(&out[..]).with_registry(&registry).read_all().unwrap();
        prop_assert_eq!(again.messages, read.messages);
        prop_assert!(again.torn.is_none());
    }
}

#[test]
fn a_line_of_non_json_spaces_is_kept_not_skipped() {
    let text = "\u{a0}\n\u{2028}\n \t\r\n";
    let read = read_transcript(text.as_bytes()).unwrap();
    let kept: Vec<&str> = read
        .messages
        .iter()
        .map(|m| m.as_unknown().unwrap().raw())
        .collect();
    assert_eq!(kept, ["\u{a0}", "\u{2028}"]);
}

/// The generic serde path (`serde_json::from_str::<AgentMessage>`, for
/// messages embedded in an app's own structs) holds back the keys before a
/// role that comes last; what it gives is what the line decoder gives.
#[test]
fn the_generic_path_reads_a_role_last_line_as_the_line_decoder_does() {
    let registry = Registry::global();
    for line in corpus() {
        let rest = line.strip_prefix("{\"role\":").unwrap();
        let (role, rest) = rest.split_once(',').unwrap();
        let role_last = format!("{{{},\"role\":{role}}}", rest.strip_suffix('}').unwrap());
        let direct = agentmsg::transcript::decode_line(
            &line,
            registry,
            agentmsg::transcript::DecodeMode::Lenient,
        )
        .unwrap();
        let generic: AgentMessage = serde_json::from_str(&role_last).unwrap();
        if direct.is_unknown() {
            assert!(generic.is_unknown(), "{role_last}");
        } else {
            assert_eq!(generic, direct, "{role_last}");
        }
    }
}
