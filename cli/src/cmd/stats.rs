//! `agentmsg stats`: what a transcript holds and what it cost.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::providers::Catalog;
use agentmsg_runtime::transcript::MessageStats;
use agentmsg_runtime::{Cost, Message, Usage};
use serde::Serialize;

use crate::error::CliError;
use crate::input::{load_file_at, stream_transcript, tree_diagnostics, Purpose};
use crate::load::{Body, Line, Loaded, Sniff};
use crate::Outcome;

/// The arguments of `agentmsg stats`.
#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// A transcript file (JSON Lines, or one JSON array; `-` reads standard input).
    pub file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// For a session file: the entry whose context to count (the session's
    /// leaf when absent).
    #[arg(long)]
    pub leaf: Option<String>,
}

/// Token counts, summed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    input: u64,
    output: u64,
    reasoning: u64,
    cache_read: u64,
    cache_write: u64,
    total: u64,
}

impl From<&Usage> for Tokens {
    fn from(u: &Usage) -> Self {
        Self {
            input: u.input,
            output: u.output,
            reasoning: u.reasoning,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            total: u.total(),
        }
    }
}

/// The numbers of one model.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelStats {
    provider: String,
    model: String,
    api: String,
    assistant_messages: usize,
    tool_calls: usize,
    tokens: Tokens,
    /// `null` when a reply of the model has no price.
    cost: Option<Cost>,
    /// Replies that used tokens and whose cost is unknown.
    unpriced_replies: usize,
    cache_hit_rate: f64,
}

/// Everything `stats` reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    lines: usize,
    messages: usize,
    /// Lines by `"role"` (LLM role or custom kind); undecodable and torn lines
    /// under `(undecodable)` and `(torn)`.
    kinds: BTreeMap<String, usize>,
    /// Lines kept undecoded (kinds this build does not know, newer versions,
    /// bodies that do not decode).
    kept_unknown: usize,
    tool_calls: usize,
    tool_calls_by_name: BTreeMap<String, usize>,
    tool_results: usize,
    tool_result_errors: usize,
    thinking_blocks: usize,
    redacted_thinking_blocks: usize,
    stop_reasons: BTreeMap<String, usize>,
    tokens: Tokens,
    /// What every reply cost; `null` when the cost of one is unknown
    /// (`unpricedReplies`), never a sum that leaves them out.
    cost: Option<Cost>,
    /// What the replies with a known cost cost.
    priced_cost: Cost,
    /// Assistant messages without a cost whose model the price database (or
    /// the catalog) prices: their cost is in `cost`, estimated from their usage
    /// at the rates of their date.
    priced_from_catalog: usize,
    /// Replies that used tokens and carry no cost that any price list knows.
    unpriced_replies: usize,
    /// The models of those replies.
    unpriced_models: Vec<String>,
    /// `cacheRead / (input + cacheRead + cacheWrite)` over every assistant message.
    cache_hit_rate: f64,
    models: Vec<ModelStats>,
}

/// Computes the stats of a loaded transcript.
pub fn compute(loaded: &Loaded) -> Stats {
    let mut tally = Tally::default();
    for line in &loaded.lines {
        tally.add(line);
    }
    tally.finish(loaded.total_lines)
}

/// [`Stats`] gathered one line at a time, so a file of any size is read in the
/// space of its longest line.
#[derive(Debug, Default)]
pub struct Tally {
    /// Undecodable and torn lines, by kind.
    lines: BTreeMap<String, usize>,
    /// The messages, counted by the runtime's query summary
    /// (`MessageQuery::summarize` counts the same way).
    summary: MessageStats,
    by_model: BTreeMap<(String, String, String), MessageStats>,
    /// What the catalog estimates for the messages that carry no cost, in
    /// all and by model.
    estimated: Cost,
    estimated_by_model: BTreeMap<(String, String, String), Cost>,
    priced_from_catalog: usize,
    /// The replies whose cost is unknown, in all and by model.
    unpriced: usize,
    unpriced_by_model: BTreeMap<(String, String, String), usize>,
}

impl Tally {
    /// Counts the next line.
    pub fn add(&mut self, line: &Line) {
        let message = match &line.body {
            Body::Message(m) => m,
            Body::Undecodable => {
                *self.lines.entry("(undecodable)".into()).or_default() += 1;
                return;
            }
            Body::Torn => {
                *self.lines.entry("(torn)".into()).or_default() += 1;
                return;
            }
        };
        self.summary.add(message);
        if let Some(Message::Assistant(a)) = message.as_llm() {
            let key = (a.provider.clone(), a.model.clone(), a.api.clone());
            self.by_model.entry(key.clone()).or_default().add(message);
            // A reply without a cost (a transcript written before prices were
            // known, or by a tool that does not price) is priced at its date
            // when its model's price is known, else its cost is unknown.
            let unpriced = !a.usage.cost.is_some_and(|c| c.total != 0.0);
            if unpriced && a.usage.total() > 0 {
                match Catalog::builtin().cost_of(a) {
                    Some(cost) => {
                        self.estimated += cost;
                        *self.estimated_by_model.entry(key).or_default() += cost;
                        self.priced_from_catalog += 1;
                    }
                    None => {
                        self.unpriced += 1;
                        *self.unpriced_by_model.entry(key).or_default() += 1;
                    }
                }
            }
        }
    }

    /// The stats of a file of `total_lines` lines (blank ones included).
    pub fn finish(self, total_lines: usize) -> Stats {
        let summary = self.summary;
        let mut kinds = self.lines;
        for (kind, n) in summary.kinds {
            *kinds.entry(kind).or_default() += n;
        }
        Stats {
            lines: total_lines,
            messages: summary.messages,
            kinds,
            kept_unknown: summary.kept_unknown,
            tool_calls: summary.tool_calls,
            tool_calls_by_name: summary.tool_calls_by_name,
            tool_results: summary.tool_results,
            tool_result_errors: summary.tool_result_errors,
            thinking_blocks: summary.thinking_blocks,
            redacted_thinking_blocks: summary.redacted_thinking_blocks,
            stop_reasons: summary.stop_reasons,
            tokens: Tokens::from(&summary.usage),
            cost: (self.unpriced == 0).then_some(summary.cost + self.estimated),
            priced_cost: summary.cost + self.estimated,
            priced_from_catalog: self.priced_from_catalog,
            unpriced_replies: self.unpriced,
            unpriced_models: self
                .unpriced_by_model
                .keys()
                .map(|(_, model, _)| name_or_unknown(model).to_owned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            cache_hit_rate: summary.usage.cache_hit_rate(),
            models: self
                .by_model
                .into_iter()
                .map(|((provider, model, api), s)| {
                    let key = (provider, model, api);
                    let unpriced = self.unpriced_by_model.get(&key).copied().unwrap_or(0);
                    let estimated = self
                        .estimated_by_model
                        .get(&key)
                        .copied()
                        .unwrap_or_default();
                    (key, s, unpriced, estimated)
                })
                .map(
                    |((provider, model, api), s, unpriced, estimated)| ModelStats {
                        cost: (unpriced == 0).then_some(s.cost + estimated),
                        unpriced_replies: unpriced,
                        provider,
                        model,
                        api,
                        assistant_messages: s.assistant_messages,
                        tool_calls: s.tool_calls,
                        tokens: Tokens::from(&s.usage),
                        cache_hit_rate: s.usage.cache_hit_rate(),
                    },
                )
                .collect(),
        }
    }
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn tokens_line(t: &Tokens) -> String {
    format!(
        "input {}, output {} (reasoning {}), cache read {}, cache write {}, total {}",
        grouped(t.input),
        grouped(t.output),
        grouped(t.reasoning),
        grouped(t.cache_read),
        grouped(t.cache_write),
        grouped(t.total)
    )
}

fn name_or_unknown(s: &str) -> &str {
    if s.is_empty() {
        "?"
    } else {
        s
    }
}

/// The text report.
pub fn render_text(stats: &Stats, file: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{file}: {} lines, {} messages ({} kept undecoded)",
        stats.lines, stats.messages, stats.kept_unknown
    );
    let _ = writeln!(s, "kinds:");
    let width = stats.kinds.keys().map(String::len).max().unwrap_or(0);
    for (kind, n) in &stats.kinds {
        let _ = writeln!(s, "  {kind:<width$}  {n:>7}");
    }
    let mut names: Vec<(&String, &usize)> = stats.tool_calls_by_name.iter().collect();
    names.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let by_name: Vec<String> = names.iter().map(|(n, c)| format!("{n} {c}")).collect();
    let _ = writeln!(
        s,
        "tool calls: {} ({})",
        stats.tool_calls,
        by_name.join(", ")
    );
    let _ = writeln!(
        s,
        "tool results: {} ({} errors)",
        stats.tool_results, stats.tool_result_errors
    );
    let _ = writeln!(
        s,
        "thinking blocks: {} ({} redacted)",
        stats.thinking_blocks, stats.redacted_thinking_blocks
    );
    let reasons: Vec<String> = stats
        .stop_reasons
        .iter()
        .map(|(r, n)| format!("{r} {n}"))
        .collect();
    let _ = writeln!(s, "stop reasons: {}", reasons.join(", "));
    let _ = writeln!(s, "tokens: {}", tokens_line(&stats.tokens));
    let c = &stats.priced_cost;
    let split = format!(
        "input ${:.4}, output ${:.4}, cache read ${:.4}, cache write ${:.4}",
        c.input, c.output, c.cache_read, c.cache_write
    );
    match stats.cost {
        Some(cost) => {
            let _ = writeln!(s, "cost: ${:.4} ({split})", cost.total);
        }
        None => {
            let _ = writeln!(
                s,
                "cost: unknown: {} assistant messages without a price ({}); ${:.4} for the others ({split})",
                stats.unpriced_replies,
                stats.unpriced_models.join(", "),
                c.total
            );
        }
    }
    if stats.priced_from_catalog > 0 {
        let _ = writeln!(
            s,
            "  ({} assistant messages without a cost priced from the price database at their date)",
            stats.priced_from_catalog
        );
    }
    let _ = writeln!(s, "cache hit rate: {:.1}%", stats.cache_hit_rate * 100.0);
    let _ = writeln!(s, "by model:");
    for m in &stats.models {
        let _ = writeln!(
            s,
            "  {}/{} ({}): {} assistant messages, {} tool calls, cost {}, cache hit rate {:.1}%",
            name_or_unknown(&m.provider),
            name_or_unknown(&m.model),
            name_or_unknown(&m.api),
            m.assistant_messages,
            m.tool_calls,
            m.cost.map_or_else(
                || format!("unknown ({} without a price)", m.unpriced_replies),
                |c| format!("${:.4}", c.total)
            ),
            m.cache_hit_rate * 100.0
        );
        let _ = writeln!(s, "    tokens: {}", tokens_line(&m.tokens));
    }
    s
}

/// Runs `agentmsg stats`.
pub fn run(args: &StatsArgs) -> Result<Outcome, CliError> {
    let file = crate::output::shown(&args.file);
    let leaf = args.leaf.as_deref();
    let stats = match stream_transcript(&args.file, leaf)? {
        // A JSON Lines file: one line at a time, each problem told as it is met.
        Some(mut reader) => {
            let mut tally = Tally::default();
            let mut sniff = Sniff::default();
            let mut read = Vec::new();
            let fail = |source| CliError::Read {
                path: args.file.clone(),
                source,
            };
            while let Some(line) = reader.next_line(&mut read).map_err(fail)? {
                sniff.add(&line);
                tally.add(&line);
                // Held back while the file may be one pretty-printed message.
                if !sniff.starts_broken() {
                    for d in read.drain(..) {
                        crate::output::note!("{}", d.render(&file));
                    }
                }
            }
            if sniff.may_be_one_pretty_object() {
                whole(&args.file, leaf)?
            } else {
                if sniff.names_parents() {
                    read.extend(tree_diagnostics(&args.file)?);
                }
                for d in read.drain(..) {
                    crate::output::note!("{}", d.render(&file));
                }
                if let Some(log) = sniff.foreign() {
                    crate::output::note!("{file}: note: {}", crate::diag::foreign_note(log));
                }
                tally.finish(reader.total_lines())
            }
        }
        None => whole(&args.file, leaf)?,
    };
    let mut out = crate::output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &stats)?;
        writeln!(out)?;
    } else {
        // A kind, a tool's name, a model are the transcript's text.
        let text = render_text(&stats, &crate::output::shown(&args.file).to_string());
        out.write_all(crate::output::escape_controls(&text).as_bytes())?;
    }
    Ok(Outcome::Ok)
}

/// The stats of a file read whole (standard input, another agent's log, the
/// context of a `--leaf`, a JSON array, one pretty-printed message), its
/// problems told first.
fn whole(path: &std::path::Path, leaf: Option<&str>) -> Result<Stats, CliError> {
    let loaded = load_file_at(path, leaf, Purpose::Stats)?;
    if let Some(log) = crate::load::foreign_log(&loaded) {
        crate::output::note!(
            "{}: note: {}",
            crate::output::shown(path),
            crate::diag::foreign_note(log)
        );
    }
    for d in &loaded.diagnostics {
        crate::output::note!("{}", d.render(&crate::output::shown(path)));
    }
    Ok(compute(&loaded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_digits() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
