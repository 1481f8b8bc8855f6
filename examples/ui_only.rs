//! Messages that live in the transcript but never reach a model: notices,
//! progress markers and untyped extension entries. They are persisted and read
//! back as their types; the projection drops them. A line written by a newer
//! version of the application is kept byte for byte, and never projected either.
//!
//! Run with `cargo run --example ui_only`.

use agentmsg::custom::ExtensionMessage;
use agentmsg::project::to_llm_with_report;
use agentmsg::transcript::{read_transcript, write_jsonl};
use agentmsg::{AgentMessage, Message};
use serde::{Deserialize, Serialize};

/// A banner for the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
struct Notice {
    text: String,
}

/// A progress marker for the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "progress")]
struct Progress {
    step: u32,
    of: u32,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let transcript: Vec<AgentMessage> = vec![
        Notice {
            text: "session resumed".into(),
        }
        .into(),
        Message::user("Rename `foo` to `bar` everywhere.").into(),
        Progress { step: 1, of: 3 }.into(),
        ExtensionMessage::new("debug", &serde_json::json!({ "cacheHit": true }))?.into(),
        Message::assistant("Done: 14 occurrences in 5 files.").into(),
    ];
    let mut bytes = write_jsonl(Vec::new(), &transcript)?;
    // A line from a newer build of the app, with a kind this build does not know.
    let future = r#"{"role":"reaction","emoji":"🎉","on":"0193a4b2"}"#;
    bytes.extend_from_slice(future.as_bytes());
    bytes.push(b'\n');
    println!("== stored\n{}", String::from_utf8_lossy(&bytes));

    let messages = read_transcript(&bytes[..])?.messages;
    for message in &messages {
        if let Some(notice) = message.downcast_ref::<Notice>() {
            println!("[ui] notice: {}", notice.text);
        } else if let Some(progress) = message.downcast_ref::<Progress>() {
            println!("[ui] progress: {}/{}", progress.step, progress.of);
        } else if let Some(unknown) = message.as_unknown() {
            println!("[ui] kept `{}` line: {}", unknown.kind(), unknown.reason());
        }
    }

    let report = to_llm_with_report(&messages);
    println!(
        "\n== the model sees {} messages ({} UI-only entries and {} unknown line dropped)",
        report.messages.len(),
        report.ui_only,
        report.unknown_dropped
    );
    for message in &report.messages {
        println!("{}", serde_json::to_string(&**message)?);
    }

    // Written back, the unknown line is unchanged.
    let again = write_jsonl(Vec::new(), &messages)?;
    assert_eq!(again, bytes);
    println!("\n== written back byte for byte: {} bytes", again.len());
    Ok(())
}
