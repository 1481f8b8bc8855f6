//! A `Session` over every store backend (`StoredSession`): each change is in
//! the store before it returns, a reopened session gives the same context, and
//! two writers of one session never fork it.

use crate::store_fixture;

use agentmsg::custom::CompactionSummary;
use agentmsg::store::{AnyStore, SessionStore, StoreError, StoredSession, StoredSessionError};
use agentmsg::{AgentMessage, AssistantMessage, Message, StopReason, ToolCall};
use store_fixture::Fixture;

/// The texts of a context's messages (a summary by its kind).
fn texts(session: &agentmsg::Session) -> Vec<String> {
    session
        .context(None)
        .unwrap()
        .messages
        .iter()
        .map(|m| match m.as_llm() {
            Some(Message::User(u)) => u.text(),
            Some(Message::Assistant(a)) => a.text_content(),
            Some(Message::ToolResult(r)) => format!("result {}", r.tool_call_id),
            _ => m.kind().to_owned(),
        })
        .collect()
}

async fn persisted_and_reopened(f: &Fixture) {
    let store = &f.store;
    let mut session = StoredSession::create(store, "chat").await.unwrap();
    let hi = session.append(Message::user("hi").into()).await.unwrap();
    let call = ToolCall::new("c1", "read", serde_json::json!({"path": "a"}));
    session
        .append(
            Message::Assistant(
                AssistantMessage::new(vec![call]).with_stop_reason(StopReason::ToolUse),
            )
            .into(),
        )
        .await
        .unwrap();
    session
        .append(Message::tool_result("c1", "read", "data").into())
        .await
        .unwrap();
    let done = session
        .append(Message::assistant("done").into())
        .await
        .unwrap();
    // A branch back to `hi` with a summary of what was left, then an answer.
    session
        .apply(|s| s.branch_with_summary(hi.as_str(), "tried reading a"))
        .await
        .unwrap();
    session
        .append(Message::assistant("another way").into())
        .await
        .unwrap();
    assert_eq!(store.open("chat").await.unwrap().entries, 6);

    let reopened = StoredSession::open(store, "chat").await.unwrap();
    assert_eq!(texts(reopened.session()), texts(session.session()));
    assert_eq!(reopened.session().leaves().len(), 2);
    assert_eq!(
        texts(reopened.session()).len(),
        3,
        "{:?}",
        texts(reopened.session())
    );
    // The other branch is still there, whole.
    let other = reopened.session().context(Some(done.as_str())).unwrap();
    assert_eq!(other.messages.len(), 4);

    // A compaction on the second writer is seen by the first after a reload.
    let mut second = reopened;
    let first_kept = second.session().leaf_id().unwrap().clone();
    second
        .apply(|s| s.compact("the user said hi", first_kept.as_str(), 1234))
        .await
        .unwrap();
    session.reload().await.unwrap();
    let context = session.session().context(None).unwrap();
    assert!(
        context.messages[0]
            .downcast_ref::<CompactionSummary>()
            .is_some(),
        "{:?}",
        context.messages
    );
}

async fn two_writers_never_fork(f: &Fixture) {
    let store = &f.store;
    let mut a = StoredSession::create(store, "shared").await.unwrap();
    a.append(Message::user("first").into()).await.unwrap();
    let other = f.reopen.open().await;
    let mut b = StoredSession::open(&other, "shared").await.unwrap();
    a.append(Message::assistant("from a").into()).await.unwrap();
    // b has not seen a's answer: its append is refused, nothing written.
    let refused = b.append(Message::assistant("from b").into()).await;
    assert!(
        matches!(
            refused,
            Err(StoredSessionError::Store(StoreError::Conflict { .. }))
        ),
        "{refused:?}"
    );
    assert_eq!(store.open("shared").await.unwrap().entries, 2);
    // b was read again: retrying appends after a's answer, on one branch.
    assert_eq!(texts(b.session()), ["first", "from a"]);
    b.append(Message::user("from b").into()).await.unwrap();
    let reread = StoredSession::open(store, "shared").await.unwrap();
    assert_eq!(reread.session().leaves().len(), 1);
    assert_eq!(texts(reread.session()), ["first", "from a", "from b"]);
    let _: &AnyStore = &other;
}

async fn a_refused_change_writes_nothing(f: &Fixture) {
    let store = &f.store;
    let mut session = StoredSession::create(store, "s").await.unwrap();
    session.append(Message::user("hi").into()).await.unwrap();
    let err = session.apply(|s| s.branch("no-such-entry")).await;
    assert!(
        matches!(err, Err(StoredSessionError::Session(_))),
        "{err:?}"
    );
    assert!(matches!(
        StoredSession::open(store, "missing").await,
        Err(StoredSessionError::Store(StoreError::NotFound { .. }))
    ));
    assert!(matches!(
        StoredSession::create(store, "s").await,
        Err(StoredSessionError::Store(StoreError::Exists { .. }))
    ));
    assert_eq!(store.open("s").await.unwrap().entries, 1);
    let _ = AgentMessage::from(Message::user("unused"));
}

suite!(
    persisted_and_reopened,
    two_writers_never_fork,
    a_refused_change_writes_nothing,
);

/// A session that owns an `Arc` of its store is `Send + 'static`: each of two
/// spawned tasks keeps one, and both are in the store afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_over_a_shared_store_live_in_spawned_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(agentmsg::store::JsonlDir::open(dir.path()).unwrap());
    let tasks = ["alice", "bob"].map(|id| {
        let store = std::sync::Arc::clone(&store);
        tokio::spawn(async move {
            let mut session = StoredSession::create(store, id).await?;
            for turn in 0..3 {
                session
                    .append(Message::user(format!("{id} {turn}")).into())
                    .await?;
                session
                    .append(Message::assistant(format!("to {id} {turn}")).into())
                    .await?;
            }
            Ok::<_, StoredSessionError>(session)
        })
    });
    for (task, id) in tasks.into_iter().zip(["alice", "bob"]) {
        let served = task.await.unwrap().unwrap();
        let reopened = StoredSession::open(&*store, id).await.unwrap();
        assert_eq!(texts(reopened.session()), texts(served.session()));
        assert_eq!(texts(reopened.session()).len(), 6);
        assert_eq!(texts(reopened.session())[5], format!("to {id} 2"));
    }
}
