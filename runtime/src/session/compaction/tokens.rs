//! How many tokens a context holds: the last reply's reported usage plus an
//! estimate of what follows it.
//!
//! Both policies count characters as pi does, in UTF-16 units over four
//! (pi's heuristic, measured on its JavaScript strings: one unit for the
//! same text in both, so their estimates of text agree). They differ in
//! what they count:
//! - [`CompactionPolicy::Agentmsg`](super::CompactionPolicy::Agentmsg)
//!   counts what the model is sent ([`Message::estimated_tokens`] of each
//!   message's projection: a summary with its framing, every image, audio
//!   clip and document as 1,200 tokens wherever it is), and reads a reply
//!   whose usage is all zeros as one a provider did not count;
//! - [`CompactionPolicy::Pi`](super::CompactionPolicy::Pi) counts as pi's
//!   `estimateTokens` does, message kind by kind (a user's image as 0, a
//!   tool result's as 1,200, a summary without its framing, a `!!` command
//!   the model is not sent as its text), and takes all-zero usage as pi
//!   0.73.1 does: as a context of 0 tokens.

use std::borrow::Borrow;

use super::serialize::js_stringify;
use crate::custom::InjectedMessage;
use crate::custom::{BashExecution, BranchSummary, CompactionSummary, InjectedContent};
use crate::message::utf16_len;
use crate::{AgentMessage, AssistantContent, Message, ToolResultContent, UserContent};

/// How many tokens a context holds, as pi's `estimateContextTokens` counts
/// them: the last assistant reply's real usage (its `totalTokens`, or input,
/// output and cache tokens added up; failed and aborted replies skipped), plus
/// an estimate of every message after it; every message estimated when no
/// reply reports usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextTokens {
    /// The total: `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// What the last reply's usage reports.
    pub usage_tokens: u64,
    /// The estimate of the messages after it.
    pub trailing_tokens: u64,
    /// The index of that reply, `None` when no reply reports usage.
    pub last_usage_index: Option<usize>,
}

/// The tokens of a context by
/// [`CompactionPolicy::Agentmsg`](super::CompactionPolicy::Agentmsg)'s rule
/// (see [`ContextTokens`]; [`CompactionPolicy::context_tokens`](super::CompactionPolicy::context_tokens)
/// for either rule). A reply whose usage is all zeros is skipped: pi 0.73.1
/// writes such usage too (for a provider that reported none) and then counts
/// the whole context as 0 tokens before the messages after it, which would
/// hide a full context; the estimate of the messages is closer.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{AgentMessage, AssistantMessage, Message, TextContent, Usage};
/// # use agentmsg::session::estimate_context_tokens;
/// let reply = AssistantMessage::new([TextContent::new("Hello")]).with_usage(Usage::new(370, 7));
/// let messages: Vec<AgentMessage> = vec![
///     Message::user("Hi").into(),
///     Message::Assistant(reply).into(),
///     Message::user("12345678").into(),
/// ];
/// let tokens = estimate_context_tokens(&messages);
/// assert_eq!(tokens.tokens, 377 + 2);
/// assert_eq!(tokens.last_usage_index, Some(1));
/// ```
pub fn estimate_context_tokens<M: Borrow<AgentMessage>>(messages: &[M]) -> ContextTokens {
    context_tokens(messages, false, estimate_tokens)
}

/// pi's `estimateContextTokens`, all-zero usage counted as pi counts it.
pub(super) fn pi_context_tokens<M: Borrow<AgentMessage>>(messages: &[M]) -> ContextTokens {
    context_tokens(messages, true, pi_estimate_tokens)
}

fn context_tokens<M: Borrow<AgentMessage>>(
    messages: &[M],
    zero_counts: bool,
    estimate: fn(&AgentMessage) -> u64,
) -> ContextTokens {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| match m.borrow().as_llm() {
            Some(Message::Assistant(a)) if !a.stop_reason.is_failure() => {
                let u = &a.usage;
                let tokens = u
                    .total_tokens
                    .filter(|&t| t > 0)
                    .unwrap_or(u.input + u.output + u.cache_read + u.cache_write);
                (zero_counts || tokens > 0).then_some((i, tokens))
            }
            _ => None,
        });
    let (start, usage_tokens, last_usage_index) = match last {
        Some((i, tokens)) => (i + 1, tokens, Some(i)),
        None => (0, 0, None),
    };
    let trailing_tokens = messages[start..].iter().map(|m| estimate(m.borrow())).sum();
    ContextTokens {
        tokens: usage_tokens + trailing_tokens,
        usage_tokens,
        trailing_tokens,
        last_usage_index,
    }
}

/// An estimate of the tokens a message costs the model, by
/// [`CompactionPolicy::Agentmsg`](super::CompactionPolicy::Agentmsg)'s rule:
/// [`Message::estimated_tokens`] of what it is sent as (UTF-16 units over
/// four, 1,200 tokens an image); a message sent as nothing costs nothing.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::Message;
/// # use agentmsg::session::estimate_tokens;
/// assert_eq!(estimate_tokens(&Message::user("12345678").into()), 2);
/// ```
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    match (message.as_llm(), message.as_custom()) {
        (Some(m), _) => m.estimated_tokens(),
        (None, Some(custom)) => custom.project().iter().map(Message::estimated_tokens).sum(),
        (None, None) => 0,
    }
}

/// pi's `estimateTokens`: the characters (UTF-16 units) pi counts for the
/// message's kind, over four, rounded up.
pub(super) fn pi_estimate_tokens(message: &AgentMessage) -> u64 {
    /// pi counts an image in a tool result or custom message as 4,800
    /// characters.
    const IMAGE: usize = 4800;
    let chars = match message.as_llm() {
        Some(Message::User(u)) => u
            .content
            .iter()
            .map(|b| match b {
                UserContent::Text(t) => utf16_len(&t.text),
                _ => 0,
            })
            .sum(),
        Some(Message::Assistant(a)) => a
            .content
            .iter()
            .map(|b| match b {
                AssistantContent::Text(t) => utf16_len(&t.text),
                AssistantContent::Thinking(t) => utf16_len(&t.thinking),
                AssistantContent::ToolCall(c) => {
                    utf16_len(&c.name) + utf16_len(&js_stringify(&c.arguments))
                }
                _ => 0,
            })
            .sum(),
        Some(Message::ToolResult(r)) => r
            .content
            .iter()
            .map(|b| match b {
                ToolResultContent::Text(t) => utf16_len(&t.text),
                ToolResultContent::Image(_) => IMAGE,
            })
            .sum(),
        Some(Message::System(_)) => 0,
        None => {
            if let Some(c) = message.downcast_ref::<CompactionSummary>() {
                utf16_len(&c.summary)
            } else if let Some(b) = message.downcast_ref::<BranchSummary>() {
                utf16_len(&b.summary)
            } else if let Some(b) = message.downcast_ref::<BashExecution>() {
                utf16_len(&b.command) + utf16_len(&b.output)
            } else if let Some(m) = message.downcast_ref::<InjectedMessage>() {
                match &m.content {
                    InjectedContent::Text(text) => utf16_len(text),
                    InjectedContent::Blocks(blocks) => blocks
                        .iter()
                        .map(|b| match b {
                            UserContent::Text(t) => utf16_len(&t.text),
                            UserContent::Image(_) => IMAGE,
                            _ => 0,
                        })
                        .sum(),
                }
            } else {
                0
            }
        }
    };
    (chars as u64).div_ceil(4)
}
