//! [`ThresholdCompactor`]: compacts when the context nears the model's
//! window, with the session module's helpers (pi's `shouldCompact`).

use futures_util::StreamExt;

use super::compact::{CompactFuture, Compacted, Compactor};
use super::model::Model;
use super::run::AgentError;
use crate::http::{ClientError, StreamItem};
use crate::session::{estimate_context_tokens, plan_compaction, should_compact};
use crate::Session;

/// A [`Compactor`] that compacts when the context's tokens
/// (`estimate_context_tokens`) pass the window less a reserve
/// (`should_compact`), summarising all but the most recent messages
/// (`plan_compaction`) with the agent's own model, as pi does by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThresholdCompactor {
    model: String,
    window: u64,
    reserve: u64,
    keep_recent: u64,
    max_tokens: u32,
}

impl ThresholdCompactor {
    /// Compacts for a model `model` with a context window of `window`
    /// tokens, with pi's defaults: 16,384 tokens kept in reserve, the last
    /// 20,000 tokens kept as they are, a summary of at most 8,192 tokens.
    pub fn new(model: impl Into<String>, window: u64) -> Self {
        Self {
            model: model.into(),
            window,
            reserve: 16_384,
            keep_recent: 20_000,
            max_tokens: 8_192,
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
}

impl Compactor for ThresholdCompactor {
    fn compact<'a>(&'a self, session: &'a Session, model: &'a dyn Model) -> CompactFuture<'a> {
        Box::pin(async move {
            let plan = {
                let context = session.context(None)?;
                let tokens = estimate_context_tokens(&context.messages).tokens;
                if !should_compact(tokens, self.window, self.reserve) {
                    return Ok(None);
                }
                plan_compaction(&context, self.keep_recent)
            };
            let Some(plan) = plan else { return Ok(None) };
            let request = plan
                .request(self.model.clone())
                .with_max_tokens(self.max_tokens);
            let mut stream = model.stream(&request).await?;
            while let Some(item) = stream.next().await {
                if let StreamItem::Reply(reply) = item? {
                    let summary = reply.message.text_content();
                    let usage = reply.message.usage;
                    return Ok(Some(Compacted::new(
                        summary,
                        plan.first_kept,
                        plan.tokens_before,
                        usage,
                    )));
                }
            }
            Err(AgentError::Model(ClientError::Endpoint(
                "the summary's stream ended without its reply".to_owned(),
            )))
        })
    }
}
