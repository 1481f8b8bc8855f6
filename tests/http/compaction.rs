//! `Session::compact_with` against a real server on loopback: the plan's two
//! requests (a split turn), pi's prompts and output limits, the summary
//! recorded as pi merges it, and the summariser's usage kept in the
//! compaction's details; a failed call leaves the session unchanged.

use agentmsg::http::Retry;
use agentmsg::providers::Api;
use agentmsg::session::{CompactError, CompactOptions, CompactionPolicy, PI_SUMMARY_SYSTEM_PROMPT};
use agentmsg::Session;
use serde_json::{json, Value};

use crate::client;
use crate::common::pi_chain;
use crate::server::{Canned, Server};

/// A pi session whose budget of 700 tokens keeps only the end of its last
/// turn, which wrote `c.rs`, after a turn that read `a.rs`.
fn session() -> Session {
    let usage = json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let assistant = |content: Value| {
        json!({"role": "assistant", "content": content, "api": "openai-completions",
               "provider": "openai", "model": "gpt-4.1", "usage": usage,
               "stopReason": "toolUse", "timestamp": 1})
    };
    let messages = [
        json!({"role": "user", "content": "Read a.rs", "timestamp": 1}),
        assistant(
            json!([{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.rs"}}]),
        ),
        json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read",
               "content": [{"type": "text", "text": "fn a() {}"}], "isError": false, "timestamp": 1}),
        json!({"role": "user", "content": "z".repeat(4000), "timestamp": 1}),
        assistant(
            json!([{"type": "toolCall", "id": "c2", "name": "write", "arguments": {"path": "c.rs"}}]),
        ),
        json!({"role": "toolResult", "toolCallId": "c2", "toolName": "write",
               "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 1}),
        assistant(json!([{"type": "text", "text": "w".repeat(3000)}])),
    ];
    Session::read((pi_chain(messages).join("\n") + "\n").as_bytes()).unwrap()
}

fn completion(text: &str, prompt: u64, completion: u64) -> Canned {
    Canned::body(
        200,
        json!({"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop"}],
               "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                         "total_tokens": prompt + completion}})
        .to_string(),
    )
}

/// The text of the body's message of `role`.
fn text_of(body: &Value, role: &str) -> String {
    let message = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == role)
        .unwrap_or_else(|| panic!("a {role} message in {body}"));
    match &message["content"] {
        Value::String(text) => text.clone(),
        blocks => blocks
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["text"].as_str().unwrap_or_default())
            .collect(),
    }
}

#[tokio::test]
async fn a_split_turn_is_summarised_in_two_calls_and_their_usage_is_kept() {
    let server = Server::start(vec![
        completion("History summary.", 1000, 50),
        completion("Prefix summary.", 300, 20),
    ])
    .await;
    let client = client(Api::OpenaiChat, &server.url(), Retry::none());
    let mut session = session();
    let plan = CompactionPolicy::Pi
        .plan(&session, None, 700)
        .unwrap()
        .unwrap();
    assert!(plan.turn_prefix_prompt().is_some());
    let compacted = session
        .compact_with(&client, &CompactOptions::new("gpt-4.1").keeping(700))
        .await
        .unwrap()
        .expect("a compaction");
    assert_eq!(compacted.plan, plan);

    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        text_of(&received[0].body, "system"),
        PI_SUMMARY_SYSTEM_PROMPT
    );
    assert_eq!(text_of(&received[0].body, "user"), plan.prompt().unwrap());
    assert_eq!(
        text_of(&received[1].body, "user"),
        plan.turn_prefix_prompt().unwrap()
    );
    let limit = |body: &Value| {
        body.get("max_completion_tokens")
            .or_else(|| body.get("max_tokens"))
            .cloned()
    };
    assert_eq!(limit(&received[0].body), Some(json!(13_107)));
    assert_eq!(limit(&received[1].body), Some(json!(8_192)));

    let line = session
        .line(session.entry(compacted.id.as_str()).unwrap())
        .into_owned();
    let entry: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        entry["summary"],
        "History summary.\n\n---\n\n**Turn Context (split turn):**\n\nPrefix summary.\n\n<read-files>\na.rs\n</read-files>\n\n<modified-files>\nc.rs\n</modified-files>"
    );
    let details = &entry["details"];
    assert_eq!(details["readFiles"], json!(["a.rs"]));
    assert_eq!(details["modifiedFiles"], json!(["c.rs"]));
    let calls = details["summarizer"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["part"], "history");
    assert_eq!(calls[0]["model"], "gpt-4.1");
    assert_eq!(
        (
            calls[0]["usage"]["input"].clone(),
            calls[0]["usage"]["output"].clone()
        ),
        (json!(1000), json!(50))
    );
    assert_eq!(calls[1]["part"], "turnPrefix");
    assert_eq!(
        (
            calls[1]["usage"]["input"].clone(),
            calls[1]["usage"]["output"].clone()
        ),
        (json!(300), json!(20))
    );
    // The model sees the summary, then the kept end of the turn.
    let context = session.context(None).unwrap();
    assert_eq!(context.messages.len(), 2);

    // Nothing left to compact: no request.
    let again = session
        .compact_with(&client, &CompactOptions::new("gpt-4.1").keeping(700))
        .await
        .unwrap();
    assert!(again.is_none());
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn a_failed_call_leaves_the_session_unchanged() {
    let server = Server::start(vec![Canned::body(
        400,
        r#"{"error":{"message":"bad model","type":"invalid_request_error"}}"#,
    )])
    .await;
    let client = client(Api::OpenaiChat, &server.url(), Retry::none());
    let mut session = session();
    let before = session.to_bytes();
    let error = session
        .compact_with(&client, &CompactOptions::new("gpt-4.1").keeping(700))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            CompactError::Client {
                part: "history",
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("bad model"), "{error}");
    assert_eq!(session.to_bytes(), before);
    assert_eq!(server.received().len(), 1);
}

/// A reply that is an error (a 200 whose body is an error object, as a
/// proxy may answer) fails the compaction as pi's `Summarization failed`
/// does: no summary of an error is recorded, and the session is unchanged.
#[tokio::test]
async fn an_error_reply_leaves_the_session_unchanged() {
    let server = Server::start(vec![Canned::body(
        200,
        r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
    )])
    .await;
    let client = client(Api::OpenaiChat, &server.url(), Retry::none());
    let mut session = session();
    let before = session.to_bytes();
    let error = session
        .compact_with(&client, &CompactOptions::new("gpt-4.1").keeping(700))
        .await
        .unwrap_err();
    match &error {
        CompactError::Failed { part, message } => {
            assert_eq!(*part, "history");
            assert!(message.contains("overloaded"), "{error}");
        }
        other => panic!("not a failed reply: {other}"),
    }
    assert_eq!(session.to_bytes(), before);
    assert_eq!(server.received().len(), 1);
}
