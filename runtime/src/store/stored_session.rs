//! [`StoredSession`]: a [`Session`] kept in a [`SessionStore`], every change
//! persisted before it returns.

use crate::session::SessionError;
use crate::{AgentMessage, MessageId, Session};

use super::{leaf_after, Cursor, Expect, SessionStore, StoreError, StoredEntry};

/// Why a change to a [`StoredSession`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoredSessionError {
    /// The store failed, or refused the append. On
    /// [`StoreError::Conflict`] (another writer appended first) the session
    /// was read again from the store: retry the change on what is there now.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The session refused the change (an unknown entry, a cycle), or the
    /// stored lines do not read as a session.
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// A [`Session`] kept in a store. It is read whole when opened; each change
/// ([`append`](Self::append), [`apply`](Self::apply)) goes to the store as one
/// atomic append before it returns, and only after the store has it does the
/// session in memory keep it.
///
/// It holds its store by value: a `&S` borrows one (the example below), an
/// `Arc<S>` shares one, so the session is `Send + 'static` and can live in a
/// spawned task (`SessionStore` is implemented for both).
///
/// An append names the leaf the session last saw in the store, so two writers
/// of one session never fork it: the one that comes second gets
/// [`StoreError::Conflict`], its session is read again from the store, and it
/// can retry on what the other wrote.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::store::{JsonlDir, StoredSession};
/// use agentmsg::Message;
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     // JsonlDir's futures never wait on anything: one poll finishes them.
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => v, _ => unreachable!() }
/// # }
/// # let dir = std::env::temp_dir().join(format!("agentmsg-stored-session-doc-{}", std::process::id()));
/// block_on(async {
///     let store = JsonlDir::open(&dir)?;
///     let mut session = StoredSession::create(&store, "demo").await?;
///     let hi = session.append(Message::user("hi").into()).await?;
///     session.append(Message::assistant("hello").into()).await?;
///     // Another process opens the same session and sees both.
///     let again = StoredSession::open(&store, "demo").await?;
///     assert_eq!(again.session().context(None)?.messages.len(), 2);
///     // Branch back to `hi` and answer again: persisted as a child of `hi`.
///     session.apply(|s| s.branch(hi.as_str())).await?;
///     session.append(Message::assistant("hey").into()).await?;
///     let reread = StoredSession::open(&store, "demo").await?;
///     assert_eq!(reread.session().leaves().len(), 2);
///     Ok::<_, agentmsg::store::StoredSessionError>(())
/// })
/// .unwrap();
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct StoredSession<S> {
    store: S,
    id: String,
    session: Session,
    /// The store's leaf as this session last saw it (the id of the last stored
    /// entry that has one).
    stored_leaf: Option<String>,
}

impl<S: SessionStore> StoredSession<S> {
    /// Creates the session `id` in `store`, empty. Fails with
    /// [`StoreError::Exists`] when there is one.
    pub async fn create(store: S, id: &str) -> Result<Self, StoredSessionError> {
        store.create(id).await?;
        Ok(Self {
            store,
            id: id.to_owned(),
            session: Session::new(),
            stored_leaf: None,
        })
    }

    /// Opens the session `id` of `store`: all its entries, read as a
    /// [`Session`]. Fails with [`StoreError::NotFound`].
    pub async fn open(store: S, id: &str) -> Result<Self, StoredSessionError> {
        let (session, stored_leaf) = read(&store, id).await?;
        Ok(Self {
            store,
            id: id.to_owned(),
            session,
            stored_leaf,
        })
    }

    /// The store it is kept in.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The session's id in the store.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session as stored (plus a leaf moved by [`Session::branch`]).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The usage of every reply stored, on every branch
    /// ([`Session::total_usage`]): what the session spent, where the
    /// context's usage is what the next request sends.
    pub fn total_usage(&self) -> crate::Usage {
        self.session.total_usage()
    }

    /// Appends `message` as a child of the current leaf, and persists it.
    pub async fn append(&mut self, message: AgentMessage) -> Result<MessageId, StoredSessionError> {
        self.apply(|session| session.append(message)).await
    }

    /// Applies `change` to the session (an append, a branch with a summary, a
    /// compaction, a label: any [`Session`] operation) and persists the entries
    /// it added, as one append. When the store refuses them the session is
    /// read again from the store and the error returned (if that read fails
    /// too, the entries stay unsaved and the next change sends them again);
    /// when `change` itself fails nothing is written.
    pub async fn apply<T>(
        &mut self,
        change: impl FnOnce(&mut Session) -> Result<T, SessionError>,
    ) -> Result<T, StoredSessionError> {
        let value = change(&mut self.session)?;
        let entries: Vec<StoredEntry> = self
            .session
            .unsaved()
            .iter()
            .map(|entry| StoredEntry::from_line(self.session.line(entry).into_owned()).0)
            .collect();
        if entries.is_empty() {
            return Ok(value);
        }
        let expected = Expect::leaf(self.stored_leaf.as_deref());
        match self.store.append(&self.id, &entries, expected).await {
            Ok(appended) => {
                self.session.mark_saved();
                self.stored_leaf = appended.leaf;
                Ok(value)
            }
            Err(error) => {
                // What the store has is the truth: read it again.
                if let Ok((session, stored_leaf)) = read(&self.store, &self.id).await {
                    self.session = session;
                    self.stored_leaf = stored_leaf;
                }
                Err(error.into())
            }
        }
    }

    /// Reads the session again from the store (what other writers appended
    /// included); a leaf moved by a branch goes back to the stored leaf.
    pub async fn reload(&mut self) -> Result<(), StoredSessionError> {
        let (session, stored_leaf) = read(&self.store, &self.id).await?;
        self.session = session;
        self.stored_leaf = stored_leaf;
        Ok(())
    }
}

/// The session `id` of `store`, and its stored leaf.
async fn read<S: SessionStore>(
    store: &S,
    id: &str,
) -> Result<(Session, Option<String>), StoredSessionError> {
    let loaded = store.load(id, Cursor::START).await?;
    // The leaf of the entries read (not a second query, which another writer
    // could run ahead of).
    let stored_leaf = leaf_after(None, &loaded.entries).map(str::to_owned);
    let lines = loaded
        .entries
        .iter()
        .enumerate()
        .map(|(i, entry)| (i + 1, entry.line().to_owned()));
    let mut session = Session::from_lines(lines)?;
    session.mark_saved();
    Ok((session, stored_leaf))
}
