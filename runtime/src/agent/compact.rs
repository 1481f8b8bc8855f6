//! [`Compactor`]: the hook through which a run compacts its session at a
//! turn boundary.

use std::future::Future;
use std::pin::Pin;

use super::error::AgentError;
use super::model::Model;
use crate::session::CompactionPlan;
use crate::{MessageId, Session, Usage};

/// A compaction a [`Compactor`] decided on: the loop records it (the model
/// then sees `summary`, then the entries from `first_kept` on) and adds
/// `usage` (the summariser's) to the run's. Made from a plan
/// ([`from_plan`](Self::from_plan)) it is recorded with
/// [`Session::apply_compaction`], so the plan's file lists are carried in
/// pi's `details`; made by hand ([`new`](Self::new)), with
/// [`Session::compact`].
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
    /// The plan the summary was asked for, when there was one.
    pub plan: Option<Box<CompactionPlan>>,
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
            plan: None,
        }
    }

    /// The compaction `plan` asked for, with `summary` as the summariser's
    /// answer merged by [`CompactionPlan::summary_text`].
    pub fn from_plan(plan: CompactionPlan, summary: impl Into<String>, usage: Usage) -> Self {
        Self {
            summary: summary.into(),
            first_kept: plan.first_kept.clone(),
            tokens_before: plan.tokens_before,
            usage,
            plan: Some(Box::new(plan)),
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
/// The session module's helpers make one: [`CompactionPolicy::should_compact`]
/// decides, [`CompactionPolicy::plan`] says what to summarise and gives the
/// summariser's requests, and [`CompactionPlan::summary_text`] merges the
/// replies into the summary ([`ThresholdCompactor`](super::ThresholdCompactor)
/// is that, ready-made).
///
/// [`CompactionPolicy::should_compact`]: crate::session::CompactionPolicy::should_compact
/// [`CompactionPolicy::plan`]: crate::session::CompactionPolicy::plan
pub trait Compactor: Send + Sync {
    /// Decides on the session as it stands at a turn boundary.
    fn compact<'a>(&'a self, session: &'a Session, model: &'a dyn Model) -> CompactFuture<'a>;
}
