//! Preparing projected messages for one target model.
//!
//! SKELETON: the public shape is fixed here so the provider encoders can be
//! written against it; the rules themselves are implemented by the prepare work.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use crate::message::Message;

/// What to do with thinking that goes to a model other than the one that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThinkingPolicy {
    /// Remove thinking, redacted thinking and signatures (the default).
    #[default]
    Drop,
    /// Turn thinking into plain text; drop signatures and redacted blocks.
    AsText,
}

/// Which tool-call ids a target accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdRule {
    /// Anthropic: `^[a-zA-Z0-9_-]{1,64}$`.
    Anthropic,
    /// OpenAI Chat Completions: at most 40 characters.
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Gemini.
    Gemini,
    /// Any non-empty id.
    Any,
}

/// The model a request goes to, and what it can take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The provider, such as `anthropic`.
    pub provider: String,
    /// The API, such as `anthropic-messages`.
    pub api: String,
    /// The model id.
    pub model: String,
    /// Whether the model reads images.
    pub vision: bool,
    /// Whether tool results may carry images.
    pub tool_result_images: bool,
    /// Which tool-call ids it accepts.
    pub id_rule: IdRule,
    /// What to do with foreign thinking.
    pub thinking: ThinkingPolicy,
}

impl Target {
    /// A target with the defaults of its api.
    pub fn new(provider: impl Into<String>, api: impl Into<String>, model: impl Into<String>) -> Self {
        let api = api.into();
        let (id_rule, tool_result_images) = match api.as_str() {
            "anthropic-messages" => (IdRule::Anthropic, true),
            "openai-completions" => (IdRule::OpenAiChat, false),
            "openai-responses" => (IdRule::OpenAiResponses, false),
            "google-generative-ai" => (IdRule::Gemini, false),
            _ => (IdRule::OpenAiChat, false),
        };
        Self {
            provider: provider.into(),
            api,
            model: model.into(),
            vision: true,
            tool_result_images,
            id_rule,
            thinking: ThinkingPolicy::Drop,
        }
    }

    /// Whether the model reads images.
    #[must_use]
    pub fn vision(mut self, vision: bool) -> Self {
        self.vision = vision;
        self
    }

    /// Whether tool results may carry images.
    #[must_use]
    pub fn tool_result_images(mut self, allowed: bool) -> Self {
        self.tool_result_images = allowed;
        self
    }

    /// Which tool-call ids the target accepts.
    #[must_use]
    pub fn id_rule(mut self, rule: IdRule) -> Self {
        self.id_rule = rule;
        self
    }

    /// What to do with foreign thinking.
    #[must_use]
    pub fn thinking(mut self, policy: ThinkingPolicy) -> Self {
        self.thinking = policy;
        self
    }
}

/// What kind of change was made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeKind {
    /// Thinking, redacted thinking or a signature was removed.
    DroppedThinking,
    /// Thinking became text.
    ThinkingAsText,
    /// A failed (error/aborted) assistant turn was skipped.
    SkippedFailedTurn,
    /// A result was dropped.
    DroppedResult,
    /// A synthetic result was added for an orphaned call.
    SyntheticResult,
    /// Results were reordered to follow their calls.
    ReorderedResult,
    /// A tool-call id was changed.
    MappedId,
    /// An image became a text placeholder.
    ImagePlaceholder,
    /// Images moved out of a tool result into a user message.
    MovedImages,
    /// A block the provider cannot take was dropped or replaced.
    UnsupportedContent,
    /// Consecutive same-role turns were merged.
    MergedTurns,
}

/// One change, with the index of the input message it touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Index of the message in the input.
    pub index: usize,
    /// What was done.
    pub kind: ChangeKind,
    /// A sentence for a person.
    pub detail: String,
}

/// Every change made, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// The changes.
    pub changes: Vec<Change>,
}

/// Maps a target-side tool-call id back to the stored one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdMap {
    to_stored: BTreeMap<String, String>,
}

impl IdMap {
    /// The stored id behind a target-side id; ids that were not changed map to
    /// themselves.
    pub fn stored<'a>(&'a self, target_id: &'a str) -> &'a str {
        self.to_stored.get(target_id).map_or(target_id, String::as_str)
    }
}

/// The messages ready for one target, what was changed, and the id mapping.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The messages.
    pub messages: Vec<Message>,
    /// What was changed.
    pub report: Report,
    /// Target-side ids back to stored ids.
    pub ids: IdMap,
}

/// Prepares `messages` for `target`. SKELETON: returns them unchanged for now.
pub fn prepare<M: Borrow<Message>>(messages: &[M], target: &Target) -> Prepared {
    let _ = target;
    Prepared {
        messages: messages.iter().map(|m| m.borrow().clone()).collect(),
        report: Report::default(),
        ids: IdMap::default(),
    }
}
