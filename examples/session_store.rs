//! Sessions in the embedded store (a directory of transcript files), with two
//! writers appending to one session at once: each names the leaf it expects,
//! and retries from the leaf a conflict reports, so the session stays one
//! chain. The same code runs over SQLite or PostgreSQL: set `STORE` to
//! `sqlite:PATH` or `postgres://…` (with the crate's `sqlite` or `postgres`
//! feature).
//!
//! Run: `cargo run --example session_store [DIR]` (a temporary directory by
//! default; give one to look at the files, e.g. with `agentmsg sessions --store DIR`).

use agentmsg::store::{
    AnyStore, Backend, Cursor, Expect, PageRequest, SessionStore, StoreError, StoredEntry,
};
use agentmsg::{AgentMessage, Message, MessageId};

/// Appends `message` as the next entry, retrying when another writer was first.
async fn append(store: &AnyStore, session: &str, message: Message) -> Result<String, StoreError> {
    let id = MessageId::new();
    let entry = StoredEntry::from_message(&AgentMessage::from(message).with_id(Some(id.clone())))
        .expect("a message encodes");
    let mut leaf = store.open(session).await?.leaf;
    loop {
        match store
            .append(
                session,
                std::slice::from_ref(&entry),
                Expect::leaf(leaf.as_deref()),
            )
            .await
        {
            Ok(appended) => return Ok(appended.leaf.unwrap_or_default()),
            Err(StoreError::Conflict { actual, .. }) => leaf = actual,
            Err(e) => return Err(e),
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), StoreError> {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let backend = match (std::env::var("STORE"), std::env::args().nth(1)) {
        (Ok(address), _) => address.parse::<agentmsg::store::StoreAddress>()?.backend,
        (_, Some(dir)) => Backend::JsonlDir(dir.into()),
        _ => Backend::JsonlDir(temp.path().join("sessions")),
    };
    let store = std::sync::Arc::new(AnyStore::open(&backend).await?);
    let session = format!("demo-{}", std::process::id());
    store.create(&session).await?;

    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (store, session) = (store.clone(), session.clone());
            tokio::spawn(async move {
                for i in 0..50 {
                    append(
                        &store,
                        &session,
                        Message::user(format!("writer {w}, message {i}")),
                    )
                    .await?;
                }
                Ok::<_, StoreError>(())
            })
        })
        .collect();
    for writer in writers {
        writer.await.expect("a writer task")?;
    }

    let loaded = store.load(&session, Cursor::START).await?;
    assert_eq!(loaded.entries.len(), 100);
    assert!(loaded.problems.is_empty() && loaded.torn.is_empty());
    let page = store.list(&PageRequest::default()).await?;
    let info = page
        .sessions
        .iter()
        .find(|s| s.id == session)
        .expect("listed");
    assert_eq!(info.entries, 100);
    assert_eq!(
        info.leaf.as_deref(),
        loaded.entries.last().and_then(StoredEntry::id)
    );
    // Every line is a transcript line agentmsg reads back.
    for entry in &loaded.entries {
        let read =
            agentmsg::transcript::read_transcript(entry.line().as_bytes()).expect("readable");
        assert!(read.messages[0].is_llm());
    }
    println!(
        "session {session}: {} entries, leaf {}",
        info.entries,
        info.leaf.as_deref().unwrap_or("-")
    );
    Ok(())
}
