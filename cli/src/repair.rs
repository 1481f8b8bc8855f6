//! `agentmsg repair`: a copy of a transcript with its tool calls and results
//! paired, changing nothing else.
//!
//! What a stored transcript is repaired for: to be read back and resumed by any
//! tool, and to be sent (after the usual projection) without a provider refusing
//! it. So repair fixes the pairing of calls and results, which is broken for
//! every target alike, and nothing that depends on the target or that is history:
//!
//! - a tool call with no result gets a synthetic error result ("No result
//!   provided", `isError` true, the turn's timestamp and `turnId`, and the id
//!   `<turn id>/<call id>` when the turn has an id), written after
//!   the results the turn already has;
//! - a result that answers no earlier call, and a second result for a call, are
//!   dropped;
//! - a torn last line (a crash mid-write) is dropped, so that the next append
//!   starts on a line of its own.
//!
//! It does not drop or rewrite thinking, redacted thinking or signatures (they
//! are replayed to the model that wrote them), does not map tool-call ids, does
//! not skip failed turns or the results of their calls, does not move misplaced
//! results, and does not touch images. Every line it keeps is written byte for
//! byte, custom, unknown and even undecodable lines included; only the synthetic
//! results are new text. The output is the same on every run (no clock, no
//! random ids).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use agentmsg_runtime::{
    validate, AgentMessage, LlmMessage, Message, MessageId, ProblemKind, TextContent,
    ToolResultMessage, NO_RESULT_TEXT,
};

use crate::error::CliError;
use crate::load::{load_file, Body, Format, Loaded};
use crate::Outcome;

/// The arguments of `agentmsg repair`.
#[derive(Debug, clap::Args)]
pub struct RepairArgs {
    /// A transcript file (JSON Lines, or one JSON array; the copy is JSON Lines;
    /// `-` reads standard input).
    pub file: PathBuf,
    /// Where to write the repaired copy (may be FILE itself: it is replaced
    /// atomically).
    #[arg(short, long, required_unless_present = "dry_run")]
    pub output: Option<PathBuf>,
    /// Print what would change, write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// One change repair makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// The line it concerns.
    pub line: usize,
    /// What was done.
    pub what: String,
}

/// The repaired text and what changed.
#[derive(Debug)]
pub struct Repaired {
    /// The new transcript, JSON Lines.
    pub text: Vec<u8>,
    /// What changed, in line order.
    pub fixes: Vec<Fix>,
}

/// The calls of each assistant message (by LLM index) that no result answers: a
/// result answers the latest earlier call with its id that has no result yet
/// (so two calls sharing an id in one turn need two results).
fn unanswered(messages: &[&Message]) -> HashMap<usize, Vec<(String, String)>> {
    let mut open: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut answered: HashMap<(usize, &str), usize> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        match m {
            Message::Assistant(a) => {
                for call in a.tool_calls() {
                    open.entry(call.id.as_str()).or_default().push(i);
                }
            }
            Message::ToolResult(r) => {
                let id = r.tool_call_id.as_str();
                if let Some(owner) = open.get_mut(id).and_then(Vec::pop) {
                    *answered.entry((owner, id)).or_default() += 1;
                }
            }
            _ => {}
        }
    }
    let mut missing: HashMap<usize, Vec<(String, String)>> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        if let Message::Assistant(a) = m {
            for call in a.tool_calls() {
                match answered.get_mut(&(i, call.id.as_str())) {
                    Some(n) if *n > 0 => *n -= 1,
                    _ => missing
                        .entry(i)
                        .or_default()
                        .push((call.id.clone(), call.name.clone())),
                }
            }
        }
    }
    missing
}

/// Repairs a loaded transcript (see the module documentation).
pub fn repair(loaded: &Loaded) -> Result<Repaired, CliError> {
    // Positions in `loaded.lines` of the LLM messages.
    let mut positions = Vec::new();
    let mut messages = Vec::new();
    for (position, line) in loaded.lines.iter().enumerate() {
        if let Some(m) = line.message().and_then(AgentMessage::as_llm) {
            positions.push(position);
            messages.push(m);
        }
    }
    let mut drop: BTreeMap<usize, String> = BTreeMap::new();
    let mut needs_results: BTreeSet<usize> = BTreeSet::new();
    for problem in validate(&messages) {
        let Some(&position) = positions.get(problem.index) else {
            continue;
        };
        match problem.kind {
            ProblemKind::ResultWithoutCall | ProblemKind::DuplicateResult => {
                drop.insert(position, format!("dropped: {}", problem.detail));
            }
            ProblemKind::MissingResult => {
                needs_results.insert(problem.index);
            }
            _ => {}
        }
    }
    let missing = unanswered(&messages);
    // Synthetic results to write after a position.
    let mut inserts: BTreeMap<usize, Vec<(LlmMessage, String)>> = BTreeMap::new();
    for index in needs_results {
        let (Some(&position), Some(Message::Assistant(turn))) =
            (positions.get(index), messages.get(index))
        else {
            continue;
        };
        let Some(calls) = missing.get(&index) else {
            continue;
        };
        // After the results the turn already has (kept ones), before the next
        // user, assistant or system message.
        let mut after = position;
        for (p, line) in loaded.lines.iter().enumerate().skip(position + 1) {
            match line.message().and_then(AgentMessage::as_llm) {
                Some(Message::ToolResult(_)) if !drop.contains_key(&p) => after = p,
                Some(Message::ToolResult(_)) | None => {}
                Some(_) => break,
            }
        }
        let turn_line = loaded.lines.get(position).and_then(|l| l.message());
        let turn_id = turn_line.and_then(|m| m.turn_id().cloned());
        let turn_message_id = turn_line.and_then(|m| m.id().cloned());
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (id, name) in calls {
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
            message.turn_id = turn_id.clone();
            // Derived from the turn's id, when it has one, so the transcript keeps
            // an id on every line and the output stays the same on every run.
            message.id = turn_message_id
                .as_ref()
                .map(|turn| MessageId::from(format!("{}/{id}{suffix}", turn.as_str())));
            let what = format!(
                "added a synthetic error result for the `{name}` call `{id}` of line {}",
                loaded.lines.get(position).map_or(0, |l| l.number)
            );
            inserts.entry(after).or_default().push((message, what));
        }
    }
    let mut text = Vec::with_capacity(loaded.lines.iter().map(|l| l.raw.len() + 1).sum());
    let mut fixes = Vec::new();
    for (position, line) in loaded.lines.iter().enumerate() {
        if let Some(what) = drop.get(&position) {
            fixes.push(Fix {
                line: line.number,
                what: what.clone(),
            });
        } else if matches!(line.body, Body::Torn) {
            fixes.push(Fix {
                line: line.number,
                what: format!(
                    "dropped the torn last line ({} bytes cut off mid-object)",
                    line.raw.len()
                ),
            });
        } else {
            text.extend_from_slice(&line.raw);
            text.push(b'\n');
        }
        for (message, what) in inserts.get(&position).into_iter().flatten() {
            AgentMessage::Llm(message.clone()).write_line(&mut text)?;
            text.push(b'\n');
            fixes.push(Fix {
                line: line.number,
                what: what.clone(),
            });
        }
    }
    Ok(Repaired { text, fixes })
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".agentmsg-tmp");
    let tmp = PathBuf::from(tmp);
    let fail = |source| CliError::Write {
        path: path.to_owned(),
        source,
    };
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}

/// Runs `agentmsg repair`.
pub fn run(args: &RepairArgs) -> Result<Outcome, CliError> {
    let loaded = load_file(&args.file)?;
    let repaired = repair(&loaded)?;
    let file = args.file.display();
    let mut out = std::io::stdout().lock();
    for fix in &repaired.fixes {
        writeln!(out, "{file}:{}: {}", fix.line, fix.what)?;
    }
    let kept_broken = loaded
        .lines
        .iter()
        .filter(|l| matches!(l.body, Body::Undecodable))
        .count();
    if kept_broken > 0 {
        writeln!(
            out,
            "{file}: note: {kept_broken} undecodable lines kept byte for byte (repair does not guess)"
        )?;
    }
    if loaded.format != Format::Jsonl {
        writeln!(
            out,
            "{file}: note: JSON, not JSON Lines; the copy is JSON Lines, one message per line"
        )?;
    }
    match (&args.output, args.dry_run) {
        (Some(output), false) => {
            write_atomically(output, &repaired.text)?;
            writeln!(
                out,
                "{file}: {} changes, written to {}",
                repaired.fixes.len(),
                output.display()
            )?;
        }
        _ => writeln!(
            out,
            "{file}: {} changes (dry run, nothing written)",
            repaired.fixes.len()
        )?,
    }
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::check::structural_diagnostics;
    use crate::load::load_bytes;

    /// One line of a random transcript. Call ids are unique (`c0`, `c1`… in
    /// order): a reused id makes pairing ambiguous, which `check` reports as
    /// `duplicate-call-id` and repair leaves alone.
    #[derive(Debug, Clone)]
    enum Op {
        User,
        Assistant(usize, &'static str),
        Result(usize),
        Notice,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            Just(Op::User),
            (
                0..4usize,
                proptest::sample::select(&["toolUse", "stop", "error", "aborted"][..]),
            )
                .prop_map(|(calls, stop)| Op::Assistant(calls, stop)),
            (0..8usize).prop_map(Op::Result),
            (0..8usize).prop_map(Op::Result),
            Just(Op::Notice),
        ]
    }

    fn render(ops: &[Op]) -> String {
        let mut out = String::new();
        let mut next_call = 0;
        for (i, op) in ops.iter().enumerate() {
            let line = match op {
                Op::User => format!(r#"{{"role":"user","content":"u{i}","timestamp":{i}}}"#),
                Op::Assistant(calls, stop) => {
                    let blocks: Vec<String> = (0..*calls)
                        .map(|_| {
                            next_call += 1;
                            format!(
                                r#"{{"type":"toolCall","id":"c{}","name":"t","arguments":{{}}}}"#,
                                next_call - 1
                            )
                        })
                        .chain(std::iter::once(r#"{"type":"text","text":"x"}"#.to_owned()))
                        .collect();
                    format!(
                        r#"{{"role":"assistant","content":[{}],"stopReason":"{stop}","timestamp":{i},"id":"m{i}"}}"#,
                        blocks.join(",")
                    )
                }
                Op::Result(k) => format!(
                    r#"{{"role":"toolResult","toolCallId":"c{k}","toolName":"t","content":"r{i}","timestamp":{i}}}"#
                ),
                Op::Notice => format!(r#"{{"role":"notice","n": {i}}}"#),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    #[test]
    fn two_calls_sharing_an_id_in_one_turn_get_two_results() {
        let text = concat!(
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"t","arguments":{}},{"type":"toolCall","id":"a","name":"u","arguments":{}}],"stopReason":"toolUse","id":"m0"}"#,
            "\n"
        );
        let repaired = repair(&load_bytes(text.as_bytes())).unwrap();
        let out = String::from_utf8(repaired.text).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[1].contains(r#""toolName":"t""#) && lines[1].ends_with(r#""id":"m0/a"}"#));
        assert!(lines[2].contains(r#""toolName":"u""#) && lines[2].ends_with(r#""id":"m0/a#2"}"#));
        let after = structural_diagnostics(&load_bytes(out.as_bytes()));
        assert!(
            after.iter().all(|d| !PAIRING.contains(&d.code)),
            "{after:?}"
        );
    }

    const PAIRING: [&str; 3] = ["missing-result", "result-without-call", "duplicate-result"];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// After repair no call lacks a result and no result lacks its call or
        /// repeats one; repairing again changes nothing; every line kept is the
        /// input's, in order.
        #[test]
        fn repair_pairs_every_call(ops in proptest::collection::vec(op(), 0..24)) {
            let text = render(&ops);
            let loaded = load_bytes(text.as_bytes());
            let repaired = repair(&loaded).unwrap();
            let again = load_bytes(&repaired.text);
            let left: Vec<String> = structural_diagnostics(&again)
                .into_iter()
                .filter(|d| PAIRING.contains(&d.code))
                .map(|d| d.render(&"repaired"))
                .collect();
            prop_assert!(left.is_empty(), "{text}\n=>\n{}\n{left:?}", String::from_utf8_lossy(&repaired.text));
            let twice = repair(&again).unwrap();
            prop_assert!(twice.fixes.is_empty(), "{:?}", twice.fixes);
            prop_assert_eq!(&twice.text, &repaired.text);
            let input: Vec<&str> = text.lines().collect();
            let mut next = 0;
            for line in std::str::from_utf8(&repaired.text).unwrap().lines() {
                if let Some(found) = input[next..].iter().position(|l| *l == line) {
                    next += found + 1;
                } else {
                    prop_assert!(line.contains("No result provided"), "{line}");
                }
            }
        }

        /// Nothing panics, whatever the bytes.
        #[test]
        fn any_bytes_are_survived(lines in proptest::collection::vec(
            prop_oneof![
                ".*",
                Just(r#"{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"t","arguments":{}}],"stopReason":"toolUse"}"#.to_owned()),
                Just(r#"{"role":"toolResult","toolCallId":"a","toolName":"t","content":"x"}"#.to_owned()),
                Just(r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":1}"#.to_owned()),
                Just(r#"{"type":"message","message":{"role":"user","content":"hi"}}"#.to_owned()),
                r#"\{"role":"[a-z]{0,6}".{0,20}"#,
                r#"\[.{0,30}"#,
            ],
            0..12,
        ), newline_at_end in any::<bool>()) {
            let mut text = lines.join("\n");
            if newline_at_end {
                text.push('\n');
            }
            let loaded = load_bytes(text.as_bytes());
            let _ = crate::check::all_diagnostics(&loaded);
            let _ = crate::stats::compute(&loaded);
            let repaired = repair(&loaded).unwrap();
            prop_assert!(repaired.text.is_empty() || repaired.text.ends_with(b"\n"));
            let _ = crate::import::import(&text).unwrap();
            let _ = crate::project::project_lines(loaded.messages());
        }
    }
}
