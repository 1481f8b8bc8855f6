//! The default projection of a transcript to LLM messages ([`to_llm`]), the trait
//! that lets an application replace it ([`ConvertToLlm`]), and the hook that
//! rewrites the transcript before it is projected ([`TransformContext`]).
//!
//! A custom message's data reaches a model only through its declared projection
//! ([`CustomMessage::to_llm`](crate::CustomMessage::to_llm)); kept (`Unknown`)
//! lines never do.

use std::borrow::Cow;

use crate::envelope::AgentMessage;
use crate::message::Message;

/// The default projection: LLM messages are borrowed (never cloned), each custom
/// message becomes what it declares (nothing for a UI-only one), kept lines are
/// dropped.
///
/// ```
/// # use agentmsg_runtime::{to_llm, AgentMessage, BranchSummary, ExtensionMessage, Message};
/// let transcript = vec![
///     AgentMessage::from(Message::user("hi")),
///     AgentMessage::custom(ExtensionMessage::new("debug", &1).unwrap()),
///     AgentMessage::custom(BranchSummary::new("tried X")),
/// ];
/// let projected = to_llm(&transcript);
/// assert_eq!(projected.len(), 2);
/// assert!(matches!(projected[0], std::borrow::Cow::Borrowed(_)));
/// ```
pub fn to_llm(messages: &[AgentMessage]) -> Vec<Cow<'_, Message>> {
    to_llm_with_report(messages).messages
}

/// The default projection with counts of what it left out.
pub fn to_llm_with_report(messages: &[AgentMessage]) -> LlmProjection<'_> {
    let mut projection = LlmProjection {
        messages: Vec::with_capacity(messages.len()),
        ui_only: 0,
        unknown_dropped: 0,
    };
    for message in messages {
        match message {
            AgentMessage::Llm(m) => projection.messages.push(Cow::Borrowed(&m.message)),
            AgentMessage::Custom(c) => {
                let projected = c.message.project();
                if projected.is_empty() {
                    projection.ui_only += 1;
                }
                projection
                    .messages
                    .extend(projected.into_iter().map(Cow::Owned));
            }
            AgentMessage::Unknown(_) => projection.unknown_dropped += 1,
        }
    }
    projection
}

/// What [`to_llm_with_report`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmProjection<'a> {
    /// The messages a model sees, in order.
    pub messages: Vec<Cow<'a, Message>>,
    /// Custom messages that project to nothing (UI-only).
    pub ui_only: usize,
    /// Kept (`Unknown`) lines, which never reach a model.
    pub unknown_dropped: usize,
}

/// Projects a transcript to the messages of one request. [`DefaultConvert`] is
/// [`to_llm`]; an application can write its own, and any
/// `fn(&[AgentMessage]) -> Vec<Cow<'_, Message>>` is one.
pub trait ConvertToLlm {
    /// The messages a model sees of `messages`.
    fn convert<'a>(&self, messages: &'a [AgentMessage]) -> Vec<Cow<'a, Message>>;
}

/// The default [`ConvertToLlm`]: [`to_llm`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultConvert;

impl ConvertToLlm for DefaultConvert {
    fn convert<'a>(&self, messages: &'a [AgentMessage]) -> Vec<Cow<'a, Message>> {
        to_llm(messages)
    }
}

impl<F> ConvertToLlm for F
where
    F: for<'a> Fn(&'a [AgentMessage]) -> Vec<Cow<'a, Message>>,
{
    fn convert<'a>(&self, messages: &'a [AgentMessage]) -> Vec<Cow<'a, Message>> {
        self(messages)
    }
}

/// Rewrites the transcript before it is projected (pi's `transformContext`):
/// prune old entries, inject context, redact. Return `Cow::Borrowed` to leave it
/// as it is. Any `fn(&[AgentMessage]) -> Cow<'_, [AgentMessage]>` is one (a
/// closure must be written as a `fn` item to get that higher-ranked signature).
pub trait TransformContext {
    /// The transcript the projection sees.
    fn transform<'a>(&self, messages: &'a [AgentMessage]) -> Cow<'a, [AgentMessage]>;
}

/// The [`TransformContext`] that changes nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTransform;

impl TransformContext for NoTransform {
    fn transform<'a>(&self, messages: &'a [AgentMessage]) -> Cow<'a, [AgentMessage]> {
        Cow::Borrowed(messages)
    }
}

impl<F> TransformContext for F
where
    F: for<'a> Fn(&'a [AgentMessage]) -> Cow<'a, [AgentMessage]>,
{
    fn transform<'a>(&self, messages: &'a [AgentMessage]) -> Cow<'a, [AgentMessage]> {
        self(messages)
    }
}

/// The projection run at the request boundary: first the [`TransformContext`],
/// then the [`ConvertToLlm`].
///
/// ```
/// # use std::borrow::Cow;
/// # use agentmsg_runtime::{AgentMessage, Message, Projector};
/// fn last_two(messages: &[AgentMessage]) -> Cow<'_, [AgentMessage]> {
///     Cow::Borrowed(&messages[messages.len().saturating_sub(2)..])
/// }
/// let transcript: Vec<AgentMessage> =
///     ["a", "b", "c"].map(|t| Message::user(t).into()).into();
/// let projected = Projector::new().transform(last_two).project(&transcript);
/// assert_eq!(projected.len(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Projector<T = NoTransform, C = DefaultConvert> {
    transform: T,
    convert: C,
}

impl Projector {
    /// No transform, the default conversion.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<T: TransformContext, C: ConvertToLlm> Projector<T, C> {
    /// The same projector with this transform.
    pub fn transform<T2: TransformContext>(self, transform: T2) -> Projector<T2, C> {
        Projector {
            transform,
            convert: self.convert,
        }
    }

    /// The same projector with this conversion.
    pub fn convert<C2: ConvertToLlm>(self, convert: C2) -> Projector<T, C2> {
        Projector {
            transform: self.transform,
            convert,
        }
    }

    /// Calls `f` with the projected messages, borrowed where the transform and
    /// conversion allow it.
    pub fn with_projected<R>(
        &self,
        messages: &[AgentMessage],
        f: impl FnOnce(&[Cow<'_, Message>]) -> R,
    ) -> R {
        let transformed = self.transform.transform(messages);
        let projected = self.convert.convert(&transformed);
        f(&projected)
    }

    /// The projected messages, owned.
    pub fn project(&self, messages: &[AgentMessage]) -> Vec<Message> {
        self.with_projected(messages, |projected| {
            projected.iter().map(|m| m.clone().into_owned()).collect()
        })
    }
}
