//! `agentmsg check`: every problem of a transcript, by line.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use agentmsg_runtime::project::{ProblemKind, Validator};
use agentmsg_runtime::session::Entry;
use agentmsg_runtime::transcript::dropped_fields;
use agentmsg_runtime::{AgentMessage, Session};

use crate::diag::warning_diagnostic;
use crate::diag::{Diagnostic, Severity};
use crate::error::CliError;
use crate::input::{load_file_at, stream_transcript, Purpose};
use crate::load::{foreign_log, Line, Loaded, Sniff};
use crate::Outcome;

/// The arguments of `agentmsg check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Transcript files (JSON Lines, or one JSON array; `-` reads standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Count warnings as errors (exit 1 when there is any).
    #[arg(long)]
    pub deny_warnings: bool,
    /// Print only the summary line of each file.
    #[arg(long, short, conflicts_with = "json")]
    pub quiet: bool,
    /// Print one JSON array with a report per file instead of text.
    #[arg(long)]
    pub json: bool,
    /// For session files: the entry whose context to check (each session's
    /// leaf when absent).
    #[arg(long)]
    pub leaf: Option<String>,
}

/// One file's report, for `--json`.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct FileReport {
    file: String,
    lines: usize,
    messages: usize,
    errors: usize,
    warnings: usize,
    diagnostics: Vec<JsonDiagnostic>,
}

/// One diagnostic, for `--json`.
#[derive(Debug, serde::Serialize)]
struct JsonDiagnostic {
    line: usize,
    severity: String,
    code: &'static str,
    message: String,
}

/// The severity of a problem `validate` found. Errors are what a provider
/// refuses when the transcript is sent as it is (an orphaned call, a result
/// without its call, a duplicate id, an empty signature or message); a failed
/// turn, and the results of its calls, are history the projection skips.
fn severity(kind: ProblemKind) -> Severity {
    match kind {
        ProblemKind::FailedTurn | ProblemKind::ResultOfFailedTurn => Severity::Warning,
        _ => Severity::Error,
    }
}

fn code(kind: ProblemKind) -> &'static str {
    match kind {
        ProblemKind::FailedTurn => "failed-turn",
        ProblemKind::MissingResult => "missing-result",
        ProblemKind::ResultWithoutCall => "result-without-call",
        ProblemKind::ResultOfFailedTurn => "result-of-failed-turn",
        ProblemKind::DuplicateResult => "duplicate-result",
        ProblemKind::MisplacedResult => "misplaced-result",
        ProblemKind::DuplicateCallId => "duplicate-call-id",
        ProblemKind::EmptyCallId => "empty-call-id",
        ProblemKind::EmptySignature => "empty-signature",
        ProblemKind::EmptyMessage => "empty-message",
        ProblemKind::InvalidMedia => "invalid-media",
        _ => "problem",
    }
}

/// Everything `check` finds in a transcript, fed one line at a time, so a file
/// of any size is checked in the space of its longest line plus what a later
/// line can still change (the calls not answered yet, the call ids seen) and
/// the diagnostics themselves.
#[derive(Debug, Default)]
pub struct Checker {
    validator: Validator,
    /// Lines whose message stands in for a kept line: what is wrong with the
    /// kept line is its own diagnostic, not repeated as a structural one.
    stand_ins: HashSet<usize>,
    diagnostics: Vec<Diagnostic>,
    messages: usize,
    /// The line of each message id seen, and the ids seen twice: a session
    /// needs each id once (a tree's own read finds them there).
    ids: HashMap<String, usize>,
    duplicate_ids: Vec<Diagnostic>,
}

impl Checker {
    /// A checker before the first line.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks the next line. A kept line that names tool calls or a result
    /// counts for pairing as repair counts it
    /// ([`Line::stand_in`](crate::load::Line::stand_in)), so a decoded result is
    /// not called orphaned because its call's line did not decode.
    pub fn add(&mut self, line: &Line) {
        if let Some(message) = line.message() {
            self.messages += 1;
            if let Some(id) = message.id() {
                if let Some(first) = self.ids.get(id.as_str()) {
                    self.duplicate_ids.push(Diagnostic::error(
                        line.number,
                        "duplicate-id",
                        format!(
                            "id `{id}` is also the id of line {first}: a session reads each id once (`context` and `tree` refuse the file)"
                        ),
                    ));
                } else {
                    self.ids.insert(id.as_str().to_owned(), line.number);
                }
            }
        }
        self.add_pairing(line);
        self.dropped_fields(line);
    }

    /// Feeds the line to the pairing of calls and results only.
    fn add_pairing(&mut self, line: &Line) {
        match line.message().and_then(AgentMessage::as_llm) {
            Some(message) => self.validator.push_at(line.number, message),
            None => {
                if let Some(message) = line.stand_in() {
                    self.validator.push_at(line.number, &message);
                    self.stand_ins.insert(line.number);
                }
            }
        }
    }

    /// How many lines decoded to a message so far.
    pub fn messages(&self) -> usize {
        self.messages
    }

    /// Keys of a decoded line that its type does not have: kept in the file as
    /// it is, but lost when a program decodes the message and writes it back.
    fn dropped_fields(&mut self, line: &Line) {
        let Some(message) = line.message() else {
            return;
        };
        let Ok(raw) = std::str::from_utf8(&line.raw) else {
            return;
        };
        let what = match message {
            AgentMessage::Llm(m) => format!("{} messages", m.message.role().as_str()),
            AgentMessage::Custom(c) => format!("`{}` messages", c.kind()),
            AgentMessage::Unknown(_) => return,
        };
        let fixed = agentmsg_runtime::transcript::replace_lone_surrogates(raw);
        if fixed.is_some() {
            self.diagnostics.push(Diagnostic::warning(
                line.number,
                "lone-surrogate",
                "a string holds a lone UTF-16 surrogate (half of a character cut in two): it is read and sent as U+FFFD; this file keeps its bytes, a program that decodes the message and writes it back writes U+FFFD",
            ));
        }
        match dropped_fields(fixed.as_deref().unwrap_or(raw), message) {
            Ok(fields) if fields.is_empty() => {}
            Ok(fields) => {
                let list = fields
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.diagnostics.push(Diagnostic::warning(
                    line.number,
                    "dropped-field",
                    format!(
                        "{list} {} of {what}: kept in this file, but dropped by a program that decodes the message and writes it back",
                        if fields.len() == 1 { "is not a field" } else { "are not fields" }
                    ),
                ));
            }
            Err(e) => self.diagnostics.push(Diagnostic::error(
                line.number,
                "undecodable",
                format!("the line decoded but does not re-encode: {e}"),
            )),
        }
    }

    /// The structural problems `validate` finds (the tool calls still open are
    /// known only now), mapped to line numbers.
    pub fn structural(self) -> Vec<Diagnostic> {
        let stand_ins = self.stand_ins;
        self.validator
            .finish()
            .into_iter()
            .filter(|p| !stand_ins.contains(&p.index))
            .map(|p| Diagnostic {
                line: p.index,
                severity: severity(p.kind),
                code: code(p.kind),
                message: p.detail,
            })
            .collect()
    }

    /// Every diagnostic: `read` (what reading the lines found) and what this
    /// checker found, in line order.
    pub fn finish(mut self, read: Vec<Diagnostic>) -> Vec<Diagnostic> {
        let mut all = read;
        let dropped = std::mem::take(&mut self.diagnostics);
        // A tree's read (a `session` error) already named a duplicate id.
        if !all.iter().any(|d| d.code == "session") {
            all.append(&mut self.duplicate_ids);
        }
        all.extend(self.structural());
        all.extend(dropped);
        all.sort_by_key(|d| d.line);
        all
    }

    /// [`finish`](Self::finish) for a session tree, whose pairing of calls
    /// and results [`branch_pairing`] checks branch by branch: the file-order
    /// pairing this checker saw is left out.
    fn finish_tree(self, read: Vec<Diagnostic>) -> Vec<Diagnostic> {
        let mut all = read;
        all.extend(self.diagnostics);
        all.sort_by_key(|d| d.line);
        all
    }
}

/// How many messages [`branch_pairing`] validates in all, over every branch,
/// before it stops (a tree of many long branches would take the square of
/// its size).
const BRANCH_PAIRING_BUDGET: usize = 4_000_000;

/// The problems of a session tree (`bytes`, the file's whole text): its own
/// (a cycle or a duplicate id is an error, a missing parent a warning), and
/// the pairing of calls and results on the path from the root to each leaf,
/// each problem once. A call answered on one branch is not missing on
/// another, and two branches may each answer it; a call left open at the tip
/// of an abandoned branch is reported, as on a linear transcript.
pub fn branch_pairing(bytes: &[u8]) -> Vec<Diagnostic> {
    branch_pairing_within(bytes, BRANCH_PAIRING_BUDGET)
}

/// [`branch_pairing`], validating at most `limit` messages over all branches.
fn branch_pairing_within(bytes: &[u8], limit: usize) -> Vec<Diagnostic> {
    let session = match Session::read(bytes) {
        Ok(session) => session,
        Err(e) => return vec![Diagnostic::error(0, "session", e.to_string())],
    };
    let mut out: Vec<Diagnostic> = session.warnings().iter().map(warning_diagnostic).collect();
    let loaded = crate::load::load_bytes(bytes);
    let mut lines: HashMap<usize, Vec<&Line>> = HashMap::new();
    for line in &loaded.lines {
        lines.entry(line.number).or_default().push(line);
    }
    // The line of an entry: on a line holding several objects, the one with
    // the entry's id.
    let line_of = |entry: &Entry| -> Option<&Line> {
        let candidates = lines.get(&entry.line_no())?;
        candidates
            .iter()
            .find(|l| entry.id().is_some() && l.message().and_then(AgentMessage::id) == entry.id())
            .or_else(|| candidates.first())
            .copied()
    };
    let mut seen = HashSet::new();
    let mut budget = limit;
    let mut checked = 0usize;
    let mut branches = 0usize;
    // Each branch's length is known without walking it (the depth of its
    // leaf), so a branch past the budget costs nothing: a tree of many long
    // branches (a "broom") is checked in time linear in its size plus the
    // budget, never the square of its size.
    let entries = session.entries();
    let depths = depths(entries);
    let mut has_child = vec![false; entries.len()];
    for entry in entries {
        if let Some(p) = entry.parent_index() {
            has_child[p] = true;
        }
    }
    for leaf in (0..entries.len()).filter(|&i| entries[i].in_tree() && !has_child[i]) {
        branches += 1;
        if depths[leaf] > budget {
            continue;
        }
        budget -= depths[leaf];
        checked += 1;
        let mut branch = Vec::with_capacity(depths[leaf]);
        let mut at = Some(leaf);
        while let Some(i) = at {
            branch.push(&entries[i]);
            at = entries[i].parent_index();
        }
        branch.reverse();
        let mut checker = Checker::new();
        for line in branch.iter().filter_map(|e| line_of(e)) {
            checker.add_pairing(line);
        }
        for d in checker.structural() {
            if seen.insert((d.line, d.code, d.message.clone())) {
                out.push(d);
            }
        }
    }
    if checked < branches {
        out.push(Diagnostic::warning(
            0,
            "branches-unchecked",
            format!(
                "tool-call pairing checked on {checked} of {branches} branches: the others hold more than {limit} messages in all"
            ),
        ));
    }
    out
}

/// The number of entries from the root to each entry, itself included (a
/// read session has no cycle).
fn depths(entries: &[Entry]) -> Vec<usize> {
    let mut depth = vec![0usize; entries.len()];
    let mut trail = Vec::new();
    for start in 0..entries.len() {
        let mut at = Some(start);
        while let Some(i) = at {
            if depth[i] != 0 {
                break;
            }
            trail.push(i);
            at = entries[i].parent_index();
        }
        let mut known = at.map_or(0, |i| depth[i]);
        while let Some(i) = trail.pop() {
            known += 1;
            depth[i] = known;
        }
    }
    depth
}

/// What `validate` finds in the LLM messages of a loaded file, by line.
#[cfg(test)]
pub fn structural_diagnostics(loaded: &Loaded) -> Vec<Diagnostic> {
    let mut checker = Checker::new();
    for line in &loaded.lines {
        checker.add(line);
    }
    checker.structural()
}

/// Every diagnostic of a loaded file, in line order.
pub fn all_diagnostics(loaded: &Loaded) -> Vec<Diagnostic> {
    let mut checker = Checker::new();
    for line in &loaded.lines {
        checker.add(line);
    }
    checker.finish(loaded.diagnostics.clone())
}

/// One file's findings.
struct FileCheck {
    lines: usize,
    messages: usize,
    diagnostics: Vec<Diagnostic>,
    foreign: Option<agentmsg_runtime::session::SessionFormat>,
}

/// Checks `path`. A JSON Lines transcript is read one line at a time; another
/// agent's log, the context of a `--leaf`, a JSON array, a single
/// pretty-printed message and standard input are read whole.
fn check_file(path: &Path, leaf: Option<&str>) -> Result<FileCheck, CliError> {
    let whole = || -> Result<FileCheck, CliError> {
        let loaded = match load_file_at(path, leaf, Purpose::Check) {
            Ok(loaded) => loaded,
            // A file that does not read as a session (a cycle, a duplicate
            // id) has an error, whoever wrote it: exit 1, as for any other.
            Err(CliError::Session(message)) => {
                let message = message
                    .split_once(": ")
                    .map_or(message.as_str(), |(_, why)| why)
                    .to_owned();
                return Ok(FileCheck {
                    lines: 0,
                    messages: 0,
                    diagnostics: vec![Diagnostic::error(0, "session", message)],
                    foreign: None,
                });
            }
            Err(e) => return Err(e),
        };
        Ok(FileCheck {
            lines: loaded.total_lines,
            messages: loaded.messages().count(),
            foreign: foreign_log(&loaded),
            diagnostics: all_diagnostics(&loaded),
        })
    };
    let Some(mut reader) = stream_transcript(path, leaf)? else {
        return whole();
    };
    let mut checker = Checker::new();
    let mut read = Vec::new();
    let mut sniff = Sniff::default();
    let read_error = |source| CliError::Read {
        path: path.to_owned(),
        source,
    };
    while let Some(line) = reader.next_line(&mut read).map_err(read_error)? {
        sniff.add(&line);
        checker.add(&line);
    }
    if sniff.may_be_one_pretty_object() {
        // A `.json` file of one message, pretty-printed: read it whole.
        return whole();
    }
    let checker_messages = checker.messages();
    let diagnostics = if sniff.names_parents() {
        // A tree: its own problems, and the pairing branch by branch.
        read.extend(branch_pairing(&crate::input::read_input(path)?));
        checker.finish_tree(read)
    } else {
        checker.finish(read)
    };
    Ok(FileCheck {
        lines: reader.total_lines(),
        messages: checker_messages,
        diagnostics,
        foreign: sniff.foreign(),
    })
}

/// Runs `agentmsg check`.
pub fn run(args: &CheckArgs) -> Result<Outcome, CliError> {
    let mut out = crate::output::stdout();
    let mut outcome = Outcome::Ok;
    let mut failed = false;
    let mut reports = Vec::new();
    for path in &args.files {
        let FileCheck {
            lines,
            messages,
            diagnostics,
            foreign,
        } = match check_file(path, args.leaf.as_deref()) {
            Ok(checked) => checked,
            Err(e) => {
                crate::output::note!("agentmsg: error: {e}");
                failed = true;
                continue;
            }
        };
        if let Some(log) = foreign.filter(|_| !args.json) {
            writeln!(
                out,
                "{}: note: {}",
                crate::output::shown(path),
                crate::diag::foreign_note(log)
            )?;
        }
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let warnings = diagnostics.len() - errors;
        if args.json {
            reports.push(FileReport {
                file: crate::output::shown(path).to_string(),
                lines,
                messages,
                errors,
                warnings,
                diagnostics: diagnostics
                    .into_iter()
                    .map(|d| JsonDiagnostic {
                        line: d.line,
                        severity: d.severity.to_string(),
                        code: d.code,
                        message: d.message,
                    })
                    .collect(),
            });
        } else {
            if !args.quiet {
                for d in &diagnostics {
                    writeln!(out, "{}", d.render(&crate::output::shown(path)))?;
                }
            }
            writeln!(
                out,
                "{}: {lines} lines, {messages} messages: {errors} errors, {warnings} warnings",
                crate::output::shown(path),
            )?;
        }
        if errors > 0 || (args.deny_warnings && warnings > 0) {
            outcome = Outcome::Problems;
        }
    }
    if args.json {
        serde_json::to_writer_pretty(&mut out, &reports)?;
        writeln!(out)?;
    }
    Ok(if failed { Outcome::Failed } else { outcome })
}

#[cfg(test)]
mod branch_tests {
    use super::branch_pairing_within;

    /// Past the budget, the branches left unchecked are said to be, and the
    /// problems of those checked are still found.
    #[test]
    fn branches_past_the_budget_are_said_to_be_unchecked() {
        let text = concat!(
            r#"{"role":"user","content":"go","timestamp":1,"id":"u","parentId":null}"#,
            "\n",
            r#"{"role":"toolResult","toolCallId":"c9","toolName":"ls","content":[],"isError":false,"timestamp":2,"id":"a","parentId":"u"}"#,
            "\n",
            r#"{"role":"user","content":"other","timestamp":3,"id":"b","parentId":"u"}"#,
            "\n",
        );
        let all = branch_pairing_within(text.as_bytes(), 100);
        assert_eq!(
            all.iter().map(|d| d.code).collect::<Vec<_>>(),
            ["result-without-call"]
        );
        let some = branch_pairing_within(text.as_bytes(), 3);
        let codes: Vec<&str> = some.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["result-without-call", "branches-unchecked"]);
        assert!(
            some[1].message.contains("checked on 1 of 2 branches"),
            "{}",
            some[1].message
        );
    }
}
