//! `agentmsg stats`: what a transcript holds and what it cost.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::{Cost, Message, Summary, Usage};
use serde::Serialize;

use crate::error::CliError;
use crate::load::{Body, Loaded};
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
    cost: Cost,
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
    cost: Cost,
    /// `cacheRead / (input + cacheRead + cacheWrite)` over every assistant message.
    cache_hit_rate: f64,
    models: Vec<ModelStats>,
}

/// Computes the stats of a loaded transcript.
pub fn compute(loaded: &Loaded) -> Stats {
    let mut stats = Stats {
        lines: loaded.total_lines,
        ..Stats::default()
    };
    let mut summary = Summary::default();
    let mut by_model: BTreeMap<(String, String, String), Summary> = BTreeMap::new();
    for line in &loaded.lines {
        let message = match &line.body {
            Body::Message(m) => m,
            Body::Undecodable => {
                *stats.kinds.entry("(undecodable)".into()).or_default() += 1;
                continue;
            }
            Body::Torn => {
                *stats.kinds.entry("(torn)".into()).or_default() += 1;
                continue;
            }
        };
        summary.add(message);
        if let Some(Message::Assistant(a)) = message.as_llm() {
            let key = (a.provider.clone(), a.model.clone(), a.api.clone());
            by_model.entry(key).or_default().add(message);
        }
    }
    // The counts are the runtime's query summary (`MessageQuery::summarize`).
    stats.messages = summary.messages;
    for (kind, n) in summary.kinds {
        *stats.kinds.entry(kind).or_default() += n;
    }
    stats.kept_unknown = summary.kept_unknown;
    stats.tool_calls = summary.tool_calls;
    stats.tool_calls_by_name = summary.tool_calls_by_name;
    stats.tool_results = summary.tool_results;
    stats.tool_result_errors = summary.tool_result_errors;
    stats.thinking_blocks = summary.thinking_blocks;
    stats.redacted_thinking_blocks = summary.redacted_thinking_blocks;
    stats.stop_reasons = summary.stop_reasons;
    let usage = summary.usage;
    let cost = summary.cost;
    stats.tokens = Tokens::from(&usage);
    stats.cost = cost;
    stats.cache_hit_rate = usage.cache_hit_rate();
    stats.models = by_model
        .into_iter()
        .map(|((provider, model, api), s)| ModelStats {
            provider,
            model,
            api,
            assistant_messages: s.assistant_messages,
            tool_calls: s.tool_calls,
            cost: s.cost,
            tokens: Tokens::from(&s.usage),
            cache_hit_rate: s.usage.cache_hit_rate(),
        })
        .collect();
    stats
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
    let _ = writeln!(
        s,
        "cost: ${:.4} (input ${:.4}, output ${:.4}, cache read ${:.4}, cache write ${:.4})",
        stats.cost.total,
        stats.cost.input,
        stats.cost.output,
        stats.cost.cache_read,
        stats.cost.cache_write
    );
    let _ = writeln!(s, "cache hit rate: {:.1}%", stats.cache_hit_rate * 100.0);
    let _ = writeln!(s, "by model:");
    for m in &stats.models {
        let _ = writeln!(
            s,
            "  {}/{} ({}): {} assistant messages, {} tool calls, cost ${:.4}, cache hit rate {:.1}%",
            name_or_unknown(&m.provider),
            name_or_unknown(&m.model),
            name_or_unknown(&m.api),
            m.assistant_messages,
            m.tool_calls,
            m.cost.total,
            m.cache_hit_rate * 100.0
        );
        let _ = writeln!(s, "    tokens: {}", tokens_line(&m.tokens));
    }
    s
}

/// Runs `agentmsg stats`.
pub fn run(args: &StatsArgs) -> Result<Outcome, CliError> {
    let loaded = crate::session_file::load_file_at(
        &args.file,
        args.leaf.as_deref(),
        crate::session_file::Purpose::Stats,
    )?;
    if let Some(log) = crate::load::foreign_log(&loaded) {
        crate::output::note!("{}: note: {}", args.file.display(), log.note());
    }
    for d in &loaded.diagnostics {
        crate::output::note!("{}", d.render(&args.file.display()));
    }
    let stats = compute(&loaded);
    let mut out = crate::output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &stats)?;
        writeln!(out)?;
    } else {
        out.write_all(render_text(&stats, &args.file.display().to_string()).as_bytes())?;
    }
    Ok(Outcome::Ok)
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
