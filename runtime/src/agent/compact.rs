//! [`Compactor`]: the hook through which a run compacts its session at a
//! turn boundary.

use std::future::Future;
use std::pin::Pin;

use super::model::Model;
use super::run::AgentError;
use crate::{MessageId, Session, Usage};

/// A compaction a [`Compactor`] decided on: the loop records it with
/// [`Session::compact`] (the model then sees `summary`, then the entries
/// from `first_kept` on) and adds `usage` (the summariser's) to the run's.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Compacted {
    /// The summary of what is left out.
    pub summary: String,
    /// The first entry kept after the summary.
    pub first_kept: MessageId,
    /// The tokens of the context before.
    pub tokens_before: u64,
    /// What the summariser's call cost.
    pub usage: Usage,
}

impl Compacted {
    /// A compaction keeping the entries from `first_kept` on.
    pub fn new(
        summary: impl Into<String>,
        first_kept: MessageId,
        tokens_before: u64,
        usage: Usage,
    ) -> Self {
        Self {
            summary: summary.into(),
            first_kept,
            tokens_before,
            usage,
        }
    }
}

/// The future of [`Compactor::compact`].
pub type CompactFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<Compacted>, AgentError>> + Send + 'a>>;

/// Asked before each request whether and how to compact the session (pi's
/// `shouldCompact` then `compact`): `Ok(None)` to send the context as it
/// is, or the summary to record. It may call `model` (the agent's own) for
/// the summary.
///
/// The session module's helpers make one: `estimate_context_tokens` and
/// `should_compact` decide, `plan_compaction` says what to summarise and
/// gives the summariser's request, the reply is the summary.
pub trait Compactor: Send + Sync {
    /// Decides on the session as it stands at a turn boundary.
    fn compact<'a>(&'a self, session: &'a Session, model: &'a dyn Model) -> CompactFuture<'a>;
}
