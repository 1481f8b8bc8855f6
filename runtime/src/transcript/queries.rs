//! Queries over a transcript or a session's path: the Rust form of MARSYS's
//! `MessageFilter` (by role, recent, with tools) as iterator adaptors on any
//! iterator of `&AgentMessage`, the pairing of tool calls and results, the
//! last messages of a context, and a summary.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::{AgentMessage, Message, Role};
//! use agentmsg::transcript::MessageQuery;
//! let messages: Vec<AgentMessage> = vec![
//!     Message::user("hi").into(),
//!     Message::assistant("hello").into(),
//!     Message::user("bye").into(),
//! ];
//! let users: Vec<&AgentMessage> = messages.iter().with_role(Role::User).collect();
//! assert_eq!(users.len(), 2);
//! assert_eq!(messages.iter().of_kind("assistant").count(), 1);
//! ```
//!
//! MARSYS's `MessageChain` (a chain id, each message's position in it, the
//! recent context and a summary) is a session's path here: the chain's id is
//! the leaf (or a turn's [`TurnId`], with [`MessageQuery::in_turn`]), a
//! message's position its index in the context, the recent context
//! [`last_messages`] (which never starts on a result whose call it cut off),
//! and the summary [`MessageQuery::summarize`]:
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::{Message, Session};
//! use agentmsg::transcript::{last_messages, MessageQuery};
//! let mut session = Session::new();
//! session.append(Message::user("first").into()).unwrap();
//! let fork = session.append(Message::assistant("one way").into()).unwrap();
//! session.append(Message::user("go on").into()).unwrap();
//! session.branch(fork.as_str()).unwrap();
//! let leaf = session.append(Message::user("other way").into()).unwrap();
//! // The chain that ends at `leaf`: its messages, by position.
//! let chain = session.context(Some(leaf.as_str())).unwrap();
//! assert_eq!(chain.entry_ids[2].as_ref(), Some(&leaf));
//! let recent = last_messages(&chain.messages, 2);
//! assert_eq!(recent.len(), 2);
//! let summary = chain.messages.iter().map(|m| &**m).summarize();
//! assert_eq!(summary.kinds["user"], 2);
//! ```

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::{
    AgentMessage, AssistantContent, Cost, Message, Role, ToolCall, ToolResultMessage, TurnId, Usage,
};

/// Filters on an iterator of messages. Implemented for every iterator of
/// `&AgentMessage`, so they chain with each other and with `Iterator`'s own.
pub trait MessageQuery<'a>: Iterator<Item = &'a AgentMessage> + Sized {
    /// Messages of this kind (`user`, `assistant`, `toolResult`, `system` or
    /// a custom kind such as `compactionSummary`).
    fn of_kind(self, kind: &'a str) -> impl Iterator<Item = &'a AgentMessage> {
        self.filter(move |m| m.kind() == kind)
    }

    /// LLM messages of this role.
    fn with_role(self, role: Role) -> impl Iterator<Item = &'a AgentMessage> {
        self.filter(move |m| m.role() == Some(role))
    }

    /// Messages of this turn.
    fn in_turn(self, turn: &'a TurnId) -> impl Iterator<Item = &'a AgentMessage> {
        self.filter(move |m| m.turn_id() == Some(turn))
    }

    /// LLM messages whose timestamp is at or after `millis` (Unix ms).
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{AgentMessage, Message, UserMessage};
    /// # use agentmsg::transcript::MessageQuery;
    /// let old: AgentMessage = Message::User(UserMessage::new(["a"]).with_timestamp(10)).into();
    /// let new: AgentMessage = Message::User(UserMessage::new(["b"]).with_timestamp(20)).into();
    /// let messages = [old, new];
    /// assert_eq!(messages.iter().since(15).count(), 1);
    /// ```
    fn since(self, millis: u64) -> impl Iterator<Item = &'a AgentMessage> {
        self.filter(move |m| m.as_llm().is_some_and(|l| l.timestamp() >= millis))
    }

    /// Assistant messages that call at least one tool.
    fn with_tool_calls(self) -> impl Iterator<Item = &'a AgentMessage> {
        self.filter(|m| {
            m.as_llm()
                .and_then(Message::as_assistant)
                .is_some_and(|a| a.tool_calls().next().is_some())
        })
    }

    /// A summary of the messages ([`MessageStats`]).
    fn summarize(self) -> MessageStats {
        let mut summary = MessageStats::default();
        for message in self {
            summary.add(message);
        }
        summary
    }
}

impl<'a, I: Iterator<Item = &'a AgentMessage>> MessageQuery<'a> for I {}

/// The result of the tool call `call_id` in `messages`, with its index.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{AgentMessage, AssistantContent, AssistantMessage, Message, ToolCall, ToolResultMessage};
/// # use agentmsg::transcript::{result_of, call_of};
/// let messages: Vec<AgentMessage> = vec![
///     Message::Assistant(AssistantMessage::new([AssistantContent::ToolCall(ToolCall::new("c1", "ls", serde_json::json!({})))])).into(),
///     Message::ToolResult(ToolResultMessage::new("c1", "ls", ["a.rs"])).into(),
/// ];
/// let (at, result) = result_of(&messages, "c1").unwrap();
/// assert_eq!((at, result.text()), (1, "a.rs".to_owned()));
/// let (at, call) = call_of(&messages, result).unwrap();
/// assert_eq!((at, call.name.as_str()), (0, "ls"));
/// ```
pub fn result_of<'a, M: Borrow<AgentMessage>>(
    messages: &'a [M],
    call_id: &str,
) -> Option<(usize, &'a ToolResultMessage)> {
    messages
        .iter()
        .enumerate()
        .find_map(|(i, m)| match m.borrow().as_llm() {
            Some(Message::ToolResult(r)) if r.tool_call_id == call_id => Some((i, r)),
            _ => None,
        })
}

/// The tool call a result answers in `messages`, with the index of the
/// assistant message that made it.
pub fn call_of<'a, M: Borrow<AgentMessage>>(
    messages: &'a [M],
    result: &ToolResultMessage,
) -> Option<(usize, &'a ToolCall)> {
    messages.iter().enumerate().find_map(|(i, m)| {
        m.borrow()
            .as_llm()
            .and_then(Message::as_assistant)
            .and_then(|a| a.tool_calls().find(|c| c.id == result.tool_call_id))
            .map(|c| (i, c))
    })
}

/// The last `n` messages of a context, moved back as far as needed so they do
/// not start on a tool result whose call is before them (they then start on
/// the assistant message that made the call, so hold more than `n`).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{AgentMessage, AssistantContent, AssistantMessage, Message, ToolCall, ToolResultMessage};
/// # use agentmsg::transcript::last_messages;
/// let messages: Vec<AgentMessage> = vec![
///     Message::user("list").into(),
///     Message::Assistant(AssistantMessage::new([AssistantContent::ToolCall(ToolCall::new("c1", "ls", serde_json::json!({})))])).into(),
///     Message::ToolResult(ToolResultMessage::new("c1", "ls", ["a.rs"])).into(),
///     Message::assistant("a.rs").into(),
/// ];
/// assert_eq!(last_messages(&messages, 2).len(), 3); // starts on the call
/// assert_eq!(last_messages(&messages, 1).len(), 1);
/// assert_eq!(last_messages(&messages, 9).len(), 4);
/// ```
pub fn last_messages<M: Borrow<AgentMessage>>(messages: &[M], n: usize) -> &[M] {
    let mut start = messages.len().saturating_sub(n);
    loop {
        // The earliest call made before `start` whose result is at or after it.
        let earliest = messages[start..]
            .iter()
            .filter_map(|m| match m.borrow().as_llm() {
                Some(Message::ToolResult(r)) => call_of(&messages[..start], r).map(|(i, _)| i),
                _ => None,
            })
            .min();
        match earliest {
            Some(at) if at < start => start = at,
            _ => break,
        }
    }
    &messages[start..]
}

/// Counts over some messages: by kind, tool calls by name, errors, stop
/// reasons, reasoning blocks, usage and cost. `agentmsg stats` prints one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageStats {
    /// Messages counted.
    pub messages: usize,
    /// Messages by kind.
    pub kinds: BTreeMap<String, usize>,
    /// Messages kept undecoded ([`AgentMessage::Unknown`]).
    pub kept_unknown: usize,
    /// Assistant messages.
    pub assistant_messages: usize,
    /// Tool calls.
    pub tool_calls: usize,
    /// Tool calls by tool name.
    pub tool_calls_by_name: BTreeMap<String, usize>,
    /// Tool results.
    pub tool_results: usize,
    /// Tool results marked as errors.
    pub tool_result_errors: usize,
    /// Assistant messages that ended in an error.
    pub assistant_errors: usize,
    /// Thinking blocks.
    pub thinking_blocks: usize,
    /// Redacted-thinking blocks.
    pub redacted_thinking_blocks: usize,
    /// Assistant messages by stop reason.
    pub stop_reasons: BTreeMap<String, usize>,
    /// The assistant messages' usage, summed.
    pub usage: Usage,
    /// Their cost, summed where known: the whole cost only when
    /// [`unpriced`](MessageStats::unpriced) is 0 ([`MessageStats::total_cost`]).
    pub cost: Cost,
    /// Assistant messages that used tokens but carry no cost, or a zero one
    /// (their model's price was unknown): what they cost is unknown, not zero.
    pub unpriced: usize,
    /// The models of the unpriced messages.
    pub unpriced_models: BTreeSet<String>,
}

impl MessageStats {
    /// The total cost in dollars, or `None` when a message's cost is unknown
    /// ([`MessageStats::unpriced`]): an unknown part makes the sum unknown.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{AgentMessage, AssistantMessage, Message, Usage};
    /// # use agentmsg::transcript::MessageQuery;
    /// let reply = AssistantMessage { model: "my-local-model".into(), usage: Usage::new(100, 20), ..Default::default() };
    /// let messages: Vec<AgentMessage> = vec![Message::Assistant(reply).into()];
    /// let summary = messages.iter().summarize();
    /// assert_eq!(summary.total_cost(), None);
    /// assert!(summary.to_string().contains("cost: unknown (1 reply without a price: my-local-model)"));
    /// ```
    pub fn total_cost(&self) -> Option<f64> {
        (self.unpriced == 0).then_some(self.cost.total)
    }

    /// Counts one more message.
    pub fn add(&mut self, message: &AgentMessage) {
        self.messages += 1;
        *self.kinds.entry(message.kind().to_owned()).or_default() += 1;
        if message.is_unknown() {
            self.kept_unknown += 1;
        }
        match message.as_llm() {
            Some(Message::Assistant(a)) => {
                self.assistant_messages += 1;
                for block in &a.content {
                    match block {
                        AssistantContent::ToolCall(call) => {
                            self.tool_calls += 1;
                            *self
                                .tool_calls_by_name
                                .entry(call.name.clone())
                                .or_default() += 1;
                        }
                        AssistantContent::Thinking(_) => self.thinking_blocks += 1,
                        AssistantContent::RedactedThinking(_) => {
                            self.redacted_thinking_blocks += 1;
                        }
                        AssistantContent::Text(_)
                        | AssistantContent::Image(_)
                        | AssistantContent::ProviderBlock(_) => {}
                    }
                }
                if a.stop_reason == crate::StopReason::Error {
                    self.assistant_errors += 1;
                }
                *self
                    .stop_reasons
                    .entry(a.stop_reason.as_str().to_owned())
                    .or_default() += 1;
                self.usage += &a.usage;
                // A zero cost on a reply that used tokens is what a writer
                // that did not know the price put there (pi does): unknown.
                match a.usage.cost {
                    Some(cost) if cost.total != 0.0 => self.cost += cost,
                    _ if a.usage.total() > 0 => {
                        self.unpriced += 1;
                        self.unpriced_models.insert(a.model.clone());
                    }
                    _ => {}
                }
            }
            Some(Message::ToolResult(r)) => {
                self.tool_results += 1;
                if r.is_error {
                    self.tool_result_errors += 1;
                }
            }
            _ => {}
        }
    }
}

/// The summary as text: counts, tokens, and the cost, which says `unknown`
/// (with the models) when a reply had no price.
impl fmt::Display for MessageStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} messages ({} assistant, {} tool calls, {} tool results, {} kept undecoded)",
            self.messages,
            self.assistant_messages,
            self.tool_calls,
            self.tool_results,
            self.kept_unknown
        )?;
        writeln!(
            f,
            "tokens: input {}, output {}, cache read {}, cache write {}",
            self.usage.input, self.usage.output, self.usage.cache_read, self.usage.cache_write
        )?;
        write!(f, "{}", CostText(self))
    }
}

/// The cost line of a [`MessageStats`].
struct CostText<'a>(&'a MessageStats);

impl fmt::Display for CostText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        match s.total_cost() {
            Some(total) => write!(f, "cost: ${total:.6}"),
            None => {
                let models: Vec<&str> = s
                    .unpriced_models
                    .iter()
                    .map(|m| if m.is_empty() { "?" } else { m.as_str() })
                    .collect();
                let replies = if s.unpriced == 1 { "reply" } else { "replies" };
                write!(
                    f,
                    "cost: unknown ({} {replies} without a price: {})",
                    s.unpriced,
                    models.join(", ")
                )?;
                if s.assistant_messages > s.unpriced {
                    write!(f, "; ${:.6} for the rest", s.cost.total)?;
                }
                Ok(())
            }
        }
    }
}
