//! What every API is asked alike: each scenario is written once, with what each
//! of the four APIs must make of it. A new API adds one entry to [`APIS`] and
//! one expectation to each table.

use std::path::Path;

use agentmsg::project::ChangeKind;
use agentmsg::providers::{
    anthropic, gemini, openai_chat, openai_responses, EncodeError, Encoded, Request, ResponseError,
    StreamDecode, ToolSpec,
};
use agentmsg::{AssistantMessage, Message};
use proptest::prelude::*;
use serde_json::json;

use crate::common::{self, change_kinds, lines};

/// One API under test: its codec functions and the model its scenarios use.
pub(super) struct Api {
    /// The name of its snapshot and SDK-body folders.
    pub(super) name: &'static str,
    pub(super) model: &'static str,
    pub(super) encode: fn(&Request) -> Result<Encoded, EncodeError>,
    pub(super) decode: fn(&str) -> Result<AssistantMessage, ResponseError>,
    /// Pushes every event, then finishes.
    pub(super) stream: fn(&[String]) -> Result<AssistantMessage, ResponseError>,
    /// Its request schema in the conformance data.
    pub(super) schema: &'static str,
    /// Where its recorded responses and streams (`*.chunks.txt`, one event a
    /// line) are in the conformance data.
    pub(super) recordings: &'static str,
}

impl Api {
    /// The folder of its recorded responses and streams.
    pub(super) fn dir(&self) -> std::path::PathBuf {
        common::conformance_dir().join(self.recordings)
    }

    /// Its recorded responses or streams whose file name ends with `ext`.
    pub(super) fn recordings(&self, ext: &str) -> Vec<std::path::PathBuf> {
        common::files_ending(&self.dir(), ext)
    }

    /// Decodes a recorded response body, panicking with the file's name.
    pub(super) fn decode_file(&self, path: &Path) -> AssistantMessage {
        let text = std::fs::read_to_string(path).expect("fixture");
        (self.decode)(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Decodes `events` as one stream.
    pub(super) fn decode_events<'a>(
        &self,
        events: impl IntoIterator<Item = &'a str>,
    ) -> Result<AssistantMessage, ResponseError> {
        let events: Vec<String> = events.into_iter().map(str::to_owned).collect();
        (self.stream)(&events)
    }
}

/// Encodes every case for `api`, checks each body against `schema` and the
/// API's own `rules`, and writes it for the SDK check; panics with every
/// problem.
pub(super) fn check_request_bodies(
    api: &Api,
    schema: &str,
    cases: &[(String, Request)],
    rules: impl Fn(&Request, &serde_json::Value) -> Vec<String>,
) {
    // Not wiped: other tests of this binary write here too (CI starts empty).
    let dir = common::sdk_dir(api.name);
    let mut failures = Vec::new();
    for (name, request) in cases {
        let encoded = (api.encode)(request).unwrap_or_else(|e| panic!("{name}: {e}"));
        for error in common::schema_errors(schema, &encoded.body) {
            failures.push(format!("{name}: schema: {error}"));
        }
        for error in rules(request, &encoded.body) {
            failures.push(format!("{name}: rule: {error}"));
        }
        let text = serde_json::to_string_pretty(&encoded.body).expect("a Value serializes");
        std::fs::write(dir.join(format!("{name}.json")), text).expect("write body");
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn stream_with<D: StreamDecode + Default>(
    events: &[String],
) -> Result<AssistantMessage, ResponseError> {
    let mut decoder = D::default();
    for event in events {
        decoder.push(event)?;
    }
    decoder.finish()
}

/// Every API, in the order of the expectation tables below.
pub(super) const APIS: [Api; 4] = [
    Api {
        name: "anthropic",
        schema: "anthropic-messages-request.schema.json",
        model: "claude-sonnet-4-5",
        encode: anthropic::encode_request,
        decode: anthropic::decode_response,
        stream: stream_with::<anthropic::StreamDecoder>,
        recordings: "responses/vercel/anthropic",
    },
    Api {
        name: "gemini",
        schema: "gemini-generatecontent-request.schema.json",
        model: "gemini-3-pro-preview",
        encode: gemini::encode_request,
        decode: gemini::decode_response,
        stream: stream_with::<gemini::StreamDecoder>,
        recordings: "responses/vercel/google",
    },
    Api {
        name: "openai-chat",
        schema: "openai-chat-request.schema.json",
        model: "gpt-4.1",
        encode: openai_chat::encode_request,
        decode: openai_chat::decode_response,
        stream: stream_with::<openai_chat::StreamDecoder>,
        recordings: "responses/vercel/openai/chat",
    },
    Api {
        name: "openai-responses",
        schema: "openai-responses-request.schema.json",
        model: "gpt-5",
        encode: openai_responses::encode_request,
        decode: openai_responses::decode_response,
        stream: stream_with::<openai_responses::StreamDecoder>,
        recordings: "responses/vercel/openai/responses",
    },
];

fn read_tool() -> ToolSpec {
    ToolSpec::new(
        "read",
        "Read a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )
}

fn tool(name: &str, parameters: serde_json::Value) -> ToolSpec {
    ToolSpec::new(name, "", parameters)
}

// ---------------------------------------------------------------------------
// Requests that cannot be encoded

/// `Err(part)`: encoding fails with an error naming `part`; `Ok`: it encodes.
type Outcome = Result<(), &'static str>;

/// A request and what each API makes of it, in the order of [`APIS`].
struct Refusal {
    name: &'static str,
    request: fn(&Api) -> Request,
    expect: [Outcome; 4],
}

const REFUSALS: &[Refusal] = &[
    Refusal {
        name: "an empty model id",
        request: |_| Request::new("", vec![Message::user("x")]),
        expect: [Err("model"), Err("model"), Err("model"), Err("model")],
    },
    Refusal {
        name: "a blank model id",
        request: |_| Request::new(" ", vec![Message::user("x")]),
        expect: [Err("model"), Err("model"), Ok(()), Ok(())],
    },
    Refusal {
        name: "no message",
        request: |api| Request::new(api.model, Vec::<Message>::new()),
        expect: [
            Err("messages"),
            Err("contents"),
            Err("messages"),
            Err("input"),
        ],
    },
    Refusal {
        name: "an empty tool name",
        request: |api| {
            Request::new(api.model, vec![Message::user("x")]).with_tools(vec![tool("", json!({}))])
        },
        expect: [
            Err("tools[0].name"),
            Err("tools[0].name"),
            Err("tools[0].name"),
            Err("tools[0].name"),
        ],
    },
    Refusal {
        name: "a tool name with a space",
        request: |api| {
            Request::new(api.model, vec![Message::user("x")])
                .with_tools(vec![tool("has space", json!({}))])
        },
        expect: [Err("tools[0].name"), Err("tools[0].name"), Ok(()), Ok(())],
    },
    Refusal {
        name: "a tool name starting with a digit",
        request: |api| {
            Request::new(api.model, vec![Message::user("x")])
                .with_tools(vec![tool("1abc", json!({}))])
        },
        expect: [Ok(()), Err("tools[0].name"), Ok(()), Ok(())],
    },
    Refusal {
        name: "a string schema",
        request: |api| {
            Request::new(api.model, vec![Message::user("x")])
                .with_tools(vec![tool("t", json!({"type": "string"}))])
        },
        expect: [Err("tools[0].parameters"), Ok(()), Ok(()), Ok(())],
    },
    Refusal {
        name: "a schema that is not an object",
        request: |api| {
            Request::new(api.model, vec![Message::user("x")])
                .with_tools(vec![tool("t", json!([1]))])
        },
        expect: [
            Err("tools[0].parameters"),
            Err("tools[0].parameters"),
            Ok(()),
            Ok(()),
        ],
    },
    Refusal {
        name: "a tool declared twice",
        request: |api| {
            Request::new(api.model, vec![Message::user("x")]).with_tools(vec![
                read_tool(),
                tool("now", json!({})),
                read_tool(),
            ])
        },
        expect: [Err("tools[2].name"), Err("tools[2].name"), Ok(()), Ok(())],
    },
    Refusal {
        name: "max_tokens below 16",
        request: |api| Request::new(api.model, vec![Message::user("x")]).with_max_tokens(8),
        expect: [Ok(()), Ok(()), Ok(()), Err("max_tokens")],
    },
];

#[test]
fn bad_requests_are_typed_errors_that_name_the_field() {
    let mut wrong = Vec::new();
    for refusal in REFUSALS {
        for (api, expect) in APIS.iter().zip(refusal.expect) {
            let got = (api.encode)(&(refusal.request)(api));
            let ok = match (&got, expect) {
                (Ok(_), Ok(())) => true,
                (Err(e), Err(part)) => e.to_string().contains(part),
                _ => false,
            };
            if !ok {
                wrong.push(format!(
                    "{} on {}: expected {expect:?}, got {:?}",
                    refusal.name,
                    api.name,
                    got.map(|_| ())
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------
// What the encoders change, and where they say it happened

/// For the APIs that need a user turn first: the JSON pointers of the first
/// turn's role and of its first text.
const OPENING: [Option<(&str, &str)>; 4] = [
    Some(("/messages/0/role", "/messages/0/content/0/text")),
    Some(("/contents/0/role", "/contents/0/parts/0/text")),
    None,
    None,
];

#[test]
fn a_conversation_opening_with_the_model_gets_a_user_turn_first_where_the_api_wants_one() {
    for (api, opening) in APIS.iter().zip(OPENING) {
        let request = Request::new(
            api.model,
            vec![Message::assistant("Welcome back."), Message::user("hi")],
        );
        let encoded = (api.encode)(&request).expect("encodes");
        let opened = encoded.report.changes.iter().any(|c| {
            c.index == 0
                && c.kind == ChangeKind::UnsupportedContent
                && c.detail.contains("(continued)")
        });
        match opening {
            Some((role, text)) => {
                assert_eq!(
                    encoded.body.pointer(role),
                    Some(&json!("user")),
                    "{}",
                    api.name
                );
                assert_eq!(
                    encoded.body.pointer(text),
                    Some(&json!("(continued)")),
                    "{}",
                    api.name
                );
                assert!(opened, "{}: {:?}", api.name, encoded.report.changes);
            }
            None => {
                assert!(!opened, "{}: {:?}", api.name, encoded.report.changes);
                assert!(
                    !encoded.body.to_string().contains("(continued)"),
                    "{}: {}",
                    api.name,
                    encoded.body
                );
            }
        }
    }
}

/// The changes each API reports for a stray tool result (input 0, which
/// prepare drops) followed by a user message with ogg audio (input 1): the
/// encoder's change must still name input 1.
const STRAY_RESULT_THEN_OGG: [&[(usize, ChangeKind)]; 4] = [
    &[
        (0, ChangeKind::DroppedResult),
        (1, ChangeKind::UnsupportedContent),
    ],
    &[(0, ChangeKind::DroppedResult)],
    &[
        (0, ChangeKind::DroppedResult),
        (1, ChangeKind::UnsupportedContent),
    ],
    &[
        (0, ChangeKind::DroppedResult),
        (1, ChangeKind::UnsupportedContent),
    ],
];

#[test]
fn encoder_changes_name_the_input_message_after_prepare_drops_one() {
    for (api, expected) in APIS.iter().zip(STRAY_RESULT_THEN_OGG) {
        let messages = lines(
            &[
                json!({"role": "toolResult", "toolCallId": "call_ghost", "toolName": "read",
                    "content": "stray", "isError": false})
                .to_string(),
                json!({"role": "user", "content": [{"type": "audio", "data": "T2dnUw==",
                    "mimeType": "audio/ogg"}]})
                .to_string(),
            ]
            .join("\n"),
        );
        let encoded = (api.encode)(&Request::new(api.model, messages)).expect("encodes");
        assert_eq!(change_kinds(&encoded.report), expected, "{}", api.name);
    }
}

/// The inputs whose audio each API reports, for a turn that failed (input 1,
/// skipped with its call's result at input 2) before a user message with wav
/// audio (input 3).
const FAILED_TURN_THEN_WAV: [&[usize]; 4] = [&[3], &[], &[], &[3]];

#[test]
fn encoder_changes_name_the_input_message_after_prepare_skips_a_failed_turn() {
    for (api, audio_at) in APIS.iter().zip(FAILED_TURN_THEN_WAV) {
        let messages = lines(
            &[
                json!({"role": "user", "content": "go", "timestamp": 1}).to_string(),
                json!({"role": "assistant", "content": [{"type": "toolCall", "id": "toolu_x",
                    "name": "read", "arguments": {}}], "api": "anthropic-messages",
                    "provider": "anthropic", "model": "claude-sonnet-4-5",
                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0},
                    "stopReason": "error", "timestamp": 2})
                .to_string(),
                json!({"role": "toolResult", "toolCallId": "toolu_x", "toolName": "read",
                    "content": "late", "isError": false})
                .to_string(),
                json!({"role": "user", "content": [{"type": "audio", "data": "UklGRg==",
                    "mimeType": "audio/wav"}]})
                .to_string(),
            ]
            .join("\n"),
        );
        let encoded = (api.encode)(&Request::new(api.model, messages)).expect("encodes");
        let audio: Vec<_> = encoded
            .report
            .changes
            .iter()
            .filter(|c| c.detail.contains("audio"))
            .map(|c| c.index)
            .collect();
        assert_eq!(
            audio, audio_at,
            "{}: {:?}",
            api.name, encoded.report.changes
        );
        assert!(
            encoded
                .report
                .changes
                .iter()
                .any(|c| c.index == 1 && c.kind == ChangeKind::SkippedFailedTurn),
            "{}: {:?}",
            api.name,
            encoded.report.changes
        );
    }
}

// ---------------------------------------------------------------------------
// Snapshots

/// The snapshot cases of each API, by file name, as its own test module builds
/// them.
fn snapshot_cases(api: &Api) -> Vec<(&'static str, Encoded)> {
    let chat = |name| openai_chat::encode_request(&super::openai_chat::case(name)).unwrap();
    let responses =
        |name| openai_responses::encode_request(&super::openai_responses::case(name)).unwrap();
    let openai_names = [
        "text",
        "every-user-block",
        "parallel-tool-calls",
        "tool-result-images",
        "thinking-with-signatures",
    ];
    match api.name {
        "anthropic" => [
            "text",
            "every_block",
            "parallel_tool_calls",
            "odd_ids",
            "thinking_signatures",
        ]
        .map(|name| (name, super::anthropic::encode(name)))
        .into(),
        "gemini" => [
            "text",
            "every_block",
            "parallel_tool_calls",
            "thinking_signatures",
            "foreign_calls_on_gemini3",
        ]
        .map(|name| (name, super::gemini::encode(name)))
        .into(),
        "openai-chat" => openai_names.map(|name| (name, chat(name))).into(),
        "openai-responses" => openai_names.map(|name| (name, responses(name))).into(),
        other => panic!("no snapshot cases for {other}"),
    }
}

#[test]
fn snapshots_pin_the_encoder_output() {
    let bless = std::env::var_os("AGENTMSG_BLESS").is_some();
    let mut stale = Vec::new();
    for api in &APIS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/snapshots")
            .join(api.name);
        for (name, encoded) in snapshot_cases(api) {
            let text = serde_json::to_string_pretty(&encoded.body).expect("serializes") + "\n";
            let path = dir.join(format!("{name}.json"));
            if bless {
                std::fs::create_dir_all(&dir).expect("snapshot dir");
                std::fs::write(&path, &text).expect("write snapshot");
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(expected) if expected == text => {}
                Ok(_) => stale.push(format!("{} differs:\n{text}", path.display())),
                Err(e) => stale.push(format!("{}: {e}", path.display())),
            }
        }
    }
    assert!(
        stale.is_empty(),
        "run with AGENTMSG_BLESS=1 to regenerate:\n{}",
        stale.join("\n")
    );
}

// ---------------------------------------------------------------------------
// Decoders on any input

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Arbitrary text never panics a decoder of any API, as a body or as
    /// stream events.
    #[test]
    fn arbitrary_text_never_panics_a_decoder(events in prop::collection::vec(".{0,80}", 0..8)) {
        for api in &APIS {
            for event in &events {
                let _ = (api.decode)(event);
            }
            let _ = (api.stream)(&events);
        }
    }
}

/// The recorded streams of `api`, each as its lines.
fn recorded_streams(api: &Api) -> Vec<Vec<String>> {
    api.recordings(".chunks.txt")
        .iter()
        .map(|p| common::chunk_lines(p))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// A recorded stream with one event damaged (cut, or a byte replaced)
    /// decodes or fails with an error, on every API; it never panics, and the
    /// damaged event as a body does not either.
    #[test]
    fn damaged_streams_never_panic(api in 0..APIS.len(), file in any::<prop::sample::Index>(),
                                   line in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(),
                                   byte in any::<u8>(), cut in any::<bool>()) {
        common::require_conformance!(Ok(()));
        let api = &APIS[api];
        let files = recorded_streams(api);
        prop_assume!(!files.is_empty());
        let mut lines = file.get(&files).clone();
        prop_assume!(!lines.is_empty());
        let i = line.index(lines.len());
        let mut bytes = lines[i].clone().into_bytes();
        let j = at.index(bytes.len().max(1)).min(bytes.len());
        if cut { bytes.truncate(j) } else if j < bytes.len() { bytes[j] = byte }
        lines[i] = String::from_utf8_lossy(&bytes).into_owned();
        let _ = (api.stream)(&lines);
        let _ = (api.decode)(&lines[i]);
    }
}
