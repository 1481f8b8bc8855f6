//! The HTTP client against a real HTTP server on loopback (never a mock of the
//! client): recorded replies replayed in random chunks, faults, retries,
//! timeouts, secrets; and the stream reader's chunking property.

#[path = "../common/mod.rs"]
mod common;

#[cfg(feature = "bedrock")]
mod bedrock;
mod compaction;
mod compatible;
mod faults;
#[cfg(all(
    feature = "bedrock",
    feature = "vertex",
    feature = "anthropic",
    feature = "gemini"
))]
mod moves;
mod payload;
mod props;
mod redirects;
mod replay;
#[cfg(all(
    feature = "anthropic",
    feature = "openai-chat",
    feature = "openai-responses"
))]
mod sdk_faults;
mod secrets;
mod server;
#[cfg(feature = "tracing")]
mod span_capture;
#[cfg(feature = "tracing")]
mod spans;
mod stream_errors;
mod verdicts;
#[cfg(feature = "vertex")]
mod vertex;

use agentmsg::http::{ApiKey, Client, ClientError, Endpoint, Reply, Retry, StreamItem};
use agentmsg::providers::{Api, Request, StreamEvent};
use agentmsg::Message;
use futures_util::StreamExt;

/// A model id the API's encoder takes.
pub fn model(api: Api) -> &'static str {
    match api {
        Api::OpenaiChat | Api::OpenaiResponses => "gpt-4.1",
        Api::Anthropic => "claude-sonnet-4-5",
        Api::Gemini => "gemini-2.5-flash",
        _ => "model",
    }
}

/// A request for `api`.
pub fn request(api: Api) -> Request<'static> {
    Request::new(model(api), vec![Message::user("Hi")])
}

/// A client of `api` at `base_url`, keyed with `key`.
pub fn client(api: Api, base_url: &str, retry: Retry) -> Client {
    Client::builder(
        Endpoint::for_api(api)
            .with_base_url(base_url)
            .with_key(ApiKey::new("sk-test-key")),
    )
    .retry(retry)
    .build()
    .expect("a client")
}

/// Everything a stream gave: its events, then its reply or its error.
pub async fn drain(
    client: &Client,
    request: &Request<'_>,
) -> (Vec<StreamEvent>, Result<Reply, ClientError>) {
    let mut stream = match client.stream(request).await {
        Ok(stream) => stream,
        Err(e) => return (Vec::new(), Err(e)),
    };
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamItem::Event(event)) => events.push(event),
            Ok(StreamItem::Reply(reply)) => {
                assert!(stream.next().await.is_none(), "nothing after the reply");
                return (events, Ok(*reply));
            }
            Ok(other) => panic!("unexpected {other:?}"),
            Err(e) => {
                assert!(stream.next().await.is_none(), "nothing after an error");
                return (events, Err(e));
            }
        }
    }
    panic!("the stream ended without a reply or an error")
}

/// A client of `endpoint` at `server` with `retry`, for tests under tokio's
/// paused time: there tokio jumps to the next timer whenever it waits on I/O,
/// so no timer but the retry's may run (no connect, idle or pool timeout).
pub fn paused_time_client(endpoint: Endpoint, server: &server::Server, retry: Retry) -> Client {
    Client::builder(
        endpoint
            .with_base_url(&server.url())
            .with_key(ApiKey::new("k")),
    )
    .retry(retry)
    .connect_timeout(None)
    .idle_timeout(None)
    .pool_idle_timeout(None)
    .build()
    .unwrap()
}

/// A short Anthropic stream: `text`, then the end.
pub fn anthropic_sse(text: &str) -> Vec<u8> {
    let events = [
        r#"{"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}"#.to_owned(),
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.to_owned(),
        serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}).to_string(),
        r#"{"type":"content_block_stop","index":0}"#.to_owned(),
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#.to_owned(),
        r#"{"type":"message_stop"}"#.to_owned(),
    ];
    events
        .iter()
        .map(|e| format!("data: {e}\n\n"))
        .collect::<String>()
        .into_bytes()
}

/// `api`'s whole (not streamed) reply with `text` as its text and a usage.
pub fn whole_reply(api: Api, text: &str) -> String {
    let reply = match api {
        Api::Anthropic => serde_json::json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 1}
        }),
        Api::OpenaiChat => serde_json::json!({
            "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
        }),
        Api::OpenaiResponses => serde_json::json!({
            "id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
            "model": "gpt-4.1",
            "output": [{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}
        }),
        Api::Gemini => serde_json::json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
            "modelVersion": "gemini-2.5-flash", "responseId": "r1"
        }),
        other => panic!("no whole reply written for {other}"),
    };
    reply.to_string()
}
