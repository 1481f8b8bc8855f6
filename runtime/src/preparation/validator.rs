//! [`Validator`]: what [`validate`](crate::project::validate) finds, one message at a
//! time, for transcripts too large to hold.

use std::collections::{HashMap, HashSet};

use crate::message::content::{
    AssistantContent, BlockKind, ImageContent, MediaSource, ToolResultContent, UserContent,
};
use crate::message::media::base64_problem;
use crate::message::{AssistantMessage, Message, ToolResultMessage, UserMessage};
use crate::Role;

use super::ids::IdFix;
use super::report::Problem;
use super::rules::{Event, Finding};

/// A call of a kept turn that no result has answered yet.
#[derive(Debug)]
struct OpenCall {
    /// The position of its assistant turn among the messages pushed.
    turn: usize,
    /// The index the turn was pushed at (reported in a problem).
    turn_index: usize,
    /// Its position among the turn's calls.
    position: usize,
    name: String,
}

/// Finds the problems of a transcript fed one message at a time: exactly what
/// [`validate`](crate::project::validate) finds for the same messages, in the same
/// order, while holding only what a later message can still change: the calls
/// not answered yet and the tool-call ids seen (to tell a second result or a
/// reused id), never the messages.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::Message;
/// use agentmsg::project::{validate, ProblemKind, Validator};
///
/// let messages = vec![Message::user("hi"), Message::tool_result("call_1", "read", "stale")];
/// let mut validator = Validator::new();
/// for message in &messages {
///     validator.push(message);
/// }
/// let problems = validator.finish();
/// assert_eq!(problems, validate(&messages));
/// assert_eq!(problems[0].kind, ProblemKind::ResultWithoutCall);
/// ```
#[derive(Debug, Default)]
pub struct Validator {
    /// How many messages were pushed.
    pushed: usize,
    /// The index of the last message pushed, which the next must not be below.
    last_index: Option<usize>,
    /// The position of the last message that is not a tool result: a result
    /// after it answers a call of an earlier turn out of place.
    last_not_result: Option<usize>,
    /// Unanswered calls of kept turns by id, oldest turn first.
    open: HashMap<String, Vec<OpenCall>>,
    /// Ids of calls a result answered.
    answered: HashSet<String>,
    /// Ids of calls in failed turns.
    failed: HashSet<String>,
    /// Ids of every call of a kept turn (a second one is a duplicate).
    call_ids: HashSet<String>,
    findings: Vec<Finding>,
}

impl Validator {
    /// A validator before the first message.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many messages were pushed.
    pub fn len(&self) -> usize {
        self.pushed
    }

    /// Whether no message was pushed.
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    /// Checks the next message; its index (in the problems) is the number of
    /// messages pushed before it, as in [`validate`](crate::project::validate).
    pub fn push(&mut self, message: &Message) {
        self.push_at(self.pushed, message);
    }

    /// Checks the next message, with `index` as its index in the problems (a
    /// line number, say). An index below the previous one is taken as equal
    /// to it, so the problems stay in order; several messages may share one.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::Message;
    /// use agentmsg::project::Validator;
    ///
    /// let mut validator = Validator::new();
    /// validator.push_at(7, &Message::user("hi"));
    /// validator.push_at(9, &Message::tool_result("call_1", "read", "stale"));
    /// assert_eq!(validator.finish()[0].index, 9);
    /// ```
    pub fn push_at(&mut self, index: usize, message: &Message) {
        let i = self.last_index.map_or(index, |last| index.max(last));
        self.last_index = Some(i);
        let position = self.pushed;
        self.pushed += 1;
        match message {
            Message::System(_) => {}
            Message::User(user) => self.user(i, user),
            Message::Assistant(a) if a.stop_reason.is_failure() => {
                let calls = a.tool_calls().count();
                for call in a.tool_calls() {
                    self.failed.insert(call.id.clone());
                }
                self.found(
                    i,
                    Event::FailedTurn {
                        stop: a.stop_reason,
                        calls,
                    },
                );
            }
            Message::Assistant(a) => self.assistant(i, position, a),
            Message::ToolResult(result) => self.result(i, result),
        }
        if !matches!(message, Message::ToolResult(_)) {
            self.last_not_result = Some(position);
        }
    }

    /// The problems found, by message index (for one index, in the order
    /// [`validate`](crate::project::validate) gives them): the calls still unanswered
    /// are reported here.
    pub fn finish(mut self) -> Vec<Problem> {
        let mut missing: Vec<(usize, usize, usize, String, String)> = self
            .open
            .drain()
            .flat_map(|(id, calls)| {
                calls
                    .into_iter()
                    .map(move |c| (c.turn, c.position, c.turn_index, id.clone(), c.name))
            })
            .collect();
        missing.sort_by_key(|(turn, position, ..)| (*turn, *position));
        for (_, _, turn_index, id, name) in missing {
            self.found(turn_index, Event::MissingResult { id, name });
        }
        // Stable: for one index, the order the findings were made in.
        self.findings.sort_by_key(|f| f.index);
        self.findings.iter().filter_map(Finding::problem).collect()
    }

    fn found(&mut self, index: usize, event: Event) {
        self.findings.push(Finding { index, event });
    }

    fn user(&mut self, i: usize, user: &UserMessage) {
        for (b, block) in user.content.iter().enumerate() {
            let (what, data) = match block {
                UserContent::Image(ImageContent {
                    source: MediaSource::Base64 { data, .. },
                }) => ("image", data),
                UserContent::Audio(audio) => ("audio", &audio.data),
                UserContent::Document(document) => match &document.source {
                    MediaSource::Base64 { data, .. } => ("document", data),
                    MediaSource::Url(_) => continue,
                },
                _ => continue,
            };
            self.media(i, b, what, data);
        }
        if user.content.is_empty() {
            self.found(i, Event::EmptyMessage { role: Role::User });
        }
    }

    fn assistant(&mut self, i: usize, turn: usize, message: &AssistantMessage) {
        let mut position = 0;
        for (b, block) in message.content.iter().enumerate() {
            let (signature, on) = match block {
                AssistantContent::Thinking(t) => (&t.signature, BlockKind::Thinking),
                AssistantContent::Text(t) => (&t.signature, BlockKind::Text),
                AssistantContent::ToolCall(c) => (&c.signature, BlockKind::ToolCall),
                AssistantContent::RedactedThinking(_) | AssistantContent::ProviderBlock(_) => {
                    continue
                }
                AssistantContent::Image(image) => {
                    if let MediaSource::Base64 { data, .. } = &image.source {
                        self.media(i, b, "image", data);
                    }
                    continue;
                }
            };
            if signature.as_deref() == Some("") {
                self.found(i, Event::EmptySignature { block: b, on });
            }
            let AssistantContent::ToolCall(call) = block else {
                continue;
            };
            let fix = if call.id.is_empty() {
                Some(IdFix::Empty)
            } else if !self.call_ids.insert(call.id.clone()) {
                Some(IdFix::Duplicate)
            } else {
                None
            };
            if let Some(fix) = fix {
                self.found(
                    i,
                    Event::IdMapped {
                        from: call.id.clone(),
                        to: String::new(),
                        fix,
                        call: true,
                    },
                );
            }
            self.open
                .entry(call.id.clone())
                .or_default()
                .push(OpenCall {
                    turn,
                    turn_index: i,
                    position,
                    name: call.name.clone(),
                });
            position += 1;
        }
        if message.content.is_empty() {
            self.found(
                i,
                Event::EmptyMessage {
                    role: Role::Assistant,
                },
            );
        }
    }

    fn result(&mut self, r: usize, result: &ToolResultMessage) {
        let id = result.tool_call_id.as_str();
        let Some(call) = self.open.get_mut(id).and_then(take_open) else {
            let event = if self.answered.contains(id) {
                Event::DuplicateResult { id: id.to_owned() }
            } else if self.failed.contains(id) {
                Event::ResultOfFailedTurn { id: id.to_owned() }
            } else {
                Event::ResultWithoutCall { id: id.to_owned() }
            };
            self.found(r, event);
            return;
        };
        if self.open.get(id).is_some_and(Vec::is_empty) {
            self.open.remove(id);
        }
        self.answered.insert(id.to_owned());
        if self.last_not_result.is_some_and(|last| last > call.turn) {
            self.found(r, Event::MisplacedResult { id: id.to_owned() });
        }
        for (b, block) in result.content.iter().enumerate() {
            if let ToolResultContent::Image(ImageContent {
                source: MediaSource::Base64 { data, .. },
            }) = block
            {
                self.media(r, b, "image", data);
            }
        }
    }

    fn media(&mut self, i: usize, block: usize, what: &'static str, data: &str) {
        if let Some(problem) = base64_problem(data) {
            let error = problem.to_string();
            self.found(i, Event::InvalidMedia { block, what, error });
        }
    }
}

/// Takes the call a result answers: among the open calls with its id, the
/// first one of the latest turn that has one (as `validate` pairs them).
fn take_open(calls: &mut Vec<OpenCall>) -> Option<OpenCall> {
    let last_turn = calls.last()?.turn;
    let position = calls.iter().position(|c| c.turn == last_turn)?;
    Some(calls.remove(position))
}
