//! Preparing projected messages for one target model.
//!
//! See [`prepare`], [`validate`] and [`PromptEditor`]. The public side is
//! [`project`](crate::project)'s, which re-exports these. Preparation reads
//! LLM messages only, so it sits below the transcript, whose repair
//! ([`RepairPlanner`](crate::transcript::RepairPlanner)) finds unpaired tool
//! calls with the [`Validator`]; the projection of a transcript
//! ([`to_llm`](crate::to_llm)) sits above it.

use std::borrow::Borrow;

use crate::message::Message;

mod editor;
mod ids;
mod report;
mod rules;
mod target;
mod validator;

pub use editor::{
    AppendTarget, EditError, LastAssistant, LastUser, PartOf, PromptEditor, PromptMessage,
};
pub use ids::IdMap;
pub use report::{Change, ChangeKind, Problem, ProblemKind, Provenance, Report};
pub use rules::NO_RESULT_TEXT;
pub use target::{IdRule, Target, ThinkingPolicy};
pub use validator::Validator;

/// The messages ready for one target, what was changed, and the id mapping.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The messages.
    pub messages: Vec<Message>,
    /// What was changed, by input message index.
    pub report: Report,
    /// Target-side ids back to stored ids.
    pub ids: IdMap,
    /// Where each prepared message comes from, one per message: an encoder
    /// that changes `messages[i]` reports the change against
    /// `provenance[i].index()`.
    pub provenance: Vec<Provenance>,
}

impl Prepared {
    /// The input index behind prepared message `i` (`None` past the end).
    pub fn input_index(&self, i: usize) -> Option<usize> {
        self.provenance.get(i).map(|o| o.index())
    }
}

/// Prepares `messages` for `target`.
///
/// Takes the messages a model is to see (any `&[M]` with
/// `M: Borrow<Message>`, so both `&[Message]` and `to_llm`'s
/// `&[Cow<Message>]`) and returns what the [`Target`] accepts, with a
/// [`Report`] of every change and an [`IdMap`] back to the stored tool-call ids.
/// The rules, in the order they apply:
///
/// 1. **Replay of reasoning.** Thinking, redacted thinking and signatures
///    (of thinking blocks, text blocks and tool calls) go back only to the
///    provider, api and model that wrote the assistant message
///    ([`Target::produced`]: a dated snapshot id and its alias are one
///    model). For any other target [`ThinkingPolicy::Drop`] removes them, and
///    [`ThinkingPolicy::AsText`] turns thinking into plain text. An empty
///    signature counts as none; unsigned thinking goes back only to targets
///    that take it ([`Target::unsigned_thinking`]).
/// 2. **Failed turns.** Assistant messages that ended in `error` or `aborted`
///    are skipped, with the results that answer their calls.
/// 3. **Results.** A result answers the latest earlier open call with its id.
///    Each turn's results follow it directly: those already there in their
///    order, then those moved up from further down; a call without a result
///    gets a synthetic error result ("No result provided", `isError` true)
///    after the turn's existing results, before the next user or assistant
///    message. A result without a call, and a second result for a call, are
///    dropped.
/// 4. **Tool-call ids.** Ids the target's [`IdRule`] refuses, empty ids and ids
///    an earlier call already uses are mapped to a readable prefix plus a short
///    SHA-256 suffix, the same for a call and its result; the others stay.
/// 5. **Images.** For a target without vision each image becomes a text
///    placeholder naming its MIME type; where tool results cannot carry images
///    they move into a user message right after the turn's results, and the
///    result says so where each image was.
/// 6. A user or assistant message left without content is dropped.
///
/// Nothing depends on a clock or on randomness: the same input gives the same
/// output, byte for byte, and preparing prepared messages changes nothing.
///
/// [`validate`] runs the target-independent rules (2, 3, duplicate and empty
/// ids, empty signatures and messages) and reports what it finds, changing
/// nothing. [`PromptEditor`] lets a hook adjust prepared messages without
/// inventing ids or timestamps.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::{prepare, AssistantMessage, Message, StopReason, Target, ToolCall};
/// use agentmsg::project::ChangeKind;
///
/// let call = ToolCall::new("functions.read:0", "read", serde_json::json!({"path": "a.rs"}));
/// let messages = vec![
///     Message::user("Read a.rs"),
///     Message::Assistant(AssistantMessage::new([call]).with_stop_reason(StopReason::ToolUse)),
/// ];
/// let prepared = prepare(&messages, &Target::new("anthropic", "anthropic-messages", "claude-sonnet-4-5"));
///
/// // The call got a result, and an id Anthropic accepts that maps back.
/// assert_eq!(prepared.messages.len(), 3);
/// let result = prepared.messages[2].as_tool_result().unwrap();
/// assert!(result.is_error);
/// assert_eq!(prepared.ids.stored(&result.tool_call_id), "functions.read:0");
/// assert_eq!(prepared.report.count(ChangeKind::SyntheticResult), 1);
/// assert_eq!(prepared.report.count(ChangeKind::MappedId), 1);
/// ```
pub fn prepare<M: Borrow<Message>>(messages: &[M], target: &Target) -> Prepared {
    let outcome = rules::run(messages, target);
    let mut changes = outcome.changes();
    if let Some(window) = target.context_window {
        let mut total = 0u64;
        let over = outcome.messages.iter().position(|m| {
            total += m.estimated_tokens();
            total > window
        });
        if let Some(at) = over {
            let tokens: u64 = outcome.messages.iter().map(Message::estimated_tokens).sum();
            changes.push(Change::new(
                outcome.provenance.get(at).map_or(at, |o| o.index()),
                ChangeKind::OverContextWindow,
                format!(
                    "the context passes the {window}-token window of `{}` here: about {tokens} tokens in all (4 characters a token); compact it or leave history out",
                    target.model
                ),
            ));
        }
    }
    Prepared {
        report: Report { changes },
        messages: outcome.messages,
        ids: outcome.ids,
        provenance: outcome.provenance,
    }
}

/// The problems [`prepare`] would repair for any target, found without
/// changing anything: failed turns, calls without a result, results without a
/// call or for a failed turn, second results, misplaced results, duplicate and
/// empty tool-call ids, empty signatures and empty messages. An empty list
/// means the transcript is well formed. [`Validator`] finds the same, one
/// message at a time.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::Message;
/// use agentmsg::project::{validate, ProblemKind};
///
/// let messages = vec![Message::user("hi"), Message::tool_result("call_1", "read", "stale")];
/// let problems = validate(&messages);
/// assert_eq!(problems.len(), 1);
/// assert_eq!(problems[0].index, 1);
/// assert_eq!(problems[0].kind, ProblemKind::ResultWithoutCall);
/// ```
pub fn validate<M: Borrow<Message>>(messages: &[M]) -> Vec<Problem> {
    let mut validator = Validator::new();
    for message in messages {
        validator.push(message.borrow());
    }
    validator.finish()
}
