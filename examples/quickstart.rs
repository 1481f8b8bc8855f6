//! The main job of agentmsg, end to end: an agent's transcript mixes the
//! messages it exchanges with a model and the application's own entries; it is
//! stored as JSON Lines, read back into the same types, projected to what the
//! model may see, prepared for one target model and encoded as that provider's
//! request body.
//!
//! Run with `cargo run --example quickstart`.

use std::fs::File;
use std::io::BufReader;

use agentmsg::providers::{anthropic, Request};
use agentmsg::transcript::read_transcript;
use agentmsg::{
    prepare, to_llm, AgentMessage, AssistantContent, AssistantMessage, ImageContent, JsonlWriter,
    Message, MessageId, StopReason, Target, TextContent, ThinkingContent, ToolCall,
    ToolResultContent, UserContent,
};
use serde::{Deserialize, Serialize};

/// A banner for the UI. It declares no projection, so no model ever sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
struct Notice {
    text: String,
}

/// A request from another agent; the model sees it as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "agentCall", to_llm = user("[Request from {from}]: {request}"))]
struct AgentCall {
    from: String,
    request: String,
}

/// A screenshot the app took; the model sees the caption and the image, not
/// the path on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "screenshot", to_llm = user)]
struct Screenshot {
    #[agent_message(content)]
    caption: TextContent,
    #[agent_message(content)]
    image: ImageContent,
    path: String,
}

/// A 1×1 PNG, standing in for a real screenshot.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. A transcript: LLM messages and the application's own, side by side.
    //    The earlier turns were answered by claude-opus-4-5.
    let opus = |content: Vec<AssistantContent>, stop: StopReason| {
        let reply = AssistantMessage::new(content)
            .with_origin("anthropic-messages", "anthropic", "claude-opus-4-5")
            .with_stop_reason(stop);
        Message::Assistant(reply)
    };
    let read_call = ToolCall::new(
        "toolu_01A",
        "read",
        serde_json::json!({ "path": "src/login.css" }),
    );
    let transcript: Vec<AgentMessage> = vec![
        Notice {
            text: "Session started in ~/shop".into(),
        }
        .into(),
        Message::user("The login button is misaligned on mobile. Can you fix it?").into(),
        Screenshot {
            caption: TextContent::new("Login page at 375px wide"),
            // The MIME type is read from the bytes themselves.
            image: ImageContent::from_base64(PNG)?,
            path: "/tmp/shots/login-375.png".into(),
        }
        .into(),
        opus(
            vec![
                AssistantContent::Thinking(
                    ThinkingContent::new("The margin is probably fixed in px.")
                        .with_signature("EqQBCkYIBxgCKkDx"),
                ),
                AssistantContent::ToolCall(read_call),
            ],
            StopReason::ToolUse,
        )
        .into(),
        Message::tool_result("toolu_01A", "read", ".login button { margin-left: 40px; }").into(),
        AgentCall {
            from: "reviewer".into(),
            request: "Keep the brand color #0a66c2.".into(),
        }
        .into(),
        opus(
            vec![AssistantContent::Text(TextContent::new(
                "I replaced the fixed margin with `margin: 0 auto`.",
            ))],
            StopReason::Stop,
        )
        .into(),
        Notice {
            text: "1 file changed".into(),
        }
        .into(),
        Message::user("Thanks! Now check it in dark mode too.").into(),
    ];
    // Every line gets an id (a UUIDv7), so other entries can point at it.
    let transcript: Vec<AgentMessage> = transcript
        .into_iter()
        .map(|m| m.with_id(Some(MessageId::new())))
        .collect();

    // 2. Store it as JSON Lines in a temporary directory, then read it back.
    let dir = std::env::temp_dir().join(format!("agentmsg-quickstart-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("session.jsonl");
    let mut writer = JsonlWriter::append(&path)?;
    writer.write_all(&transcript)?;
    writer.flush()?;
    drop(writer);
    println!("== stored in {}", path.display());
    for line in std::fs::read_to_string(&path)?.lines() {
        println!("  {}", shorten(line, 110));
    }

    let read = read_transcript(BufReader::new(File::open(&path)?))?;
    std::fs::remove_dir_all(&dir)?;
    if read.messages != transcript || read.torn.is_some() {
        return Err("the transcript did not read back as it was written".into());
    }
    // Custom messages come back as their own types.
    let shot = read.messages[2]
        .downcast_ref::<Screenshot>()
        .ok_or("line 3 is not a Screenshot")?;
    println!(
        "\n== read back {} messages; the screenshot is at {}",
        read.messages.len(),
        shot.path
    );

    // 3. What the model may see: LLM messages as they are (borrowed), custom
    //    messages as they declared; notices are dropped.
    let projected = to_llm(&read.messages);

    // 4. Prepared for one target: claude-sonnet-4-5 did not write the earlier
    //    thinking, so it is not replayed to it.
    let model = "claude-sonnet-4-5";
    let prepared = prepare(
        &projected,
        &Target::new("anthropic", "anthropic-messages", model),
    );
    println!("\n== what {model} will see");
    for message in &prepared.messages {
        println!("  {}", describe(message));
    }
    println!("\n== changed for the target");
    for change in prepared.report.changes.iter() {
        println!("  {change}");
    }

    // 5. The Anthropic Messages request body.
    let request = Request::new(model, prepared.messages)
        .with_system("You are a careful front-end engineer.")
        .with_max_tokens(1024);
    let encoded = anthropic::encode_request(&request)?;
    println!(
        "\n== POST /v1/messages\n{}",
        serde_json::to_string_pretty(&encoded.body)?
    );
    Ok(())
}

/// One line per message: its role and its blocks, shortened.
fn describe(message: &Message) -> String {
    let blocks: Vec<String> = match message {
        Message::System(m) => m.content.iter().map(|t| shorten(&t.text, 70)).collect(),
        Message::User(m) => m
            .content
            .iter()
            .map(|block| match block {
                UserContent::Text(t) => shorten(&t.text, 70),
                UserContent::Image(i) => {
                    format!("[image {}]", i.source.mime_type().unwrap_or("url"))
                }
                other => format!("[{:?}]", other.kind()),
            })
            .collect(),
        Message::Assistant(m) => m
            .content
            .iter()
            .map(|block| match block {
                AssistantContent::Text(t) => shorten(&t.text, 70),
                AssistantContent::Thinking(t) => format!("[thinking] {}", shorten(&t.thinking, 50)),
                AssistantContent::ToolCall(c) => {
                    format!("{}({})", c.name, c.arguments)
                }
                other => format!("[{:?}]", other.kind()),
            })
            .collect(),
        Message::ToolResult(m) => m
            .content
            .iter()
            .map(|block| match block {
                ToolResultContent::Text(t) => {
                    format!("{} → {}", m.tool_call_id, shorten(&t.text, 60))
                }
                ToolResultContent::Image(_) => "[image]".to_owned(),
            })
            .collect(),
    };
    format!("{:<10} {}", message.role().as_str(), blocks.join(" | "))
}

/// `text` on one line, cut to `max` characters.
fn shorten(text: &str, max: usize) -> String {
    let flat = text.replace('\n', "⏎");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}
