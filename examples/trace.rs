//! The client's `tracing` spans (feature `tracing`), printed: a loopback
//! server answers once with an overloaded error, then with an Anthropic
//! reply; the request's one span carries the OpenTelemetry GenAI attributes
//! (`gen_ai.request.model`, `gen_ai.usage.input_tokens`…), the retry count
//! and the time to the first chunk. Runs offline. In an application, a
//! `tracing-opentelemetry` layer exports the same span.
//!
//! Run with `cargo run --features http,tracing --example trace`.

#[path = "../tests/http/server.rs"]
#[allow(dead_code)]
mod server;
#[path = "../tests/http/span_capture.rs"]
mod span_capture;

use agentmsg::http::{ApiKey, Client, Endpoint, Retry};
use agentmsg::providers::Request;
use agentmsg::Message;

const REPLY: &str = r#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Bonjour !"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_read_input_tokens":300,"output_tokens":5}}"#;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let capture = span_capture::Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let server = server::Server::start(vec![
        server::Canned::body(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .header("retry-after-ms", "50"),
        server::Canned::body(200, REPLY),
    ])
    .await;
    let client = Client::builder(
        Endpoint::anthropic()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("sk-example")),
    )
    .retry(Retry::with_max_retries(2))
    // Prompts and answers go into the span only when asked for.
    .record_content(true)
    .build()?;
    let request = Request::new("claude-sonnet-4-5", vec![Message::user("Say hi in French")])
        .with_max_tokens(64);
    let reply = client.complete(&request).await?;
    println!("reply: {}\n", reply.message.text_content());
    for span in capture.spans("chat") {
        println!("span `{}`", span.name);
        for (field, value) in &span.fields {
            println!("  {field} = {value}");
        }
    }
    Ok(())
}
