//! Turn building for the APIs that take a strict user/model alternation
//! (Anthropic Messages, Gemini): consecutive messages of one side merge into
//! one turn, and a conversation that opens with the model's turn gets a short
//! user turn before it. Each change is reported.

use serde_json::Value;

use crate::project::{ChangeKind, Report};

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
    /// The API's name, for the report (`Anthropic`, `Gemini`).
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
