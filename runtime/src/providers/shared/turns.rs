//! Turn building for the APIs that take a strict user/model alternation
//! (Anthropic Messages, Gemini, Bedrock Converse): consecutive messages of one
//! side merge into one turn, and a conversation that opens with the model's
//! turn gets a short user turn before it. Each change is reported. The two
//! APIs whose turns are `{role, content}` lists of blocks (Anthropic Messages,
//! Bedrock Converse) also share the walk over the messages ([`BlockWriter`],
//! [`write_turns`]); each writes the blocks in its own shape.

use serde_json::Value;

use crate::project::{ChangeKind, Report};
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
use crate::{providers::EncodeError, AssistantContent, Message, ToolResultMessage, UserContent};

/// The text of the user turn put before a conversation that opens with the
/// model's turn (both APIs want a user turn first).
pub(crate) const OPENING: &str = "(continued)";

/// Who speaks in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The user (tool results included).
    User,
    /// The model.
    Model,
}

/// One turn of the request: its blocks or parts, and the input messages it holds.
pub(crate) struct Turn {
    pub(crate) side: Side,
    pub(crate) content: Vec<Value>,
    /// The input index of the first message in the turn.
    pub(crate) first_index: usize,
    /// The input index of the last message in the turn.
    pub(crate) last_index: usize,
    /// Whether the turn so far holds only tool results.
    pub(crate) only_results: bool,
}

/// The turns of a request, as they are built.
pub(crate) struct Turns {
    pub(crate) list: Vec<Turn>,
    /// The API's name, for the report (`Anthropic`, `Gemini`, `Bedrock`).
    api: &'static str,
    /// The API's role names: user, then model.
    roles: [&'static str; 2],
}

impl Turns {
    /// No turn yet, for `api` whose roles are named `roles` (user, model).
    pub(crate) fn new(api: &'static str, roles: [&'static str; 2]) -> Self {
        Self {
            list: Vec::new(),
            api,
            roles,
        }
    }

    /// The API's name of `side`.
    pub(crate) fn role(&self, side: Side) -> &'static str {
        match side {
            Side::User => self.roles[0],
            Side::Model => self.roles[1],
        }
    }

    /// The turns, each with its API role name.
    #[cfg(feature = "gemini")]
    pub(crate) fn into_named(self) -> impl Iterator<Item = (&'static str, Turn)> {
        let roles = self.roles;
        self.list.into_iter().map(move |turn| {
            let role = match turn.side {
                Side::User => roles[0],
                Side::Model => roles[1],
            };
            (role, turn)
        })
    }

    /// Adds the content of input message `index` to a new turn of `side`, or to
    /// the last turn when that is of the same side (reported, unless tool results
    /// join tool results). Empty content is dropped, and reported.
    pub(crate) fn push(
        &mut self,
        report: &mut Report,
        index: usize,
        side: Side,
        content: Vec<Value>,
        is_result: bool,
    ) {
        let role = self.role(side);
        if content.is_empty() {
            let what = if is_result { "tool result" } else { role };
            report.record(
                index,
                ChangeKind::UnsupportedContent,
                format!(
                    "a {what} message with nothing {} can take was dropped",
                    self.api
                ),
            );
            return;
        }
        if let Some(last) = self.list.last_mut().filter(|t| t.side == side) {
            let expected = is_result && last.only_results;
            last.content.extend(content);
            last.last_index = index;
            last.only_results &= is_result;
            if !expected {
                report.record(
                    index,
                    ChangeKind::MergedTurns,
                    format!("merged into the previous {role} turn"),
                );
            }
            return;
        }
        self.list.push(Turn {
            side,
            content,
            first_index: index,
            last_index: index,
            only_results: is_result,
        });
    }

    /// A conversation that ends with the model's turn asks the model to go on
    /// from it, and the APIs refuse such a turn ending in whitespace: its last
    /// text block is trimmed (and dropped when nothing is left, the turn too
    /// when it is empty then), reported.
    #[cfg(any(feature = "anthropic", feature = "bedrock"))]
    fn trim_final_text(&mut self, report: &mut Report) {
        let Some(turn) = self.list.last_mut().filter(|t| t.side == Side::Model) else {
            return;
        };
        let index = turn.last_index;
        let Some(Value::Object(block)) = turn.content.last_mut() else {
            return;
        };
        let Some(Value::String(text)) = block.get_mut("text") else {
            return;
        };
        let trimmed = text.trim_end().len();
        if trimmed == text.len() {
            return;
        }
        text.truncate(trimmed);
        if trimmed == 0 {
            turn.content.pop();
            if turn.content.is_empty() {
                self.list.pop();
            }
        }
        report.record(
            index,
            ChangeKind::UnsupportedContent,
            format!(
                "trailing whitespace removed from the final {} turn, which {} refuses",
                self.roles[1], self.api
            ),
        );
    }

    /// The conversation must open with a user turn; one that opens with the
    /// model's gets a user turn holding `opening` (the API's block for
    /// [`OPENING`]) before it.
    pub(crate) fn open_with_user(&mut self, report: &mut Report, opening: Value) {
        let Some(first) = self.list.first().filter(|t| t.side == Side::Model) else {
            return;
        };
        let index = first.first_index;
        self.list.insert(
            0,
            Turn {
                side: Side::User,
                content: vec![opening],
                first_index: index,
                last_index: index,
                only_results: false,
            },
        );
        report.record(
            index,
            ChangeKind::UnsupportedContent,
            format!("the conversation opened with the model's turn: a user turn `{OPENING}` was put before it"),
        );
    }
}

/// The state of a request being encoded by [`write_turns`]: the report, the
/// turns and the top-level `system` blocks.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) struct Conversation {
    pub(crate) report: Report,
    pub(crate) turns: Turns,
    pub(crate) system: Vec<Value>,
}

/// How one API whose turns are lists of blocks writes each message's blocks.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) trait BlockWriter {
    /// The request being encoded.
    fn conversation(&mut self) -> &mut Conversation;
    /// A text block (of `system`, or the opening user turn).
    fn text_block(text: &str) -> Value;
    /// Whether `block` is a tool result (those open the user turn they are in).
    fn is_result(block: &Value) -> bool;
    /// The blocks of the user message of input `index`.
    fn user_blocks(&mut self, index: usize, content: &[UserContent]) -> Vec<Value>;
    /// The blocks of the assistant message of input `index`.
    fn assistant_blocks(&mut self, index: usize, content: &[AssistantContent]) -> Vec<Value>;
    /// The block of the tool result of input `index`.
    fn tool_result_block(&mut self, index: usize, result: &ToolResultMessage) -> Value;
}

/// Walks the prepared `messages` (`origins`: the input index of each) into
/// `writer`'s turns and `system`, and returns the turns as `{role, content}`
/// objects, tool results first in each user turn. A system message after the
/// conversation began moves to `system`; a conversation that opens with the
/// model's turn gets a user turn before it; a final assistant turn loses its
/// trailing whitespace. Each change is reported.
///
/// # Errors
/// [`EncodeError::Invalid`] at `messages` when no message is left to send.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) fn write_turns<W: BlockWriter>(
    writer: &mut W,
    messages: &[Message],
    origins: &[usize],
) -> Result<Vec<Value>, EncodeError> {
    let mut seen_conversation = false;
    for (message, &index) in messages.iter().zip(origins) {
        let (side, blocks, is_result) = match message {
            Message::System(system) => {
                let conversation = writer.conversation();
                if seen_conversation {
                    conversation.report.record(
                        index,
                        ChangeKind::UnsupportedContent,
                        "a system message in the conversation was moved to the top-level `system`",
                    );
                }
                for block in system.content.iter().filter(|t| !t.text.is_empty()) {
                    conversation.system.push(W::text_block(&block.text));
                }
                continue;
            }
            Message::User(user) => (Side::User, writer.user_blocks(index, &user.content), false),
            Message::Assistant(assistant) => (
                Side::Model,
                writer.assistant_blocks(index, &assistant.content),
                false,
            ),
            Message::ToolResult(result) => (
                Side::User,
                vec![writer.tool_result_block(index, result)],
                true,
            ),
        };
        seen_conversation = true;
        let Conversation { report, turns, .. } = writer.conversation();
        turns.push(report, index, side, blocks, is_result);
    }
    let Conversation { report, turns, .. } = writer.conversation();
    turns.open_with_user(report, W::text_block(OPENING));
    turns.trim_final_text(report);
    if turns.list.is_empty() {
        return Err(EncodeError::invalid("messages", "no message left to send"));
    }
    Ok(std::mem::take(&mut turns.list)
        .into_iter()
        .map(|turn| {
            let role = turns.role(turn.side);
            let mut content = turn.content;
            if turn.side == Side::User {
                // The results must open the user turn that answers the calls.
                content.sort_by_key(|b| !W::is_result(b));
            }
            serde_json::json!({"role": role, "content": content})
        })
        .collect())
}
