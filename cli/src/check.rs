//! `agentmsg check`: every problem of a transcript, by line.

use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::{dropped_fields, validate, AgentMessage, Message, ProblemKind};

use crate::error::CliError;
use crate::load::{foreign_log, Diagnostic, Loaded, Severity};
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

/// What `validate` finds in the LLM messages, mapped back to line numbers. A
/// kept line that names tool calls or a result counts for pairing as repair
/// counts it ([`Line::stand_in`](crate::load::Line::stand_in)), so a decoded
/// result is not called orphaned because its call's line did not decode; what
/// is wrong with the kept line itself is its own diagnostic, not repeated here.
pub fn structural_diagnostics(loaded: &Loaded) -> Vec<Diagnostic> {
    let mut messages: Vec<Cow<'_, Message>> = Vec::new();
    let mut lines = Vec::new();
    let mut kept = Vec::new();
    for line in &loaded.lines {
        let message = match line.message().and_then(AgentMessage::as_llm) {
            Some(m) => Cow::Borrowed(m),
            None => match line.stand_in() {
                Some(m) => Cow::Owned(m),
                None => continue,
            },
        };
        kept.push(matches!(message, Cow::Owned(_)));
        messages.push(message);
        lines.push(line.number);
    }
    validate(&messages)
        .into_iter()
        .filter(|p| !kept.get(p.index).copied().unwrap_or(false))
        .map(|p| Diagnostic {
            line: lines.get(p.index).copied().unwrap_or(0),
            severity: severity(p.kind),
            code: code(p.kind),
            message: p.detail,
        })
        .collect()
}

/// Keys of decoded lines that their types do not have: kept in the file as it
/// is, but lost when a program decodes the message and writes it back.
pub fn dropped_field_diagnostics(loaded: &Loaded) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in &loaded.lines {
        let Some(message) = line.message() else {
            continue;
        };
        let Ok(raw) = std::str::from_utf8(&line.raw) else {
            continue;
        };
        let what = match message {
            AgentMessage::Llm(m) => format!("{} messages", m.message.role().as_str()),
            AgentMessage::Custom(c) => format!("`{}` messages", c.kind()),
            AgentMessage::Unknown(_) => continue,
        };
        match dropped_fields(raw, message) {
            Ok(fields) if fields.is_empty() => {}
            Ok(fields) => {
                let list = fields
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                out.push(Diagnostic::warning(
                    line.number,
                    "dropped-field",
                    format!(
                        "{list} {} of {what}: kept in this file, but dropped by a program that decodes the message and writes it back",
                        if fields.len() == 1 { "is not a field" } else { "are not fields" }
                    ),
                ));
            }
            Err(e) => out.push(Diagnostic::error(
                line.number,
                "undecodable",
                format!("the line decoded but does not re-encode: {e}"),
            )),
        }
    }
    out
}

/// Every diagnostic of a loaded file, in line order.
pub fn all_diagnostics(loaded: &Loaded) -> Vec<Diagnostic> {
    let mut all = loaded.diagnostics.clone();
    all.extend(structural_diagnostics(loaded));
    all.extend(dropped_field_diagnostics(loaded));
    all.sort_by_key(|d| d.line);
    all
}

/// Runs `agentmsg check`.
pub fn run(args: &CheckArgs) -> Result<Outcome, CliError> {
    let mut out = crate::output::stdout();
    let mut outcome = Outcome::Ok;
    let mut failed = false;
    let mut reports = Vec::new();
    for path in &args.files {
        let loaded = match crate::session_file::load_file_at(
            path,
            args.leaf.as_deref(),
            crate::session_file::Purpose::Check,
        ) {
            Ok(loaded) => loaded,
            Err(e) => {
                crate::output::note!("agentmsg: error: {e}");
                failed = true;
                continue;
            }
        };
        let diagnostics = all_diagnostics(&loaded);
        if let Some(log) = foreign_log(&loaded).filter(|_| !args.json) {
            writeln!(out, "{}: note: {}", path.display(), log.note())?;
        }
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let warnings = diagnostics.len() - errors;
        let (lines, messages) = (loaded.total_lines, loaded.messages().count());
        if args.json {
            reports.push(FileReport {
                file: path.display().to_string(),
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
                    writeln!(out, "{}", d.render(&path.display()))?;
                }
            }
            writeln!(
                out,
                "{}: {lines} lines, {messages} messages: {errors} errors, {warnings} warnings",
                path.display(),
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
