//! Repairing a stored transcript's pairing of tool calls and results, which
//! is broken for every target alike (an agent that crashed between a call and
//! its result, a result written twice), and nothing that depends on the
//! target or that is history.
//!
//! - A tool call with no result gets a synthetic error result
//!   ([`NO_RESULT_TEXT`], `isError` true, the turn's timestamp and `turnId`,
//!   and the id `<turn id>/<call id>` when the turn has an id), after the
//!   results the turn already has.
//! - A result that answers no earlier call, and a second result for a call,
//!   are dropped.
//! - A session tree (an entry names its `parentId`) pairs its calls and
//!   results on each branch, not in file order: two branches may each answer
//!   a call, and a branch abandoned on an open call is history. Its pairing
//!   is left as it is ([`RepairPlan::tree`]); `prepare` pairs the context it
//!   sends.
//! - An entry kept but not decoded (a kind this build does not know, a body
//!   that does not decode, not even JSON) still counts, as far as its JSON can
//!   be read ([`kept_line_pairing`]); it is never dropped, and never the
//!   reason to drop another entry.
//!
//! Thinking, signatures, tool-call ids, failed turns, misplaced results and
//! images are left alone; the plan is the same on every run (no clock, no
//! random ids). `agentmsg repair` writes a file's repaired copy with it,
//! every kept line byte for byte.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::transcript::{RepairPlan, JsonlReader};
//! let text = r#"{"role":"user","content":"read a.rs","timestamp":1}
//! {"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"stopReason":"toolUse","timestamp":2,"id":"t1"}
//! {"role":"toolResult","toolCallId":"c9","toolName":"read","content":"?","isError":false,"timestamp":3}
//! {"role":"user","content":"and now?","timestamp":4}"#;
//! let messages = JsonlReader::new(text.as_bytes()).read_all()?.messages;
//! let plan = RepairPlan::of(&messages);
//! assert_eq!(plan.drop.len(), 1); // the result of no call, at position 2
//! assert!(plan.drop.contains_key(&2));
//! let repaired = plan.apply(messages);
//! assert_eq!(repaired.len(), 4);
//! // The call's synthetic result stands where the stray result was dropped.
//! assert_eq!(repaired[2].id().map(|id| id.as_str()), Some("t1/c1"));
//! assert!(repaired[2].as_llm().unwrap().as_tool_result().unwrap().is_error);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize as _;
use serde_json::Value;

use crate::preparation::{Problem, ProblemKind, Validator, NO_RESULT_TEXT};
use crate::{
    AgentMessage, AssistantMessage, LlmMessage, Message, MessageId, StopReason, TextContent,
    ToolCall, ToolResultMessage, TurnId,
};

/// What repair does to a transcript's entries, by position (an entry's index
/// among the entries, blank lines not counted).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RepairPlan {
    /// The results to drop, each with why.
    pub drop: BTreeMap<usize, String>,
    /// The synthetic results to write after an entry.
    pub inserts: BTreeMap<usize, Vec<SyntheticResult>>,
    /// Whether the entries name their parents (a session tree): its calls and
    /// results pair on each branch, so the plan leaves them as they are.
    pub tree: bool,
}

/// A synthetic error result the plan adds for a call that got none.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SyntheticResult {
    /// The result, as its line is written.
    pub message: LlmMessage,
    /// What was added, naming the call and the line of its turn.
    pub what: String,
}

impl RepairPlan {
    /// The plan for a transcript read whole (with
    /// [`JsonlReader`](crate::JsonlReader)); an entry's position is its index,
    /// and the line a [`SyntheticResult`] names counts the messages from 1.
    pub fn of(messages: &[AgentMessage]) -> Self {
        let mut planner = RepairPlanner::new();
        for (position, message) in messages.iter().enumerate() {
            // A decoded message's bytes are not kept: what the planner reads
            // of them (its parent) the message says itself.
            let raw = message.as_unknown().map_or(&[][..], |u| u.raw_bytes());
            planner.add(position, position + 1, raw, Some(message));
        }
        planner.finish()
    }

    /// Whether the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.drop.is_empty() && self.inserts.is_empty()
    }

    /// `messages` repaired as the plan says: results dropped, synthetic
    /// results added; every other entry as it was.
    pub fn apply(&self, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
        let added = self.inserts.values().map(Vec::len).sum::<usize>();
        let mut out = Vec::with_capacity(messages.len() + added);
        for (position, message) in messages.into_iter().enumerate() {
            if !self.drop.contains_key(&position) {
                out.push(message);
            }
            for result in self.inserts.get(&position).into_iter().flatten() {
                out.push(AgentMessage::Llm(result.message.clone()));
            }
        }
        out
    }
}

/// What an entry kept but not decoded says of tool calls, read from its JSON
/// as far as it goes: an assistant line's calls (ids and names), or the call a
/// tool result answers. `None` when it says neither.
///
/// A program that pairs calls with their results over a transcript, as
/// [`RepairPlanner`] does, gives it each line the reader kept but could not
/// decode (an [`UnknownMessage`](crate::transcript::UnknownMessage)'s raw
/// text), so that a call or a result on such a line still counts: a result
/// that answers it is not an orphan, and its call not unanswered. The
/// message it returns holds only what pairing needs (ids and names; no
/// arguments, no output).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::transcript::kept_line_pairing;
///
/// // Read only as far as pairing needs: `arguments` and `usage` are not looked at.
/// let line = br#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls","arguments":7}],"usage":"?"}"#;
/// let pairing = kept_line_pairing(line).unwrap();
/// let call = pairing.as_assistant().unwrap().tool_calls().next().unwrap();
/// assert_eq!((call.id.as_str(), call.name.as_str()), ("c1", "ls"));
/// assert!(kept_line_pairing(br#"{"role":"user"}"#).is_none());
/// ```
pub fn kept_line_pairing(raw: &[u8]) -> Option<Message> {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(raw) else {
        return None;
    };
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    match text("role")? {
        "assistant" => {
            let calls: Vec<ToolCall> = object
                .get("content")?
                .as_array()?
                .iter()
                .filter(|block| block.get("type").and_then(Value::as_str) == Some("toolCall"))
                .filter_map(|block| {
                    let id = block.get("id")?.as_str()?;
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                    Some(ToolCall::new(id, name, Value::Null))
                })
                .collect();
            if calls.is_empty() {
                return None;
            }
            let stop_reason = object
                .get("stopReason")
                .and_then(|v| StopReason::deserialize(v).ok())
                .unwrap_or(StopReason::ToolUse);
            let timestamp = object.get("timestamp").and_then(Value::as_u64).unwrap_or(0);
            Some(Message::Assistant(
                AssistantMessage::new(calls)
                    .with_stop_reason(stop_reason)
                    .with_timestamp(timestamp),
            ))
        }
        "toolResult" => {
            let id = text("toolCallId")?;
            let name = text("toolName").unwrap_or("");
            Some(Message::ToolResult(ToolResultMessage::new(
                id,
                name,
                [TextContent::new("")],
            )))
        }
        _ => None,
    }
}

/// A call of a turn: its id and the tool's name.
#[derive(Debug)]
struct Call {
    id: String,
    name: String,
}

/// An assistant turn with calls that are not all answered yet.
#[derive(Debug)]
struct Turn {
    /// The line number of the turn.
    line: usize,
    timestamp: u64,
    turn_id: Option<TurnId>,
    id: Option<MessageId>,
    /// Its calls, in order.
    calls: Vec<Call>,
    /// How many results each call id got (a result answers the latest earlier
    /// call with its id that has none yet).
    answered: HashMap<String, usize>,
    unanswered: usize,
    /// The positions of the results right after the turn (before the next
    /// message that is not a result; lines that are no message do not end it).
    results: Vec<usize>,
}

/// Decides a [`RepairPlan`], fed one entry at a time (so a file of any
/// size is planned in the space of its open calls).
#[derive(Debug, Default)]
pub struct RepairPlanner {
    /// Pairing with every kept line counted.
    with_kept: Validator,
    /// Pairing with the kept results left out (the kept calls counted).
    calls_only: Validator,
    /// Positions whose message stands in for a kept line.
    stand_ins: HashSet<usize>,
    /// Unanswered calls by id: the positions of their turns, latest last.
    open: HashMap<String, Vec<usize>>,
    turns: HashMap<usize, Turn>,
    /// The turn whose results come now, if one does.
    run: Option<usize>,
    /// Whether a line named its parent.
    tree: bool,
}

impl RepairPlanner {
    /// A planner that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks at the entry at `position` (its index among the transcript's
    /// entries, blank lines not counted), read from line `line`: its bytes
    /// and, when it decoded, its message. An entry kept undecoded (`None`, or
    /// an [`AgentMessage::Unknown`]) counts as far as its JSON can be read
    /// ([`kept_line_pairing`]). An entry names a parent when its message does
    /// or its bytes hold a `"parentId"` key (a line that does not decode).
    pub fn add(&mut self, position: usize, line: usize, raw: &[u8], entry: Option<&AgentMessage>) {
        if !self.tree
            && (entry.is_some_and(|m| !m.parent_id().is_previous())
                || memchr::memmem::find(raw, b"\"parentId\"").is_some())
        {
            self.tree = true;
        }
        let stand_in;
        let message = match entry.and_then(AgentMessage::as_llm) {
            Some(message) => message,
            None if entry.is_some_and(|m| !m.is_unknown()) => return,
            None => match kept_line_pairing(raw) {
                Some(message) => {
                    self.stand_ins.insert(position);
                    stand_in = message;
                    &stand_in
                }
                None => return,
            },
        };
        let kept = self.stand_ins.contains(&position);
        self.with_kept.push_at(position, message);
        if !(kept && matches!(message, Message::ToolResult(_))) {
            self.calls_only.push_at(position, message);
        }
        match message {
            Message::Assistant(assistant) => {
                let calls: Vec<Call> = assistant
                    .tool_calls()
                    .map(|c| Call {
                        id: c.id.clone(),
                        name: c.name.clone(),
                    })
                    .collect();
                self.run = None;
                if calls.is_empty() {
                    return;
                }
                for call in &calls {
                    self.open.entry(call.id.clone()).or_default().push(position);
                }
                let decoded = entry;
                self.turns.insert(
                    position,
                    Turn {
                        line,
                        timestamp: assistant.timestamp,
                        turn_id: decoded.and_then(|m| m.turn_id().cloned()),
                        id: decoded.and_then(|m| m.id().cloned()),
                        unanswered: calls.len(),
                        calls,
                        answered: HashMap::new(),
                        results: Vec::new(),
                    },
                );
                self.run = Some(position);
            }
            Message::ToolResult(result) => {
                if let Some(turn) = self.run.and_then(|t| self.turns.get_mut(&t)) {
                    turn.results.push(position);
                }
                let id = result.tool_call_id.as_str();
                let Some(owner) = self.open.get_mut(id).and_then(Vec::pop) else {
                    return;
                };
                if self.open.get(id).is_some_and(Vec::is_empty) {
                    self.open.remove(id);
                }
                if let Some(turn) = self.turns.get_mut(&owner) {
                    *turn.answered.entry(id.to_owned()).or_default() += 1;
                    turn.unanswered -= 1;
                    if turn.unanswered == 0 {
                        // Answered in full: nothing to add after it.
                        self.turns.remove(&owner);
                    }
                }
            }
            Message::User(_) | Message::System(_) => self.run = None,
        }
    }

    /// The plan, once every entry was added.
    pub fn finish(self) -> RepairPlan {
        if self.tree {
            // Two branches may each answer a call, and a branch abandoned on
            // an open call is history: file order says nothing of either.
            return RepairPlan {
                tree: true,
                ..RepairPlan::default()
            };
        }
        let stand_ins = self.stand_ins;
        // A decoded result is dropped only when it pairs with no call whatever
        // the kept lines say, and is not a second result only because of a kept
        // one: so it must be unpaired both with every kept line counted and
        // with the kept results left out.
        let unpaired = |problems: &[Problem]| -> BTreeMap<usize, String> {
            problems
                .iter()
                .filter(|p| {
                    matches!(
                        p.kind,
                        ProblemKind::ResultWithoutCall | ProblemKind::DuplicateResult
                    ) && !stand_ins.contains(&p.index)
                })
                .map(|p| (p.index, format!("dropped: {}", p.detail)))
                .collect()
        };
        let problems = self.with_kept.finish();
        let without_kept_results = unpaired(&self.calls_only.finish());
        let drop: BTreeMap<usize, String> = unpaired(&problems)
            .into_iter()
            .filter(|(position, _)| without_kept_results.contains_key(position))
            .collect();
        let mut inserts: BTreeMap<usize, Vec<SyntheticResult>> = BTreeMap::new();
        let needs_results = problems
            .iter()
            .filter(|p| p.kind == ProblemKind::MissingResult)
            .map(|p| p.index)
            .collect::<std::collections::BTreeSet<usize>>();
        for position in needs_results {
            let Some(turn) = self.turns.get(&position) else {
                continue;
            };
            // After the results the turn already has (kept ones), before the
            // next user, assistant or system message.
            let after = turn
                .results
                .iter()
                .rev()
                .find(|r| !drop.contains_key(r))
                .copied()
                .unwrap_or(position);
            let mut answered = turn.answered.clone();
            let mut seen: HashMap<&str, usize> = HashMap::new();
            for Call { id, name } in &turn.calls {
                match answered.get_mut(id) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        continue;
                    }
                    _ => {}
                }
                let nth = seen.entry(id.as_str()).or_default();
                *nth += 1;
                let suffix = if *nth > 1 {
                    format!("#{nth}")
                } else {
                    String::new()
                };
                let result = ToolResultMessage::new(
                    id.clone(),
                    name.clone(),
                    [TextContent::new(NO_RESULT_TEXT)],
                )
                .with_error(true)
                .with_timestamp(turn.timestamp);
                let mut message = LlmMessage::new(Message::ToolResult(result));
                message.turn_id = turn.turn_id.clone();
                // Derived from the turn's id, when it has one, so the transcript
                // keeps an id on every line and the output stays the same on
                // every run.
                message.id = turn
                    .id
                    .as_ref()
                    .map(|t| MessageId::from(format!("{}/{id}{suffix}", t.as_str())));
                let what = format!(
                    "added a synthetic error result for the `{name}` call `{id}` of line {}",
                    turn.line
                );
                inserts
                    .entry(after)
                    .or_default()
                    .push(SyntheticResult { message, what });
            }
        }
        RepairPlan {
            drop,
            inserts,
            tree: false,
        }
    }
}
