//! A streamed reply, live: a server on loopback sends a recorded Anthropic
//! stream over real HTTP (chunked, in pieces that cut through lines and
//! characters); `agentmsg::http::Client` sends the request, prints each delta
//! as it arrives, and the reply is appended to a session file. Runs offline.
//!
//! Run with `cargo run --features http --example stream`.

use std::io::Write as _;

use std::sync::{Arc, Mutex};

use agentmsg::http::{ApiKey, Client, Endpoint, StreamItem};
use agentmsg::providers::{Effort, Reasoning, Request, StreamEvent, ToolSpec};
use agentmsg::transcript::read_transcript;
use agentmsg::{AgentMessage, JsonlWriter, Message, StopReason};
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// A reply as Anthropic streams it: thinking, text, then a tool call.
const RECORDED: &str = concat!(
    "event: message_start\r\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"usage\":{\"input_tokens\":412,\"output_tokens\":1}}}\r\n\r\n",
    ": keep-alive\r\n\r\n",
    "event: content_block_start\r\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\r\n\r\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"The user wants the weather in Zürich; \"}}\r\n\r\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"I should call the tool.\"}}\r\n\r\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCkgIARABGAIiQA==\"}}\r\n\r\n",
    "data: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n",
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me check \"}}\r\n\r\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"the weather in Zürich ☀️.\"}}\r\n\r\n",
    "data: {\"type\":\"content_block_stop\",\"index\":1}\r\n\r\n",
    "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"weather\",\"input\":{}}}\r\n\r\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Zü\"}}\r\n\r\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"rich\\\", \\\"unit\\\": \\\"C\\\"}\"}}\r\n\r\n",
    "data: {\"type\":\"content_block_stop\",\"index\":2}\r\n\r\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":87}}\r\n\r\n",
    "data: {\"type\":\"message_stop\"}\r\n\r\n",
);

/// Serves every request with the recorded stream, in 13-byte pieces, on a
/// real HTTP server (hyper) on loopback; returns its address and the bodies it
/// received.
async fn serve() -> std::io::Result<(std::net::SocketAddr, Arc<Mutex<Vec<serde_json::Value>>>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let received = Arc::new(Mutex::new(Vec::new()));
    let bodies = received.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let bodies = bodies.clone();
            let service = service_fn(move |request: hyper::Request<Incoming>| {
                let bodies = bodies.clone();
                async move {
                    let body = request
                        .into_body()
                        .collect()
                        .await
                        .map_err(std::io::Error::other)?
                        .to_bytes();
                    let json = serde_json::from_slice(&body).unwrap_or_default();
                    bodies.lock().map(|mut b| b.push(json)).ok();
                    let pieces: Vec<Result<Frame<Bytes>, std::io::Error>> = RECORDED
                        .as_bytes()
                        .chunks(13)
                        .map(|piece| Ok(Frame::data(Bytes::copy_from_slice(piece))))
                        .collect();
                    let response = hyper::Response::builder()
                        .header("content-type", "text/event-stream")
                        .header("request-id", "req_offline")
                        .body(StreamBody::new(futures_util::stream::iter(pieces)))
                        .map_err(std::io::Error::other)?;
                    Ok::<_, std::io::Error>(response)
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    Ok((addr, received))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (addr, received) = serve().await?;

    // The request, with options; the client encodes it as Anthropic takes it,
    // asking for a stream.
    let question = Message::user("What's the weather in Zürich?");
    let request = Request::new("claude-sonnet-4-5", vec![question.clone()])
        .with_tools(vec![ToolSpec::new(
            "weather",
            "Current weather",
            serde_json::json!({"type": "object", "properties": {"city": {"type": "string"},
                "unit": {"type": "string"}}, "required": ["city"]}),
        )])
        .with_reasoning(Reasoning::Effort(Effort::Low))
        .with_max_tokens(2048);
    let endpoint = Endpoint::anthropic()
        .with_base_url(&format!("http://{addr}/v1"))
        .with_key(ApiKey::new("offline"));
    let client = Client::new(endpoint)?;

    let mut stream = client.stream(&request).await?;
    let mut events = Vec::new();
    let mut reply = None;
    let mut out = std::io::stdout();
    while let Some(item) = stream.next().await {
        match item? {
            StreamItem::Event(event) => {
                match &event {
                    StreamEvent::ThinkingStart { .. } => print!("[thinking] "),
                    StreamEvent::ThinkingDelta { delta, .. }
                    | StreamEvent::TextDelta { delta, .. } => print!("{delta}"),
                    StreamEvent::ThinkingEnd { .. } | StreamEvent::TextEnd { .. } => println!(),
                    StreamEvent::ToolCallStart { name, .. } => print!("[call {name}] "),
                    StreamEvent::ToolCallDelta { delta, .. } => print!("{delta}"),
                    StreamEvent::ToolCallEnd { .. } => println!(),
                    StreamEvent::Done { stop_reason } => println!("[done: {stop_reason:?}]"),
                    _ => {}
                }
                let _ = out.flush();
                events.push(event);
            }
            StreamItem::Reply(whole) => reply = Some(whole),
            _ => {}
        }
    }
    let reply = reply.ok_or("the stream ended without its reply")?;
    for change in &reply.options {
        println!("[option] {change}");
    }
    println!(
        "[request id] {}",
        reply.request_id.as_deref().unwrap_or("-")
    );
    let reply = reply.message;

    // Append the question and the reply to the session.
    let dir = std::env::temp_dir().join(format!("agentmsg-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("session.jsonl");
    let mut writer = JsonlWriter::append(&path)?;
    writer.write(&AgentMessage::from(question))?;
    writer.write(&AgentMessage::from(Message::Assistant(reply.clone())))?;
    writer.flush()?;
    drop(writer);
    let session = read_transcript(std::io::BufReader::new(std::fs::File::open(&path)?))?;
    println!(
        "session: {} ({} lines)",
        path.display(),
        session.messages.len()
    );

    // Self-checks.
    let body = received.lock().map_err(|_| "poisoned")?[0].clone();
    assert_eq!(body["stream"], true, "the encoder asked for a stream");
    assert_eq!(
        body["thinking"]["budget_tokens"], 4096,
        "the request carried its options"
    );
    assert_eq!(
        reply.text_content(),
        "Let me check the weather in Zürich ☀️."
    );
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    let call = reply.tool_calls().next().expect("a tool call");
    assert_eq!(call.arguments.to_value()["city"], "Zürich");
    assert_eq!(reply.usage.output, 87);
    // Priced at its date by the price database with the `prices` feature;
    // without it the cost is unknown (`None`), never zero.
    assert_eq!(
        reply.usage.cost.is_some_and(|c| c.total > 0.0),
        cfg!(feature = "prices"),
        "{:?}",
        reply.usage.cost
    );
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta { .. }))
            .count()
            >= 2
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop_reason: StopReason::ToolUse
        })
    );
    assert_eq!(session.messages.len(), 2);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
