//! Diagnostics: what a command says about a line of its input, made from the
//! runtime's own warnings (a session's, an import's) or found by the command
//! (`check`).

use std::fmt;

use agentmsg_runtime::session::{SessionFormat, SessionWarning, WarningKind};

/// How bad a problem is: the runtime's own scale, which its import warnings
/// carry too (a warning leaves the transcript well formed; an error is a
/// broken line, or one a provider would refuse).
pub use agentmsg_runtime::import::Severity;

/// One problem, at one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The line number, from 1 (for a JSON array, the line where the element starts).
    pub line: usize,
    /// How bad it is.
    pub severity: Severity,
    /// A short name of the problem, such as `torn-line` or `missing-result`.
    pub code: &'static str,
    /// What is wrong, for a person.
    pub message: String,
}

impl Diagnostic {
    /// An error at `line`.
    pub fn error(line: usize, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            line,
            severity: Severity::Error,
            code,
            message: message.into(),
        }
    }

    /// What an import said, as a diagnostic.
    pub fn from_import(warning: &agentmsg_runtime::import::ImportWarning) -> Self {
        Self {
            line: warning.line,
            severity: warning.severity,
            code: warning.code.as_str(),
            message: warning.message.clone(),
        }
    }

    /// The diagnostic as one line of output: `FILE:LINE: severity[code]: message`
    /// (`FILE: …` for a diagnostic about the whole file, line 0).
    ///
    /// The message's control characters are escaped: it quotes the file.
    pub fn render(&self, file: &dyn fmt::Display) -> String {
        let message = crate::output::escape_controls(&self.message);
        if self.line == 0 {
            format!("{file}: {}[{}]: {message}", self.severity, self.code)
        } else {
            format!(
                "{file}:{}: {}[{}]: {message}",
                self.line, self.severity, self.code
            )
        }
    }

    /// A warning at `line`.
    pub fn warning(line: usize, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            line,
            severity: Severity::Warning,
            code,
            message: message.into(),
        }
    }
}

/// What to tell a person who gave another agent's log (`format`) to a
/// command that reads transcripts.
pub fn foreign_note(format: SessionFormat) -> &'static str {
    match format {
        SessionFormat::Pi { .. } => "this looks like a pi session file (entries tagged by \"type\"), not a transcript; convert it with `agentmsg import`",
        SessionFormat::ClaudeCode => "this looks like a Claude Code log (entries with \"uuid\" and \"parentUuid\"), not a transcript; convert it with `agentmsg import`",
        SessionFormat::Codex => "this looks like a Codex CLI rollout (\"session_meta\" and \"response_item\" entries), not a transcript; convert it with `agentmsg import`",
        SessionFormat::Agentmsg => "an agentmsg transcript",
    }
}

/// An error for a message of a context that no model is sent because it does
/// not decode (a pi message whose content is not what its role takes, say):
/// a reader of the file would otherwise lose it without a word.
pub fn unsent_diagnostic(
    message: &agentmsg_runtime::AgentMessage,
    line: usize,
) -> Option<Diagnostic> {
    let unknown = message.as_unknown()?;
    match unknown.reason() {
        agentmsg_runtime::transcript::UnknownReason::Invalid { error } => Some(Diagnostic::error(
            line,
            "undecodable",
            format!(
                "this `{}` message does not decode, so no model is sent it: {error}",
                unknown.kind()
            ),
        )),
        _ => None,
    }
}

/// A session warning as a diagnostic.
pub fn warning_diagnostic(warning: &SessionWarning) -> Diagnostic {
    if let WarningKind::Imported(w) = &warning.kind {
        return Diagnostic::from_import(w);
    }
    let code = match warning.kind {
        WarningKind::MissingParent { .. } => "missing-parent",
        WarningKind::JoinedObjects { .. } => "joined-lines",
        WarningKind::NotAnEntry { .. } => "not-an-entry",
        WarningKind::FirstKeptMissing { .. } => "first-kept-missing",
        WarningKind::Lenient { .. } => "lenient",
        _ => "session",
    };
    let text = warning.to_string();
    let message = text
        .split_once(": ")
        .map_or(text.as_str(), |(_, rest)| rest)
        .to_owned();
    Diagnostic::warning(warning.line, code, message)
}
