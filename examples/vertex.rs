//! Claude on Google Vertex AI: the same `Request` as for Anthropic, sent to a
//! Google Cloud project. The client reshapes it the way Vertex takes it: the
//! model goes in the URL (`…/publishers/anthropic/models/{model}:streamRawPredict`),
//! the body loses `model` and gains `anthropic_version: "vertex-2023-10-16"`,
//! and the key is an OAuth access token. The reply streams as Anthropic's
//! server-sent events.
//!
//! With `GOOGLE_APPLICATION_CREDENTIALS` naming a service-account key file,
//! the request goes to Vertex AI in that key's project (or
//! `GOOGLE_CLOUD_PROJECT`), in `GOOGLE_CLOUD_LOCATION` (else `us-east5`),
//! model `AGENTMSG_VERTEX_MODEL` (else Claude Sonnet 4.5), with access
//! tokens the key is exchanged for (cached, refreshed before they expire).
//! Without it the request goes to a server on loopback, which keeps what it
//! received; the run then checks the URL, the body and the reply.
//!
//! Run with `cargo run --features http,vertex --example vertex`.

#[path = "../tests/http/server.rs"]
#[allow(dead_code)]
mod server;

use std::sync::Arc;

use agentmsg::http::{ApiKey, Client, Endpoint, ServiceAccountKey, StreamItem, TokenSource};
use agentmsg::providers::{Request, StreamEvent};
use agentmsg::{Message, StopReason};
use futures_util::StreamExt;

const MODEL: &str = "claude-sonnet-4-5@20250929";

/// What Claude on Vertex streams for a short answer (Anthropic's events).
const RECORDED: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_vrtx_01\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"usage\":{\"input_tokens\":18,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Same Claude, \"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"billed to your Google Cloud project.\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":11}}\n\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n\n",
);

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (endpoint, model, server) = match ServiceAccountKey::from_env()? {
        Some(key) => {
            let project = std::env::var("GOOGLE_CLOUD_PROJECT")
                .ok()
                .or_else(|| key.project_id().map(str::to_owned))
                .ok_or("no project: set GOOGLE_CLOUD_PROJECT")?;
            let location =
                std::env::var("GOOGLE_CLOUD_LOCATION").unwrap_or_else(|_| "us-east5".to_owned());
            let model = std::env::var("AGENTMSG_VERTEX_MODEL").unwrap_or_else(|_| MODEL.to_owned());
            let endpoint = Endpoint::vertex_anthropic(&project, &location)
                .with_token_source(Arc::new(TokenSource::new(key)));
            (endpoint, model, None)
        }
        None => {
            // A loopback server answering with [`RECORDED`] in 17-byte
            // pieces; it keeps each request.
            let server = server::Server::start(vec![server::Canned::sse(
                RECORDED
                    .as_bytes()
                    .chunks(17)
                    .map(bytes::Bytes::copy_from_slice)
                    .collect(),
            )])
            .await;
            let endpoint = Endpoint::vertex_anthropic("my-project", "us-east5")
                .with_base_url(&server.url())
                .with_key(ApiKey::new("ya29.offline-token"));
            (endpoint, MODEL.to_owned(), Some(server))
        }
    };
    let client = Client::new(endpoint)?;
    let request = Request::new(
        model.as_str(),
        vec![Message::user("What changes on Vertex, in one line?")],
    )
    .with_system("Be terse.")
    .with_max_tokens(200);

    let mut stream = client.stream(&request).await?;
    let mut reply = None;
    while let Some(item) = stream.next().await {
        match item? {
            StreamItem::Event(StreamEvent::TextDelta { delta, .. }) => print!("{delta}"),
            StreamItem::Reply(whole) => reply = Some(whole),
            _ => {}
        }
    }
    println!();
    let reply = reply.ok_or("the stream ended without its reply")?.message;
    println!(
        "[{} {}] {:?}, {} in / {} out, cost {:?}",
        reply.provider,
        reply.model,
        reply.stop_reason,
        reply.usage.input,
        reply.usage.output,
        reply.usage.cost.map(|c| c.total)
    );

    // Self-checks, against the loopback server only.
    let Some(server) = server else { return Ok(()) };
    let received = server.received().remove(0);
    let body = &received.body;
    assert_eq!(
        received.path,
        "/models/claude-sonnet-4-5@20250929:streamRawPredict"
    );
    assert_eq!(
        received.header("authorization"),
        Some("Bearer ya29.offline-token")
    );
    assert!(body.get("model").is_none(), "the model is in the URL");
    assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"][0]["text"], "Be terse.");
    assert_eq!(
        reply.text_content(),
        "Same Claude, billed to your Google Cloud project."
    );
    assert_eq!(reply.stop_reason, StopReason::Stop);
    assert_eq!(reply.model, "claude-sonnet-4-5-20250929");
    assert_eq!(
        reply.usage.cost.is_some_and(|c| c.total > 0.0),
        cfg!(feature = "prices")
    );
    Ok(())
}
