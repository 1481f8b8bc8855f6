//! What repair changes, decided in one pass over the lines (the first of two:
//! the second writes the copy), holding only what a later line can still
//! change: the calls not answered yet, with the results that follow their
//! turn, and the kept lines that stand in for calls or results.

use std::collections::{BTreeMap, HashMap, HashSet};

use agentmsg_runtime::project::{Problem, ProblemKind, Validator, NO_RESULT_TEXT};
use agentmsg_runtime::{
    AgentMessage, LlmMessage, Message, MessageId, TextContent, ToolResultMessage, TurnId,
};

use crate::load::Line;

/// What repair does to the lines, by position (the index of a line among the
/// non-blank lines read).
#[derive(Debug, Default)]
pub struct Plan {
    /// Results to drop, with why.
    pub drop: BTreeMap<usize, String>,
    /// Synthetic results to write after a position, with what to report.
    pub inserts: BTreeMap<usize, Vec<(LlmMessage, String)>>,
    /// Whether the lines name their parents (a session tree): then calls and
    /// results pair on each branch, not in file order, and the plan leaves
    /// them as they are (`prepare` pairs the context it projects).
    pub tree: bool,
}

/// An assistant turn with calls that are not all answered yet.
#[derive(Debug)]
struct Turn {
    /// The line number of the turn.
    line: usize,
    timestamp: u64,
    turn_id: Option<TurnId>,
    id: Option<MessageId>,
    /// Its calls, `(id, name)`, in order.
    calls: Vec<(String, String)>,
    /// How many results each call id got (a result answers the latest earlier
    /// call with its id that has none yet).
    answered: HashMap<String, usize>,
    unanswered: usize,
    /// The positions of the results right after the turn (before the next
    /// message that is not a result; lines that are no message do not end it).
    results: Vec<usize>,
}

/// Decides the [`Plan`], fed one line at a time.
#[derive(Debug, Default)]
pub struct Planner {
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

impl Planner {
    /// Looks at the line at `position`.
    pub fn add(&mut self, position: usize, line: &Line) {
        if !self.tree && memchr::memmem::find(&line.raw, b"\"parentId\"").is_some() {
            self.tree = true;
        }
        let stand_in;
        let message = match line.message().and_then(AgentMessage::as_llm) {
            Some(message) => message,
            None => match line.stand_in() {
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
                let calls: Vec<(String, String)> = assistant
                    .tool_calls()
                    .map(|c| (c.id.clone(), c.name.clone()))
                    .collect();
                self.run = None;
                if calls.is_empty() {
                    return;
                }
                for (id, _) in &calls {
                    self.open.entry(id.clone()).or_default().push(position);
                }
                let decoded = line.message();
                self.turns.insert(
                    position,
                    Turn {
                        line: line.number,
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

    /// The plan, once every line was added.
    pub fn finish(self) -> Plan {
        if self.tree {
            // Two branches may each answer a call, and a branch abandoned on
            // an open call is history: file order says nothing of either.
            return Plan {
                tree: true,
                ..Plan::default()
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
        let mut inserts: BTreeMap<usize, Vec<(LlmMessage, String)>> = BTreeMap::new();
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
            for (id, name) in &turn.calls {
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
                inserts.entry(after).or_default().push((message, what));
            }
        }
        Plan {
            drop,
            inserts,
            tree: false,
        }
    }
}
