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
mod payload;
mod props;
mod redirects;
mod replay;
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
