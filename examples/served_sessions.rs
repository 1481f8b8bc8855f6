//! Two sessions served at once, each by its own spawned task: a
//! `StoredSession` over an `Arc` of the store owns what it needs, so it moves
//! into the task. The model is a stand-in that answers offline.
//!
//! `cargo run --example served_sessions`

use std::sync::Arc;

use agentmsg::providers::{anthropic, Request};
use agentmsg::store::{JsonlDir, StoredSession};
use agentmsg::{Message, Session};

/// What a model would answer, offline: the request is encoded (borrowing the
/// session's context), and the answer is made from its last user message.
fn answer(session: &Session) -> Result<Message, Box<dyn std::error::Error + Send + Sync>> {
    let context = session.context(None)?;
    let request = Request::new("claude-sonnet-4-5", &context).with_max_tokens(256);
    let body = anthropic::encode_request(&request)?.body;
    let turns = body["messages"].as_array().map_or(0, Vec::len);
    let asked = request
        .messages
        .iter()
        .rev()
        .find_map(|m| m.as_user())
        .map(|u| u.text());
    Ok(Message::assistant(format!(
        "({turns} messages sent) you said: {}",
        asked.unwrap_or_default()
    )))
}

async fn serve(
    store: Arc<JsonlDir>,
    id: &'static str,
    questions: &'static [&'static str],
) -> Result<usize, Box<dyn std::error::Error + Send + Sync>> {
    let mut session = StoredSession::create(store, id).await?;
    for question in questions {
        session.append(Message::user(*question).into()).await?;
        let reply = answer(session.session())?;
        println!("[{id}] {question} -> {}", reply.text());
        session.append(reply.into()).await?;
    }
    Ok(session.session().entries().len())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let dir = std::env::temp_dir().join(format!("agentmsg-served-{}", std::process::id()));
    let store = Arc::new(JsonlDir::open(&dir)?);
    let alice = tokio::spawn(serve(
        Arc::clone(&store),
        "alice",
        &["Hi", "What is 2 + 2?"],
    ));
    let bob = tokio::spawn(serve(
        Arc::clone(&store),
        "bob",
        &["Hello", "Name a colour.", "Thanks"],
    ));
    let (alice, bob) = (alice.await??, bob.await??);
    println!(
        "[alice: {alice} entries, bob: {bob} entries, in {}]",
        dir.display()
    );
    // Both are in the store: reopen them from it.
    for id in ["alice", "bob"] {
        let session = StoredSession::open(&*store, id).await?;
        println!(
            "[{id} reopened: {} messages]",
            session.session().context(None)?.messages.len()
        );
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
