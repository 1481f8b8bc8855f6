//! A streamed reply, live: a server on loopback sends a recorded Anthropic
//! stream over real HTTP (chunked, in pieces that cut through lines and
//! characters); the client posts the encoded request with reqwest, frames the
//! bytes with the SSE parser, prints each delta as it arrives, and appends the
//! reply to a session file. Runs offline.
//!
//! Run with `cargo run --example stream`.

use std::io::Write as _;

use agentmsg::providers::{
    anthropic, Effort, Reasoning, Request, SseParser, StreamDecode, StreamEvent, ToolSpec,
};
use agentmsg::{read_transcript, AgentMessage, JsonlWriter, Message, StopReason};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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

/// Serves one request with the recorded stream, as HTTP/1.1 chunked transfer
/// in 13-byte pieces.
async fn serve_once(listener: TcpListener) -> std::io::Result<Vec<u8>> {
    let (mut socket, _) = listener.accept().await?;
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    // Headers, then the body its Content-Length announces.
    let (head_end, length) = loop {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        request.extend_from_slice(&buf[..n]);
        if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length);
        }
    };
    while request.len() < head_end + length {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        request.extend_from_slice(&buf[..n]);
    }
    socket
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n")
        .await?;
    for piece in RECORDED.as_bytes().chunks(13) {
        socket
            .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
            .await?;
        socket.write_all(piece).await?;
        socket.write_all(b"\r\n").await?;
        socket.flush().await?;
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.shutdown().await?;
    Ok(request[head_end..].to_vec())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1/messages", listener.local_addr()?);
    let server = tokio::spawn(serve_once(listener));

    // The request, with options, encoded as Anthropic takes it.
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
    let mut encoded = anthropic::encode_request(&request)?;
    encoded.body["stream"] = true.into();
    for change in &encoded.options {
        println!("[option] {change}");
    }

    let mut response = reqwest::Client::new()
        .post(&url)
        .json(&encoded.body)
        .send()
        .await?
        .error_for_status()?;
    let mut parser = SseParser::new();
    let mut decoder = anthropic::StreamDecoder::new();
    let mut events = Vec::new();
    let mut failure = None;
    let mut chunks = 0;
    let mut out = std::io::stdout();
    let mut show = |told: Vec<StreamEvent>, out: &mut std::io::Stdout| {
        for event in &told {
            match event {
                StreamEvent::ThinkingStart { .. } => print!("[thinking] "),
                StreamEvent::ThinkingDelta { delta, .. } | StreamEvent::TextDelta { delta, .. } => {
                    print!("{delta}")
                }
                StreamEvent::ThinkingEnd { .. } | StreamEvent::TextEnd { .. } => println!(),
                StreamEvent::ToolCallStart { name, .. } => print!("[call {name}] "),
                StreamEvent::ToolCallDelta { delta, .. } => print!("{delta}"),
                StreamEvent::ToolCallEnd { call, .. } => {
                    println!("=> {}", serde_json::Value::Object(call.arguments.clone()))
                }
                StreamEvent::Done { stop_reason } => println!("[done: {stop_reason:?}]"),
                _ => {}
            }
        }
        let _ = out.flush();
        events.extend(told);
    };
    while let Some(bytes) = response.chunk().await? {
        chunks += 1;
        parser.push(&bytes, |e| match decoder.push(e.data) {
            Ok(told) => show(told, &mut out),
            Err(error) => failure = failure.take().or(Some(error)),
        })?;
    }
    parser.finish(|e| match decoder.push(e.data) {
        Ok(told) => show(told, &mut out),
        Err(error) => failure = failure.take().or(Some(error)),
    })?;
    if let Some(error) = failure {
        return Err(error.into());
    }
    let sent = server.await??;
    let reply = decoder.finish()?;

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
    let body: serde_json::Value = serde_json::from_slice(&sent)?;
    assert_eq!(
        body["thinking"]["budget_tokens"], 4096,
        "the request carried its options"
    );
    assert!(chunks > 1, "the reply came in pieces");
    assert_eq!(
        reply.text_content(),
        "Let me check the weather in Zürich ☀️."
    );
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    let call = reply.tool_calls().next().expect("a tool call");
    assert_eq!(call.arguments["city"], "Zürich");
    assert_eq!(reply.usage.output, 87);
    assert!(
        reply.usage.cost.is_some_and(|c| c.total > 0.0),
        "priced from the catalog"
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
