//! The projection of a transcript to LLM messages ([`to_llm`]). What the
//! model sees of a session is chosen first (`Session::context`); an
//! application that projects its own kinds differently writes a function over
//! the transcript and calls `to_llm` for the rest.
//!
//! A custom message's data reaches a model only through its declared projection
//! ([`CustomMessage::to_llm`](crate::CustomMessage::to_llm)); kept (`Unknown`)
//! lines never do.

use std::borrow::{Borrow, Cow};

use crate::message::Message;
use crate::AgentMessage;

/// The default projection: LLM messages are borrowed (never cloned), each custom
/// message becomes what it declares (nothing for a UI-only one), kept lines are
/// dropped.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{to_llm, AgentMessage, Message};
/// # use agentmsg::custom::{BranchSummary, ExtensionMessage};
/// let transcript = vec![
///     AgentMessage::from(Message::user("hi")),
///     AgentMessage::custom(ExtensionMessage::new("debug", &1).unwrap()),
///     AgentMessage::custom(BranchSummary::new("tried X")),
/// ];
/// let projected = to_llm(&transcript);
/// assert_eq!(projected.len(), 2);
/// assert!(matches!(projected[0], std::borrow::Cow::Borrowed(_)));
/// ```
///
/// It takes any slice of messages it can borrow: `&[AgentMessage]`, a
/// [`SessionContext`](crate::session::SessionContext)'s `Cow`s, or `&[&AgentMessage]`.
pub fn to_llm<M: Borrow<AgentMessage>>(messages: &[M]) -> Vec<Cow<'_, Message>> {
    to_llm_with_report(messages).messages
}

/// The default projection with counts of what it left out.
pub fn to_llm_with_report<M: Borrow<AgentMessage>>(messages: &[M]) -> LlmProjection<'_> {
    let mut projection = LlmProjection {
        messages: Vec::with_capacity(messages.len()),
        ui_only: 0,
        unknown_dropped: 0,
    };
    for message in messages {
        match message.borrow() {
            AgentMessage::Llm(m) => projection.messages.push(Cow::Borrowed(&m.message)),
            AgentMessage::Custom(c) => {
                let projected = c.project();
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
