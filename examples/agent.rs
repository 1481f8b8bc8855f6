//! A minimal tool-using agent: a session kept in a store, a streamed reply
//! printed as it arrives, the model's tool calls run and their results
//! appended, until the model stops.
//!
//! With `ANTHROPIC_API_KEY` set it talks to Anthropic. Without it, a server on
//! loopback replays a recorded conversation, so it runs offline:
//! `cargo run --all-features --example agent`.

use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agentmsg::http::{ApiKey, Client, ClientError, Endpoint, StreamItem};
use agentmsg::providers::{Request, StreamEvent, ToolSpec};
use agentmsg::store::{JsonlDir, StoredSession};
use agentmsg::{Message, StopReason, ToolCall};
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

const MODEL: &str = "claude-sonnet-4-5";

/// The tool: counts the words of a text.
fn word_count_tool() -> ToolSpec {
    ToolSpec::new(
        "word_count",
        "Counts the words in a text",
        serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}},
            "required": ["text"]}),
    )
}

/// Runs one tool call: the result's text, and whether it is an error.
fn run_tool(call: &ToolCall) -> (String, bool) {
    match (call.name.as_str(), call.arguments.get("text")) {
        ("word_count", Some(serde_json::Value::String(text))) => {
            (text.split_whitespace().count().to_string(), false)
        }
        ("word_count", _) => ("`text` must be a string".to_owned(), true),
        (other, _) => (format!("no tool named `{other}`"), true),
    }
}

/// The recorded conversation: the model calls the tool, then answers.
const TURNS: [&str; 2] = [
    concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"usage\":{\"input_tokens\":610,\"output_tokens\":1}}}\n\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"I'll count \"}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"the words.\"}}\n\n",
        "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01A\",\"name\":\"word_count\",\"input\":{}}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"text\\\": \\\"the quick \"}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"brown fox jumps\\\"}\"}}\n\n",
        "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":64}}\n\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    ),
    concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_02\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"usage\":{\"input_tokens\":700,\"output_tokens\":1}}}\n\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"The text has \"}}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"5 words.\"}}\n\n",
        "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    ),
];

/// A real HTTP server on loopback that answers the n-th request with the
/// n-th recorded turn, in small pieces. Returns its base URL.
async fn replay_server() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    let served = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let served = served.clone();
            let service = service_fn(move |request: hyper::Request<Incoming>| {
                let served = served.clone();
                async move {
                    request
                        .into_body()
                        .collect()
                        .await
                        .map_err(std::io::Error::other)?;
                    let turn = TURNS[served.fetch_add(1, Ordering::SeqCst).min(TURNS.len() - 1)];
                    let pieces: Vec<Result<Frame<Bytes>, std::io::Error>> = turn
                        .as_bytes()
                        .chunks(24)
                        .map(|piece| Ok(Frame::data(Bytes::copy_from_slice(piece))))
                        .collect();
                    let response = hyper::Response::builder()
                        .header("content-type", "text/event-stream")
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
    Ok(url)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = match Client::anthropic() {
        Ok(client) => client,
        Err(ClientError::MissingKey { .. }) => {
            println!("[no ANTHROPIC_API_KEY: replaying a recorded conversation on loopback]");
            let endpoint = Endpoint::anthropic()
                .with_base_url(&replay_server().await?)
                .with_key(ApiKey::new("offline"));
            Client::new(endpoint)?
        }
        Err(e) => return Err(e.into()),
    };

    let dir = std::env::temp_dir().join(format!("agentmsg-agent-{}", std::process::id()));
    let store = JsonlDir::open(&dir)?;
    let mut session = StoredSession::create(&store, "agent").await?;
    session
        .append(Message::user("How many words are in \"the quick brown fox jumps\"?").into())
        .await?;

    for _turn in 0..8 {
        let context = session.session().context(None)?;
        let request = Request::new(MODEL, &context)
            .with_system("Use the tools you have.")
            .with_tools(vec![word_count_tool()])
            .with_max_tokens(1024);

        let mut stream = client.stream(&request).await?;
        let mut reply = None;
        while let Some(item) = stream.next().await {
            match item? {
                StreamItem::Event(StreamEvent::TextDelta { delta, .. }) => print!("{delta}"),
                StreamItem::Event(StreamEvent::ToolCallStart { name, .. }) => {
                    print!("\n[calling {name}] ")
                }
                StreamItem::Event(StreamEvent::ToolCallDelta { delta, .. }) => print!("{delta}"),
                StreamItem::Event(StreamEvent::Done { .. }) => println!(),
                StreamItem::Reply(whole) => reply = Some(whole.message),
                _ => {}
            }
            std::io::stdout().flush()?;
        }
        let reply = reply.ok_or("the stream ended without its reply")?;
        let calls: Vec<ToolCall> = reply.tool_calls().cloned().collect();
        let stop = reply.stop_reason;
        session.append(Message::Assistant(reply).into()).await?;
        if stop != StopReason::ToolUse || calls.is_empty() {
            break;
        }
        for call in &calls {
            let (text, is_error) = run_tool(call);
            println!("[{} -> {text}]", call.name);
            let mut result = Message::tool_result(&call.id, &call.name, text);
            if let Message::ToolResult(result) = &mut result {
                result.is_error = is_error;
            }
            session.append(result.into()).await?;
        }
    }

    let context = session.session().context(None)?;
    println!(
        "[session {} in {}: {} messages]",
        session.id(),
        dir.display(),
        context.messages.len()
    );
    // Tokens and cost of every reply the session holds (a compaction's
    // summarized replies and other branches too: the context holds only what
    // the next request sends), each reply priced at its own date (with the
    // `prices` feature; without it, or for a model the price database does
    // not know, the cost says unknown rather than $0).
    let summary = session.session().total_stats();
    println!("{summary}");
    Ok(())
}
