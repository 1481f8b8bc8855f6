//! Helpers for compacting a session: estimate tokens, decide when, and plan
//! what to summarise. The application calls its own model for the summary and
//! records it with [`Session::compact`](super::Session::compact).

use super::context::SessionContext;
use crate::{AgentMessage, AssistantContent, Content, MessageId, UserContent};

/// A default prompt for the summary, after pi's: the model reads the messages
/// to summarise and answers with a checkpoint another model can continue
/// from.
pub const DEFAULT_SUMMARY_PROMPT: &str = "You are summarizing a conversation between a user and a coding assistant so that the work can continue in a fresh context.

Write a concise checkpoint of the conversation so far, with these sections:

## Goal
What the user is trying to achieve.

## Progress
What has been done, the decisions taken and why.

## Key context
Files, functions, commands, errors and facts the work depends on (exact names and paths).

## Next steps
What remains to be done, in order.

Keep every detail another assistant needs to continue without asking again. Do not invent anything that is not in the conversation.";

/// An estimate of the tokens a message costs: its characters over four (pi's
/// heuristic), an image counted as 1,200 tokens.
///
/// ```
/// # use agentmsg_runtime::{estimate_tokens, Message};
/// assert_eq!(estimate_tokens(&Message::user("12345678").into()), 2);
/// ```
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    const IMAGE: u64 = 1200;
    let mut chars = 0usize;
    let mut images = 0u64;
    let projected;
    let messages: &[crate::Message] = match message.as_llm() {
        Some(m) => std::slice::from_ref(m),
        None => match message.as_custom() {
            Some(custom) => {
                projected = custom.project();
                &projected
            }
            None => &[],
        },
    };
    for m in messages {
        match m {
            crate::Message::User(u) => {
                for block in &u.content {
                    match block {
                        UserContent::Text(t) => chars += t.text.chars().count(),
                        _ => images += 1,
                    }
                }
            }
            crate::Message::Assistant(a) => {
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) => chars += t.text.chars().count(),
                        AssistantContent::Thinking(t) => chars += t.thinking.chars().count(),
                        AssistantContent::RedactedThinking(r) => chars += r.data.len() / 4,
                        AssistantContent::ToolCall(c) => {
                            chars += c.name.chars().count()
                                + serde_json::to_string(&c.arguments).map_or(0, |s| s.len())
                        }
                        AssistantContent::Image(_) => images += 1,
                        AssistantContent::ProviderBlock(p) => chars += p.block.get().len(),
                    }
                }
            }
            crate::Message::ToolResult(r) => {
                for block in &r.content {
                    match Content::from(block.clone()) {
                        Content::Text(t) => chars += t.text.chars().count(),
                        _ => images += 1,
                    }
                }
            }
            crate::Message::System(s) => {
                chars += s
                    .content
                    .iter()
                    .map(|t| t.text.chars().count())
                    .sum::<usize>()
            }
        }
    }
    (chars as u64).div_ceil(4) + images * IMAGE
}

/// Whether a context of `context_tokens` should be compacted in a window of
/// `window` tokens, keeping `reserve` free for the answer (pi's rule:
/// `context_tokens > window - reserve`).
///
/// ```
/// # use agentmsg_runtime::should_compact;
/// assert!(should_compact(190_000, 200_000, 16_384));
/// assert!(!should_compact(100_000, 200_000, 16_384));
/// ```
pub fn should_compact(context_tokens: u64, window: u64, reserve: u64) -> bool {
    context_tokens > window.saturating_sub(reserve)
}

/// What to compact: the messages to summarise, the entry to keep from, and
/// the tokens of the context before.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPlan {
    /// The messages the summary replaces, in order.
    pub to_summarize: Vec<AgentMessage>,
    /// The first entry kept after the summary (pass it to
    /// [`Session::compact`](super::Session::compact)).
    pub first_kept: Option<MessageId>,
    /// The index in the context's messages of the first kept message.
    pub first_kept_index: usize,
    /// The estimated tokens of the whole context.
    pub tokens_before: u64,
}

/// Plans a compaction of `context`: keeps the most recent messages worth at
/// least `keep_recent_tokens` (and at least the last message) and summarises
/// the rest. The cut never falls
/// between a tool call and its result (it moves back to the assistant message
/// that made the call), and never on a message without an entry id. `None`
/// when there is nothing before the cut to summarise.
///
/// ```
/// # use agentmsg_runtime::{plan_compaction, Message, Session};
/// let mut session = Session::new();
/// for i in 0..10 {
///     session.append(Message::user(format!("message {i} {}", "x".repeat(400))).into()).unwrap();
/// }
/// let context = session.context(None).unwrap();
/// let plan = plan_compaction(&context, 300).unwrap();
/// assert_eq!(plan.to_summarize.len(), 7);
/// assert_eq!(plan.first_kept.as_ref(), context.entry_ids[7].as_ref());
/// ```
pub fn plan_compaction(
    context: &SessionContext,
    keep_recent_tokens: u64,
) -> Option<CompactionPlan> {
    let tokens: Vec<u64> = context.messages.iter().map(estimate_tokens).collect();
    let tokens_before = tokens.iter().sum();
    let mut kept = 0u64;
    let mut cut = context.messages.len();
    while cut > 0 && kept < keep_recent_tokens {
        cut -= 1;
        kept += tokens[cut];
    }
    // The last message is always kept: a compaction keeps from an entry.
    cut = cut.min(context.messages.len().saturating_sub(1));
    // Where each call was made.
    let mut calls = std::collections::HashMap::new();
    for (i, m) in context.messages.iter().enumerate() {
        if let Some(crate::Message::Assistant(a)) = m.as_llm() {
            for call in a.tool_calls() {
                calls.insert(call.id.as_str(), i);
            }
        }
    }
    loop {
        // Back to a message that is not a tool result and has an entry id.
        while cut > 0 && !is_cut_point(context, cut) {
            cut -= 1;
        }
        // Back to the earliest call before the cut whose result is after it.
        let split = context.messages[cut..]
            .iter()
            .filter_map(|m| match m.as_llm() {
                Some(crate::Message::ToolResult(r)) => calls.get(r.tool_call_id.as_str()),
                _ => None,
            })
            .filter(|&&at| at < cut)
            .min();
        match split {
            Some(&at) => cut = at,
            None => break,
        }
    }
    if cut == 0 {
        return None;
    }
    Some(CompactionPlan {
        to_summarize: context.messages[..cut].to_vec(),
        first_kept: context.entry_ids.get(cut).cloned().flatten(),
        first_kept_index: cut,
        tokens_before,
    })
}

fn is_cut_point(context: &SessionContext, at: usize) -> bool {
    let message = &context.messages[at];
    let is_result = matches!(message.as_llm(), Some(crate::Message::ToolResult(_)));
    !is_result && context.entry_ids.get(at).is_some_and(Option::is_some)
}
