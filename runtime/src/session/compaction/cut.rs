//! Where a compaction cuts, by each policy: what it summarises, what it
//! keeps, and (pi) the start of a turn it cuts in two.

use std::collections::{HashMap, HashSet};

use super::tokens::{
    estimate_context_tokens, estimate_tokens, pi_context_tokens, pi_estimate_tokens,
};
use crate::custom::{CompactionSummary, ExtensionMessage};
use crate::session::context::SessionContext;
use crate::session::entry::{Entry, EntryKind};
use crate::session::{Session, SessionError, SessionFormat};
use crate::{AgentMessage, Message, MessageId};

/// A message the summary replaces, and the entry it came from.
pub(super) type Span = Vec<(Option<MessageId>, AgentMessage)>;

/// What a policy cut: the messages to summarise, the start of a split turn,
/// the first kept entry.
pub(super) struct Cut {
    pub history: Span,
    pub turn_prefix: Span,
    pub split_turn: bool,
    pub first_kept: MessageId,
    pub first_kept_index: usize,
    pub tokens_before: u64,
    pub previous: Option<CompactionSummary>,
}

/// A path entry as pi's compaction sees it.
enum Node<'a> {
    /// A compaction.
    Compaction(&'a CompactionSummary),
    /// pi's `message` entry (an agentmsg line that is a message).
    Message(&'a AgentMessage),
    /// A `custom_message` or `branch_summary` entry: a user-role message pi
    /// makes of it, a turn's start, not counted in the budget.
    Made(Box<AgentMessage>),
    /// Anything else: a setting, a label, an extension's state, a line kept
    /// undecoded.
    Other,
}

impl Node<'_> {
    fn of(format: SessionFormat, entry: &Entry) -> Node<'_> {
        match &entry.kind {
            EntryKind::Compaction(c) => Node::Compaction(c),
            EntryKind::BranchSummary(b) => Node::Made(Box::new(AgentMessage::custom(b.clone()))),
            EntryKind::CustomMessage(c) => Node::Made(Box::new(AgentMessage::custom(c.clone()))),
            EntryKind::Message(m) if matches!(format, SessionFormat::Pi { .. }) => Node::Message(m),
            EntryKind::Message(m) => {
                if let Some(c) = m.downcast_ref::<CompactionSummary>() {
                    Node::Compaction(c)
                } else if m.is_unknown() || m.downcast_ref::<ExtensionMessage>().is_some() {
                    Node::Other
                } else {
                    Node::Message(m)
                }
            }
            _ => Node::Other,
        }
    }

    fn role(&self) -> Option<&str> {
        match self {
            Node::Message(m) => Some(m.kind()),
            _ => None,
        }
    }

    /// pi's `findValidCutPoints`: not a tool result, nor a role pi does not
    /// know.
    fn is_cut_point(&self) -> bool {
        matches!(self, Node::Made(_))
            || matches!(
                self.role(),
                Some(
                    "bashExecution"
                        | "custom"
                        | "branchSummary"
                        | "compactionSummary"
                        | "user"
                        | "assistant"
                )
            )
    }

    /// pi's `findTurnStartIndex`: a user's message, command, custom message
    /// or branch summary.
    fn starts_turn(&self) -> bool {
        matches!(self, Node::Made(_)) || matches!(self.role(), Some("user" | "bashExecution"))
    }

    /// pi's `getMessageFromEntryForCompaction`.
    fn message(&self) -> Option<AgentMessage> {
        match self {
            Node::Message(m) => Some((*m).clone()),
            Node::Made(m) => Some((**m).clone()),
            _ => None,
        }
    }
}

/// pi 0.73.1's `prepareCompaction`: from the last compaction's first kept
/// entry (the path's start when there is none), walk back from the leaf
/// adding pi's estimate of each `message` entry until `keep_recent_tokens`
/// is reached; cut at the first valid cut point at or after that entry
/// (moving forward), then back over the settings, labels and other entries
/// right before it. A cut on anything but a user's message splits the turn
/// it lies in: the turn's start up to the cut is summarised on its own.
/// `None` when the leaf is a compaction, or the first kept entry has no id.
pub(super) fn pi(
    session: &Session,
    leaf: Option<&str>,
    keep_recent_tokens: u64,
) -> Result<Option<Cut>, SessionError> {
    let path = session.path(leaf)?;
    let nodes: Vec<Node<'_>> = path.iter().map(|e| Node::of(session.format(), e)).collect();
    if matches!(nodes.last(), Some(Node::Compaction(_))) {
        return Ok(None);
    }
    let previous = nodes.iter().enumerate().rev().find_map(|(at, n)| match n {
        Node::Compaction(c) => Some((at, *c)),
        _ => None,
    });
    let (previous, start) = match previous {
        Some((at, c)) => {
            let kept = c
                .first_kept_id
                .as_ref()
                .and_then(|id| path.iter().position(|e| e.id() == Some(id)));
            (Some(c.clone()), kept.unwrap_or(at + 1))
        }
        None => (None, 0),
    };
    let end = nodes.len();
    // An agentmsg line without an id cannot be kept from (pi's entries all
    // have ids).
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| nodes[i].is_cut_point() && path[i].id().is_some())
        .collect();
    let (cut, turn_start) = match cut_points.first() {
        None => (start, None),
        Some(&first) => {
            let mut cut = first;
            let mut kept = 0u64;
            for i in (start..end).rev() {
                let Node::Message(m) = &nodes[i] else {
                    continue;
                };
                kept += pi_estimate_tokens(m);
                if kept >= keep_recent_tokens {
                    if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                        cut = c;
                    }
                    break;
                }
            }
            while cut > start {
                match nodes[cut - 1] {
                    Node::Compaction(_) | Node::Message(_) => break,
                    _ => cut -= 1,
                }
            }
            let is_user = nodes[cut].role() == Some("user");
            let turn_start = if is_user {
                None
            } else {
                (start..=cut).rev().find(|&i| nodes[i].starts_turn())
            };
            (cut, turn_start)
        }
    };
    let Some(first_kept) = path.get(cut).and_then(|e| e.id()).cloned() else {
        return Ok(None);
    };
    let history_end = turn_start.unwrap_or(cut);
    let span = |range: std::ops::Range<usize>| -> Span {
        range
            .filter_map(|i| Some((path[i].id().cloned(), nodes[i].message()?)))
            .collect()
    };
    let context = session.context(leaf)?;
    let kept: HashSet<&MessageId> = path[cut..]
        .iter()
        .filter(|e| e.as_compaction().is_none())
        .filter_map(|e| e.id())
        .collect();
    let first_kept_index = context
        .entry_ids
        .iter()
        .position(|id| id.as_ref().is_some_and(|id| kept.contains(id)))
        .unwrap_or(context.messages.len());
    Ok(Some(Cut {
        history: span(start..history_end),
        turn_prefix: turn_start.map(|t| span(t..cut)).unwrap_or_default(),
        split_turn: turn_start.is_some(),
        first_kept,
        first_kept_index,
        tokens_before: pi_context_tokens(&context.messages).tokens,
        previous,
    }))
}

/// agentmsg's own rule: keep the most recent messages worth at least
/// `keep_recent_tokens` (and at least the last message), summarise the rest;
/// the cut never falls between a tool call and its result (it moves back to
/// the assistant message that made the call), and never on a message
/// without an entry id. A turn is never split.
pub(super) fn agentmsg(context: &SessionContext<'_>, keep_recent_tokens: u64) -> Option<Cut> {
    let tokens: Vec<u64> = context
        .messages
        .iter()
        .map(|m| estimate_tokens(m))
        .collect();
    let mut kept = 0u64;
    let mut cut = context.messages.len();
    while cut > 0 && kept < keep_recent_tokens {
        cut -= 1;
        kept += tokens[cut];
    }
    // The last message is always kept: a compaction keeps from an entry.
    cut = cut.min(context.messages.len().saturating_sub(1));
    // Where each call was made.
    let mut calls = HashMap::new();
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
    let previous = context
        .messages
        .first()
        .and_then(|m| m.downcast_ref::<CompactionSummary>())
        .cloned();
    let from = usize::from(previous.is_some());
    if cut <= from {
        return None;
    }
    let first_kept = context.entry_ids.get(cut).cloned().flatten()?;
    let history = context.messages[from..cut]
        .iter()
        .zip(&context.entry_ids[from..cut])
        .map(|(m, id)| (id.clone(), (**m).clone()))
        .collect();
    Some(Cut {
        history,
        turn_prefix: Vec::new(),
        split_turn: false,
        first_kept,
        first_kept_index: cut,
        tokens_before: estimate_context_tokens(&context.messages).tokens,
        previous,
    })
}

fn is_cut_point(context: &SessionContext<'_>, at: usize) -> bool {
    let message = &context.messages[at];
    let is_result = matches!(message.as_llm(), Some(Message::ToolResult(_)));
    !is_result && context.entry_ids.get(at).is_some_and(Option::is_some)
}
