//! [`ThresholdCompactor`]: compacts when the context nears the model's
//! window, with the session module's helpers (pi's `shouldCompact`).

use futures_util::StreamExt;

use super::compact::{CompactFuture, Compacted, Compactor};
use super::error::AgentError;
use super::model::Model;
use crate::http::{ClientError, StreamItem};
use crate::providers::Request;
use crate::session::{CompactionPolicy, SummaryPart};
use crate::{Session, Usage};

/// A [`Compactor`] that compacts when the context's tokens pass the window
/// less a reserve ([`CompactionPolicy::should_compact`]), summarising all
/// but the most recent messages ([`CompactionPolicy::plan`]) with the
/// agent's own model, as pi does by default: pi's policy, its prompts, its
/// split-turn request and its file lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThresholdCompactor {
    model: String,
    window: u64,
    reserve: u64,
    keep_recent: u64,
    policy: CompactionPolicy,
}

impl ThresholdCompactor {
    /// Compacts for a model `model` with a context window of `window`
    /// tokens, with pi's defaults: its policy, 16,384 tokens kept in
    /// reserve (the summary may use 80% of them, a split turn's 50%), the
    /// last 20,000 tokens kept as they are.
    pub fn new(model: impl Into<String>, window: u64) -> Self {
        Self {
            model: model.into(),
            window,
            reserve: 16_384,
            keep_recent: 20_000,
            policy: CompactionPolicy::Pi,
        }
    }

    /// The same compactor keeping `reserve` tokens free and the last
    /// `keep_recent` tokens as they are.
    #[must_use]
    pub fn with_limits(mut self, reserve: u64, keep_recent: u64) -> Self {
        self.reserve = reserve;
        self.keep_recent = keep_recent;
        self
    }

    /// The same compactor cutting by `policy`.
    #[must_use]
    pub fn with_policy(mut self, policy: CompactionPolicy) -> Self {
        self.policy = policy;
        self
    }
}

impl Compactor for ThresholdCompactor {
    fn compact<'a>(&'a self, session: &'a Session, model: &'a dyn Model) -> CompactFuture<'a> {
        Box::pin(async move {
            let plan = {
                let context = session.context(None)?;
                if !self
                    .policy
                    .should_compact(&context.messages, self.window, self.reserve)
                {
                    return Ok(None);
                }
                self.policy
                    .plan(session, None, self.keep_recent)
                    .map_err(|e| AgentError::Session(Box::new(e)))?
            };
            let Some(plan) = plan else { return Ok(None) };
            let reserve = u32::try_from(self.reserve).unwrap_or(u32::MAX);
            let mut usage = Usage::default();
            let (mut history, mut prefix) = (None, None);
            for (part, request) in plan.requests(&self.model, reserve) {
                let (text, used) = summarise(model, &request).await?;
                usage += used;
                match part {
                    SummaryPart::History => history = Some(text),
                    SummaryPart::TurnPrefix => prefix = Some(text),
                }
            }
            let summary = plan.summary_text(history.as_deref(), prefix.as_deref());
            Ok(Some(Compacted::from_plan(plan, summary, usage)))
        })
    }
}

/// One summariser request, streamed: the reply's text blocks joined by a
/// newline (as pi joins them), and its usage.
async fn summarise(
    model: &dyn Model,
    request: &Request<'_>,
) -> Result<(String, Usage), AgentError> {
    let mut stream = model.stream(request).await?;
    while let Some(item) = stream.next().await {
        if let StreamItem::Reply(reply) = item? {
            return Ok((reply.message.text_joined("\n"), reply.message.usage));
        }
    }
    Err(AgentError::Model(ClientError::Endpoint(
        "the summary's stream ended without its reply".to_owned(),
    )))
}
