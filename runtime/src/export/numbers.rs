//! The numbers of a session: totals, models, time spent, and each reply's
//! tokens and cost for the chart.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape::html_string;
use crate::session::Entry;
use crate::{AssistantMessage, Message, Usage};

/// What a reply cost.
#[derive(Clone, Copy)]
pub(super) enum ReplyCost {
    /// As the transcript says.
    Known(f64),
    /// Priced from the price database at the reply's date (the transcript says
    /// nothing, or zero).
    Estimated(f64),
    /// Nobody knows: never counted as zero.
    Unknown,
}

/// The cost of `a`: its own, else the price database's, else unknown (as
/// `agentmsg stats` counts it).
pub(super) fn reply_cost(a: &AssistantMessage) -> ReplyCost {
    if let Some(c) = a.usage.cost.filter(|c| c.total != 0.0) {
        return ReplyCost::Known(c.total);
    }
    match estimate(a) {
        Some(total) => ReplyCost::Estimated(total),
        None => ReplyCost::Unknown,
    }
}

/// The total the catalog prices `a` at (the page shows no other part of
/// it, so the price database is asked once).
#[cfg(any_provider)]
fn estimate(a: &AssistantMessage) -> Option<f64> {
    if a.usage.total() == 0 {
        return None;
    }
    crate::providers::Catalog::builtin().total_cost_of(a)
}

#[cfg(not(any_provider))]
fn estimate(_: &AssistantMessage) -> Option<f64> {
    None
}

/// The totals of every message of a session (all branches: what was
/// spent).
#[derive(Default)]
pub(super) struct Totals {
    messages: BTreeMap<String, usize>,
    usage: Usage,
    cost: f64,
    estimated: usize,
    unknown: usize,
    replies: usize,
    tool_calls: usize,
    tool_errors: usize,
    models: BTreeMap<String, usize>,
    first: u64,
    last: u64,
}

impl Totals {
    /// Counts `entry` in; a reply's cost, as [`reply_cost`] says it.
    pub fn add(&mut self, entry: &Entry) -> Option<ReplyCost> {
        let t = self;
        if !entry.in_tree() {
            return None;
        }
        match t.messages.get_mut(entry.kind().name()) {
            Some(n) => *n += 1,
            None => {
                t.messages.insert(entry.kind().name().to_owned(), 1);
            }
        }
        let ts = entry.timestamp();
        if ts > 0 {
            t.first = if t.first == 0 { ts } else { t.first.min(ts) };
            t.last = t.last.max(ts);
        }
        match entry.message().and_then(|m| m.as_llm()) {
            Some(Message::Assistant(a)) => {
                t.replies += 1;
                t.usage = t.usage.combine(&a.usage);
                t.tool_calls += a.tool_calls().count();
                let cost = reply_cost(a);
                match cost {
                    ReplyCost::Known(c) => t.cost += c,
                    ReplyCost::Estimated(c) => {
                        t.cost += c;
                        t.estimated += 1;
                    }
                    ReplyCost::Unknown => t.unknown += 1,
                }
                let name = if a.model.is_empty() {
                    "(unknown model)".to_owned()
                } else if a.provider.is_empty() {
                    a.model.clone()
                } else {
                    format!("{}/{}", a.provider, a.model)
                };
                *t.models.entry(name).or_default() += 1;
                return Some(cost);
            }
            Some(Message::ToolResult(r)) if r.is_error => t.tool_errors += 1,
            _ => {}
        }
        None
    }

    /// The totals as HTML (a definition list).
    pub fn write_html(&self, out: &mut String) {
        let cost = if self.unknown > 0 && self.cost == 0.0 {
            "<span class=\"unknown\">unknown</span>".to_owned()
        } else {
            let mut cost = format!("${:.4}", self.cost);
            if self.estimated > 0 {
                let _ = write!(
                    cost,
                    " ({} replies priced from the price database)",
                    self.estimated
                );
            }
            if self.unknown > 0 {
                let _ = write!(
                    cost,
                    " + <span class=\"unknown\">unknown for {} replies</span>",
                    self.unknown
                );
            }
            cost
        };
        let u = &self.usage;
        let span = if self.last > self.first && self.first > 0 {
            duration(self.last - self.first)
        } else {
            "unknown".to_owned()
        };
        let kinds: Vec<String> = self
            .messages
            .iter()
            .map(|(k, n)| format!("{n} {}", html_string(k)))
            .collect();
        let models: Vec<String> = self
            .models
            .iter()
            .map(|(m, n)| format!("{} ({n})", html_string(m)))
            .collect();
        let _ = write!(
            out,
            "<dl class=\"totals\"><dt>entries</dt><dd>{}</dd><dt>replies</dt><dd>{}, {} tool calls, {} tool errors</dd><dt>tokens</dt><dd>{} in, {} out, {} cache read, {} cache write</dd><dt>cost</dt><dd>{cost}</dd><dt>models</dt><dd>{}</dd><dt>time spent</dt><dd>{span}</dd></dl>",
            kinds.join(", "),
            self.replies,
            self.tool_calls,
            self.tool_errors,
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            if models.is_empty() { "none".to_owned() } else { models.join(", ") },
        );
    }
}

fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// At most this many bars in the chart: longer paths sum neighbouring
/// replies (the page's script draws it for the chosen leaf's path).
pub(super) const MAX_BARS: usize = 300;

/// The numbers of one reply that the chart shows: input, output, cache read
/// and cache write tokens, and its cost (`None`: unknown, never zero), given
/// as [`reply_cost`] says it.
pub(super) fn reply_numbers(
    a: &AssistantMessage,
    cost: ReplyCost,
) -> (u64, u64, u64, u64, Option<f64>) {
    let cost = match cost {
        ReplyCost::Known(c) | ReplyCost::Estimated(c) => Some(c),
        ReplyCost::Unknown => None,
    };
    (
        a.usage.input,
        a.usage.output,
        a.usage.cache_read,
        a.usage.cache_write,
        cost,
    )
}

/// Where the script draws the chart, and its legend.
pub(super) const CHART: &str = "<div id=\"am-chart\"></div>\
<p class=\"legend\"><span class=\"k t-in\"></span>input <span class=\"k t-cr\"></span>cache read <span class=\"k t-cw\"></span>cache write <span class=\"k t-out\"></span>output <span class=\"k t-cost\"></span>cost <span class=\"k t-unknown\"></span>cost unknown</p>";
