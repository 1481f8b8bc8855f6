//! Compacting with a model (feature `http`): plan, send the plan's
//! request(s) through a [`Client`], record the summary, and keep what the
//! summariser's calls cost in the session.

use serde_json::{json, Value};

use super::{CompactionPlan, CompactionPolicy, SummaryPart};
use crate::http::{Client, ClientError};
use crate::session::{Session, SessionError};
use crate::{AssistantMessage, MessageId};

/// What [`Session::compact_with`] is asked to do.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompactOptions {
    /// The summariser's model.
    pub model: String,
    /// How to cut (default [`CompactionPolicy::Pi`]).
    pub policy: CompactionPolicy,
    /// Keep about this many tokens of the most recent messages (pi's
    /// default: 20,000).
    pub keep_recent_tokens: u64,
    /// The tokens reserved for the answer (pi's default: 16,384); the
    /// history's summary may use 80% of it, a split turn's 50%.
    pub reserve_tokens: u32,
    /// Compact at this entry (the session's leaf when `None`); the
    /// compaction becomes the leaf.
    pub leaf: Option<String>,
}

impl CompactOptions {
    /// Options for summarising with `model`, with pi's defaults.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            policy: CompactionPolicy::Pi,
            keep_recent_tokens: 20_000,
            reserve_tokens: 16_384,
            leaf: None,
        }
    }

    /// The same options with this policy.
    pub fn with_policy(mut self, policy: CompactionPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The same options keeping about `tokens` of the most recent messages.
    pub fn keeping(mut self, tokens: u64) -> Self {
        self.keep_recent_tokens = tokens;
        self
    }
}

/// A compaction made with a model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Compacted {
    /// The compaction's entry.
    pub id: MessageId,
    /// The plan it applied.
    pub plan: CompactionPlan,
    /// The summary recorded.
    pub summary: String,
    /// The summariser's replies, by the request they answer (their usage and
    /// cost are recorded in the compaction's `details.summarizer`).
    pub replies: Vec<(SummaryPart, AssistantMessage)>,
}

/// Why a compaction with a model failed; the session is unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompactError {
    /// The session could not be planned or written.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A request failed.
    #[error("the summariser's {part} request failed: {source}")]
    Client {
        /// Which request.
        part: &'static str,
        /// Why.
        #[source]
        source: ClientError,
    },
    /// The model answered with an error (pi: `Summarization failed`).
    #[error("the summariser's {part} reply is an error: {message}")]
    Failed {
        /// Which request.
        part: &'static str,
        /// The reply's error message.
        message: String,
    },
}

impl SummaryPart {
    fn name(self) -> &'static str {
        match self {
            SummaryPart::History => "history",
            SummaryPart::TurnPrefix => "turnPrefix",
        }
    }
}

impl Session {
    /// Compacts the session with a model, as pi's `compact` does: plans by
    /// `options.policy`, sends the plan's request(s) through `client` (the
    /// history's, then a split turn's), joins each answer's text blocks, records the summary ([`CompactionPlan::summary_text`])
    /// with pi's `details`, and records in those details what each call
    /// cost: `"summarizer": [{"part", "api", "provider", "model", "usage"}]`
    /// (pi reads only `readFiles` and `modifiedFiles` of them). `Ok(None)`
    /// when there is nothing to compact.
    ///
    /// # Errors
    /// [`CompactError`] when the leaf is not in the session, a request
    /// fails, or a reply is an error; the session is then unchanged.
    pub async fn compact_with(
        &mut self,
        client: &Client,
        options: &CompactOptions,
    ) -> Result<Option<Compacted>, CompactError> {
        let leaf = options.leaf.as_deref();
        let Some(plan) = options
            .policy
            .plan(self, leaf, options.keep_recent_tokens)?
        else {
            return Ok(None);
        };
        let requests = plan.requests(&options.model, options.reserve_tokens);
        let mut replies = Vec::new();
        // One after the other (pi sends both at once): the second is small,
        // and a failed first one then costs no second.
        for (part, request) in &requests {
            let reply = client
                .complete(request)
                .await
                .map_err(|source| CompactError::Client {
                    part: part.name(),
                    source,
                })?;
            if reply.message.stop_reason == crate::StopReason::Error {
                return Err(CompactError::Failed {
                    part: part.name(),
                    message: reply
                        .message
                        .error_message
                        .clone()
                        .unwrap_or_else(|| "Unknown error".to_owned()),
                });
            }
            replies.push((*part, reply.message));
        }
        // pi joins a reply's text blocks with a newline.
        let text = |wanted: SummaryPart| {
            replies
                .iter()
                .find(|(p, _)| *p == wanted)
                .map(|(_, m)| m.text_joined("\n"))
        };
        let summary = plan.summary_text(
            text(SummaryPart::History).as_deref(),
            text(SummaryPart::TurnPrefix).as_deref(),
        );
        let calls: Vec<Value> = replies
            .iter()
            .map(|(part, m)| {
                json!({"part": part.name(), "api": m.api, "provider": m.provider,
                       "model": m.model, "usage": m.usage})
            })
            .collect();
        if let Some(leaf) = leaf {
            self.branch(leaf)?;
        }
        let id = self.apply_with_details(&plan, summary.clone(), Some(calls))?;
        Ok(Some(Compacted {
            id,
            plan,
            summary,
            replies,
        }))
    }
}
