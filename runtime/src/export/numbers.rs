//! The numbers of a session: totals, models, time spent, and each reply's
//! tokens and cost as an SVG chart.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape::html_string;
use crate::{AssistantMessage, Cost, Message, Session, Usage};

/// What a reply cost.
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
        Some(c) => ReplyCost::Estimated(c.total),
        None => ReplyCost::Unknown,
    }
}

#[cfg(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "gemini"
))]
fn estimate(a: &AssistantMessage) -> Option<Cost> {
    if a.usage.total() == 0 {
        return None;
    }
    crate::providers::Catalog::builtin().cost_of(a)
}

#[cfg(not(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "gemini"
)))]
fn estimate(_: &AssistantMessage) -> Option<Cost> {
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
    /// The totals of `session`.
    pub fn of(session: &Session) -> Self {
        let mut t = Self::default();
        for entry in session.entries() {
            if !entry.in_tree() {
                continue;
            }
            *t.messages
                .entry(entry.kind().name().to_owned())
                .or_default() += 1;
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
                    match reply_cost(a) {
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
                }
                Some(Message::ToolResult(r)) if r.is_error => t.tool_errors += 1,
                _ => {}
            }
        }
        t
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

/// One bar of the chart: the replies it sums.
#[derive(Default, Clone)]
struct Bar {
    first: usize,
    replies: usize,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    cost: f64,
    unknown: usize,
}

/// At most this many bars: longer paths sum neighbouring replies.
const MAX_BARS: usize = 300;

/// The tokens and cost of each reply on `path` (entry indexes) as an SVG
/// chart; empty when it has no reply.
pub(super) fn chart(session: &Session, path: &[usize]) -> String {
    let replies: Vec<&AssistantMessage> = path
        .iter()
        .filter_map(|&i| match session.entries()[i].message()?.as_llm()? {
            Message::Assistant(a) => Some(a),
            _ => None,
        })
        .collect();
    if replies.is_empty() {
        return String::new();
    }
    let per_bar = replies.len().div_ceil(MAX_BARS);
    let bars: Vec<Bar> = replies
        .chunks(per_bar)
        .enumerate()
        .map(|(n, group)| {
            let mut bar = Bar {
                first: n * per_bar + 1,
                replies: group.len(),
                ..Bar::default()
            };
            for a in group {
                bar.input += a.usage.input;
                bar.output += a.usage.output;
                bar.cache_read += a.usage.cache_read;
                bar.cache_write += a.usage.cache_write;
                match reply_cost(a) {
                    ReplyCost::Known(c) | ReplyCost::Estimated(c) => bar.cost += c,
                    ReplyCost::Unknown => bar.unknown += 1,
                }
            }
            bar
        })
        .collect();
    let max_tokens = bars
        .iter()
        .map(|b| b.input + b.output + b.cache_read + b.cache_write)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let max_cost = bars.iter().map(|b| b.cost).fold(0.0_f64, f64::max);
    let (w, h) = (4.0_f64, 80.0_f64);
    let width = w * bars.len() as f64;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg class=\"chart\" role=\"img\" aria-label=\"tokens and cost per reply\" viewBox=\"0 0 {width} {}\" preserveAspectRatio=\"none\" width=\"100%\" height=\"110\">",
        h + 12.0
    );
    let mut cost_points = Vec::new();
    for (n, bar) in bars.iter().enumerate() {
        let x = n as f64 * w;
        let mut y = h;
        let _ = write!(out, "<g><title>");
        let label = if bar.replies == 1 {
            format!("reply {}", bar.first)
        } else {
            format!("replies {}–{}", bar.first, bar.first + bar.replies - 1)
        };
        let cost = if bar.unknown == bar.replies {
            "cost unknown".to_owned()
        } else if bar.unknown > 0 {
            format!("${:.4} + unknown for {}", bar.cost, bar.unknown)
        } else {
            format!("${:.4}", bar.cost)
        };
        let _ = write!(
            out,
            "{label}: {} in, {} out, {} cache read, {} cache write; {}</title>",
            bar.input,
            bar.output,
            bar.cache_read,
            bar.cache_write,
            html_string(&cost)
        );
        for (value, class) in [
            (bar.cache_read, "t-cr"),
            (bar.input, "t-in"),
            (bar.cache_write, "t-cw"),
            (bar.output, "t-out"),
        ] {
            if value == 0 {
                continue;
            }
            let height = value as f64 / max_tokens * h;
            y -= height;
            let _ = write!(
                out,
                "<rect class=\"{class}\" x=\"{x:.1}\" y=\"{y:.2}\" width=\"{:.1}\" height=\"{height:.2}\"/>",
                w * 0.8
            );
        }
        if bar.unknown > 0 {
            let _ = write!(
                out,
                "<rect class=\"t-unknown\" x=\"{x:.1}\" y=\"{}\" width=\"{:.1}\" height=\"8\"/>",
                h + 3.0,
                w * 0.8
            );
        }
        out.push_str("</g>");
        if max_cost > 0.0 {
            cost_points.push(format!(
                "{:.1},{:.2}",
                x + w * 0.4,
                h - bar.cost / max_cost * h
            ));
        }
    }
    if !cost_points.is_empty() {
        let _ = write!(
            out,
            "<polyline class=\"t-cost\" fill=\"none\" points=\"{}\"/>",
            cost_points.join(" ")
        );
    }
    out.push_str("</svg>");
    out.push_str(
        "<p class=\"legend\"><span class=\"k t-in\"></span>input <span class=\"k t-cr\"></span>cache read <span class=\"k t-cw\"></span>cache write <span class=\"k t-out\"></span>output <span class=\"k t-cost\"></span>cost <span class=\"k t-unknown\"></span>cost unknown</p>",
    );
    out
}
