//! Compacting a session: estimate its tokens, decide when, plan what to
//! summarise, write the summariser's input, and apply the summary. The
//! application sends [`CompactionPlan::request`] to its own model and records
//! the answer with
//! [`Session::apply_compaction`](super::Session::apply_compaction).

use std::borrow::Borrow;

use super::context::SessionContext;
use crate::custom::CompactionSummary;
use crate::{AgentMessage, AssistantContent, Message, MessageId};

/// The system prompt of the summariser, after pi's: the model reads a
/// conversation and writes its summary, without continuing it.
pub const SUMMARY_SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

/// The default prompt for a first summary, after pi's: the model reads the
/// conversation (in `<conversation>` tags, above the prompt) and answers with
/// a checkpoint another model can continue from. It names no kind of work, so
/// it serves any agent.
pub const DEFAULT_SUMMARY_PROMPT: &str = "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or \"(none)\" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or \"(none)\" if not applicable]

Keep each section concise. Preserve exact names, identifiers, numbers, quotes and error messages.";

/// The prompt that folds a new span of the conversation into an existing
/// summary (given in `<previous-summary>` tags), after pi's.
pub const UPDATE_SUMMARY_PROMPT: &str = "The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from \"In Progress\" to \"Done\" when completed
- UPDATE \"Next Steps\" based on what was accomplished
- PRESERVE exact names, identifiers, numbers, quotes and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact names, identifiers, numbers, quotes and error messages.";

/// How many characters of a tool result [`serialize_conversation`] keeps
/// (pi's `TOOL_RESULT_MAX_CHARS`).
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The conversation as text for a summariser, as pi's
/// `serializeConversation` writes it, so the model reads a transcript
/// instead of continuing a conversation: `[User]: …`, `[Assistant
/// thinking]: …`, `[Assistant]: …`, `[Assistant tool calls]: name(key=json,
/// …); …` and `[Tool result]: …` (cut after [`TOOL_RESULT_MAX_CHARS`]
/// characters), parts separated by a blank line. System messages, images and
/// empty parts are left out.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{AssistantMessage, Message, ToolCall};
/// # use agentmsg::session::serialize_conversation;
/// let call = ToolCall::new("call_1", "read", serde_json::json!({"path": "a.rs"}));
/// let messages = [
///     Message::user("What is in a.rs?"),
///     Message::Assistant(AssistantMessage::new([call])),
///     Message::tool_result("call_1", "read", "fn main() {}"),
/// ];
/// assert_eq!(
///     serialize_conversation(&messages),
///     "[User]: What is in a.rs?\n\n[Assistant tool calls]: read(path=\"a.rs\")\n\n[Tool result]: fn main() {}"
/// );
/// ```
pub fn serialize_conversation<M: Borrow<Message>>(messages: &[M]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match message.borrow() {
            Message::User(u) => {
                let text = u.text();
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(a) => {
                let mut text = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) => text.push(t.text.as_str()),
                        AssistantContent::Thinking(t) => thinking.push(t.thinking.as_str()),
                        AssistantContent::ToolCall(c) => {
                            let arguments: Vec<String> = c
                                .arguments
                                .entries()
                                .into_iter()
                                .map(|(k, v)| format!("{k}={v}"))
                                .collect();
                            calls.push(format!("{}({})", c.name, arguments.join(", ")));
                        }
                        _ => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(r) => {
                let text = r.text();
                if !text.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate(&text)));
                }
            }
            Message::System(_) => {}
        }
    }
    parts.join("\n\n")
}

fn truncate(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(TOOL_RESULT_MAX_CHARS) {
        None => text.into(),
        Some((at, _)) => {
            let more = text[at..].chars().count();
            format!("{}\n\n[... {more} more characters truncated]", &text[..at]).into()
        }
    }
}

/// The text a summariser is asked, as pi builds it: the conversation in
/// `<conversation>` tags, the previous summary (if any) in
/// `<previous-summary>` tags, then the prompt ([`UPDATE_SUMMARY_PROMPT`] when
/// there is a previous summary, [`DEFAULT_SUMMARY_PROMPT`] otherwise) and, if
/// given, `Additional focus: …`.
pub fn summary_prompt(conversation: &str, previous: Option<&str>, focus: Option<&str>) -> String {
    let mut text = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(previous) = previous {
        text.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
        text.push_str(UPDATE_SUMMARY_PROMPT);
    } else {
        text.push_str(DEFAULT_SUMMARY_PROMPT);
    }
    if let Some(focus) = focus {
        text.push_str(&format!("\n\nAdditional focus: {focus}"));
    }
    text
}

/// How many tokens a context holds, as pi's `estimateContextTokens` counts
/// them: the last assistant reply's real usage (its `totalTokens`, or input,
/// output and cache tokens added up; failed and aborted replies skipped), plus
/// an estimate ([`estimate_tokens`]) of every message after it; every
/// message estimated when no reply reports usage.
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

/// The tokens of a context: see [`ContextTokens`].
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
    let last = messages.iter().enumerate().rev().find_map(|(i, m)| {
        match m.borrow().as_llm() {
            Some(Message::Assistant(a)) if !a.stop_reason.is_failure() => {
                let u = &a.usage;
                let tokens = u
                    .total_tokens
                    .filter(|&t| t > 0)
                    .unwrap_or(u.input + u.output + u.cache_read + u.cache_write);
                // A reply without usage (0 tokens) is one a provider did not
                // count; pi's `usage` is then absent too.
                (tokens > 0).then_some((i, tokens))
            }
            _ => None,
        }
    });
    let (start, usage_tokens, last_usage_index) = match last {
        Some((i, tokens)) => (i + 1, tokens, Some(i)),
        None => (0, 0, None),
    };
    let trailing_tokens = messages[start..]
        .iter()
        .map(|m| estimate_tokens(m.borrow()))
        .sum();
    ContextTokens {
        tokens: usage_tokens + trailing_tokens,
        usage_tokens,
        trailing_tokens,
        last_usage_index,
    }
}

/// An estimate of the tokens a message costs: its characters over four (pi's
/// heuristic), an image counted as 1,200 tokens.
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

/// Whether a context of `context_tokens` should be compacted in a window of
/// `window` tokens, keeping `reserve` free for the answer (pi's rule:
/// `context_tokens > window - reserve`).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::session::should_compact;
/// assert!(should_compact(190_000, 200_000, 16_384));
/// assert!(!should_compact(100_000, 200_000, 16_384));
/// ```
pub fn should_compact(context_tokens: u64, window: u64, reserve: u64) -> bool {
    context_tokens > window.saturating_sub(reserve)
}

/// What to compact, owning everything the caller needs: the transcript text
/// for the summariser, the entry to keep from, the tokens of the context
/// before, and the previous compaction's summary to fold the new span into.
///
/// Ask a model for the summary of [`CompactionPlan::prompt`] (with
/// [`SUMMARY_SYSTEM_PROMPT`]), then record it with
/// [`Session::apply_compaction`](super::Session::apply_compaction).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactionPlan {
    /// The messages the summary replaces, as [`serialize_conversation`]
    /// writes them (custom messages projected as they declare).
    pub conversation: String,
    /// How many of the context's messages the summary replaces (a previous
    /// summary not counted: its text is [`CompactionPlan::previous_summary`]).
    pub summarized: usize,
    /// The first entry kept after the summary.
    pub first_kept: MessageId,
    /// The index in the context's messages of the first kept message.
    pub first_kept_index: usize,
    /// The tokens of the whole context ([`estimate_context_tokens`]).
    pub tokens_before: u64,
    /// The summary of the compaction the context starts with, if it does: the
    /// new summary updates it ([`UPDATE_SUMMARY_PROMPT`]).
    pub previous_summary: Option<String>,
}

impl CompactionPlan {
    /// The text to ask the summariser ([`summary_prompt`]): the conversation,
    /// the previous summary if any, and the first-summary or update prompt.
    pub fn prompt(&self) -> String {
        summary_prompt(&self.conversation, self.previous_summary.as_deref(), None)
    }

    /// [`CompactionPlan::prompt`] with `Additional focus: {focus}` after it.
    pub fn prompt_with_focus(&self, focus: &str) -> String {
        summary_prompt(
            &self.conversation,
            self.previous_summary.as_deref(),
            Some(focus),
        )
    }

    /// The request for the summary, to `model`: [`SUMMARY_SYSTEM_PROMPT`] and
    /// one user message of [`CompactionPlan::prompt`]. The caller sets the
    /// output limit and sends it. (With a provider feature: the request type
    /// is the providers'.)
    #[cfg(any(
        feature = "openai-chat",
        feature = "openai-responses",
        feature = "anthropic",
        feature = "gemini"
    ))]
    pub fn request(&self, model: impl Into<String>) -> crate::providers::Request<'static> {
        crate::providers::Request::new(model, vec![Message::user(self.prompt())])
            .with_system(SUMMARY_SYSTEM_PROMPT)
    }
}

/// Plans a compaction of `context`: keeps the most recent messages worth at
/// least `keep_recent_tokens` (and at least the last message) and summarises
/// the rest. The cut never falls
/// between a tool call and its result (it moves back to the assistant message
/// that made the call), and never on a message without an entry id. `None`
/// when there is nothing before the cut to summarise.
///
/// When the context starts with a compaction's summary, the plan carries it
/// as [`CompactionPlan::previous_summary`] and summarises what follows it
/// (the entries that compaction kept included).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{Message, Session};
/// # use agentmsg::session::plan_compaction;
/// let mut session = Session::new();
/// for i in 0..10 {
///     session.append(Message::user(format!("message {i} {}", "x".repeat(400))).into()).unwrap();
/// }
/// let context = session.context(None).unwrap();
/// let plan = plan_compaction(&context, 300).unwrap();
/// assert_eq!(plan.summarized, 7);
/// assert!(plan.conversation.starts_with("[User]: message 0 xxx"));
/// assert_eq!(Some(&plan.first_kept), context.entry_ids[7].as_ref());
/// drop(context);
/// session.apply_compaction(&plan, "Messages 0 to 6 were x.").unwrap();
/// assert_eq!(session.context(None).unwrap().messages.len(), 1 + 3);
/// ```
pub fn plan_compaction(
    context: &SessionContext<'_>,
    keep_recent_tokens: u64,
) -> Option<CompactionPlan> {
    let tokens: Vec<u64> = context
        .messages
        .iter()
        .map(|m| estimate_tokens(m))
        .collect();
    let tokens_before = estimate_context_tokens(&context.messages).tokens;
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
        if let Some(Message::Assistant(a)) = m.as_llm() {
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
                Some(Message::ToolResult(r)) => calls.get(r.tool_call_id.as_str()),
                _ => None,
            })
            .filter(|&&at| at < cut)
            .min();
        match split {
            Some(&at) => cut = at,
            None => break,
        }
    }
    let previous_summary = context
        .messages
        .first()
        .and_then(|m| m.downcast_ref::<CompactionSummary>())
        .map(|c| c.summary.clone());
    let from = usize::from(previous_summary.is_some());
    if cut <= from {
        return None;
    }
    let first_kept = context.entry_ids.get(cut).cloned().flatten()?;
    let span = &context.messages[from..cut];
    Some(CompactionPlan {
        conversation: serialize_conversation(&crate::to_llm(span)),
        summarized: span.len(),
        first_kept,
        first_kept_index: cut,
        tokens_before,
        previous_summary,
    })
}
fn is_cut_point(context: &SessionContext<'_>, at: usize) -> bool {
    let message = &context.messages[at];
    let is_result = matches!(message.as_llm(), Some(Message::ToolResult(_)));
    !is_result && context.entry_ids.get(at).is_some_and(Option::is_some)
}
