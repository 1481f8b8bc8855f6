//! Every recorded stream and body of the conformance data, served over
//! loopback in random chunks: the client's message equals the stream
//! decoder's (or the body decoder's) on the same bytes.

use std::path::{Path, PathBuf};

use agentmsg::http::{ClientError, Retry};
use agentmsg::providers::{Api, StreamEvent, StreamReader};
use agentmsg::{AssistantMessage, StopReason};
use bytes::Bytes;

use crate::common::{self, require_conformance};
use crate::server::{Canned, Server};
use crate::{client, drain, request};

/// The recordings of each API.
fn recordings(dir: &Path) -> Vec<(Api, PathBuf)> {
    let vercel = dir.join("responses/vercel");
    let mut out = Vec::new();
    for (api, sub) in [
        (Api::Anthropic, "anthropic"),
        (Api::OpenaiChat, "openai/chat"),
        (Api::OpenaiResponses, "openai/responses"),
        (Api::Gemini, "google"),
    ] {
        for ext in [".chunks.txt", ".json"] {
            for path in common::files_ending(&vercel.join(sub), ext) {
                out.push((api, path));
            }
        }
    }
    out.push((
        Api::Anthropic,
        dir.join("responses/sse/anthropic-sdk-tool-use.sse"),
    ));
    out.push((
        Api::OpenaiChat,
        dir.join("responses/sse/openai-chat-tool-calls.sse"),
    ));
    out
}

/// A recorded stream as the server-sent events the API sends.
pub fn sse_bytes(api: Api, path: &Path) -> Vec<u8> {
    let text = std::fs::read_to_string(path).expect("a recording");
    if path.extension().is_some_and(|e| e == "sse") {
        return text.into_bytes();
    }
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if api == Api::Anthropic {
            let kind = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v.get("type")?.as_str().map(str::to_owned))
                .unwrap_or_default();
            out.push_str(&format!("event: {kind}\n"));
        }
        out.push_str(&format!("data: {line}\n\n"));
    }
    if api == Api::OpenaiChat {
        out.push_str("data: [DONE]\n\n");
    }
    out.into_bytes()
}

/// `bytes` cut at pseudo-random places (seeded, so a failure repeats).
pub fn random_chunks(bytes: &[u8], seed: u64) -> Vec<Bytes> {
    let mut state = seed | 1;
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let n = (1 + (state % 300) as usize).min(rest.len());
        out.push(Bytes::copy_from_slice(&rest[..n]));
        rest = &rest[n..];
    }
    out
}

/// What the stream reader makes of `bytes` in one piece.
/// What the stream reader makes of `bytes` in one piece: its events, and its
/// message or the index of the event it failed at.
fn read_whole(
    api: Api,
    bytes: &[u8],
) -> (Vec<StreamEvent>, Result<AssistantMessage, Option<usize>>) {
    let mut reader = StreamReader::new(api);
    let mut events = Vec::new();
    let fed = reader.feed(bytes).collect::<Vec<_>>();
    for event in fed.into_iter().chain(reader.end().collect::<Vec<_>>()) {
        match event {
            Ok(e) => events.push(e),
            Err(e) => return (events, Err(e.event())),
        }
    }
    let finished = reader.finish().map(|(m, _)| m).map_err(|e| e.event());
    (events, finished)
}

fn timeless(mut message: AssistantMessage) -> AssistantMessage {
    message.timestamp = 0;
    message
}

#[tokio::test]
async fn every_recording_replayed_over_loopback_gives_the_decoders_message() {
    let dir = require_conformance!();
    let mut checked = 0;
    for (seed, (api, path)) in recordings(&dir).into_iter().enumerate() {
        let name = common::file_name(&path);
        if name.ends_with(".json") {
            let body = std::fs::read_to_string(&path).expect("a body");
            let expected = api.decode_response(&body);
            let server = Server::start(vec![Canned::body(200, body.clone())]).await;
            let got = client(api, &server.url(), Retry::none())
                .complete(&request(api))
                .await;
            match (expected, got) {
                (Ok((message, _)), Ok(reply)) => {
                    assert_eq!(timeless(reply.message), timeless(message), "{name}");
                }
                (Err(expected), Err(got)) => {
                    assert!(
                        got.to_string().contains(&expected.to_string()),
                        "{name}: {got}"
                    );
                }
                (expected, got) => panic!("{name}: decoder {expected:?}, client {got:?}"),
            }
        } else {
            let bytes = sse_bytes(api, &path);
            let (expected_events, expected) = read_whole(api, &bytes);
            let server =
                Server::start(vec![Canned::sse(random_chunks(&bytes, seed as u64 + 7))]).await;
            let (events, got) =
                drain(&client(api, &server.url(), Retry::none()), &request(api)).await;
            match (expected, got) {
                (Ok(message), Ok(reply)) => {
                    assert_eq!(timeless(reply.message), timeless(message), "{name}");
                    assert_eq!(events, expected_events, "{name}");
                }
                // An error the provider put in the stream ends it in `Err`,
                // with what streamed before it.
                (Ok(message), Err(got @ ClientError::Stream { .. }))
                    if message.stop_reason == StopReason::Error =>
                {
                    let partial = got.partial().expect("the message so far");
                    assert_eq!(partial.stop_reason, StopReason::Error, "{name}");
                    assert!(
                        message.text_content().starts_with(&partial.text_content()),
                        "{name}"
                    );
                    assert!(expected_events.starts_with(&events), "{name}");
                    assert!(
                        events.iter().any(|e| matches!(e, StreamEvent::Error { .. })
                            || matches!(
                                e,
                                StreamEvent::Done {
                                    stop_reason: StopReason::Error
                                }
                            )),
                        "{name}: {events:?}"
                    );
                    let api_error = got.api_error().expect("the provider's error");
                    assert!(!api_error.message.is_empty(), "{name}");
                }
                (Err(expected), Err(got)) => {
                    assert_eq!(got.event(), expected, "{name}: {got}");
                    assert!(got.partial().is_some(), "{name}");
                    assert_eq!(events, expected_events, "{name}");
                }
                (expected, got) => panic!("{name}: decoder {expected:?}, client {got:?}"),
            }
            let sent = &server.received()[0];
            match api {
                Api::Gemini => assert!(sent.path.ends_with(":streamGenerateContent?alt=sse")),
                _ => assert_eq!(sent.body["stream"], true, "{name}"),
            }
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked} recordings");
}
