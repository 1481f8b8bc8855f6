//! Errors that stop a command (exit code 2): usage mistakes and I/O failures.
//! Problems found inside a transcript are not errors here: they are reported as
//! diagnostics and give exit code 1.

use std::path::PathBuf;

/// A command could not run.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", crate::output::shown(path))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", crate::output::shown(path))]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Standard output or standard error could not be written.
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),
    /// The arguments do not make sense together.
    #[error("{0}")]
    Usage(String),
    /// The file does not read as a session (a `parentId` cycle, a duplicate
    /// id, a leaf no entry has). `check` reports it as an error of the file.
    #[error("{0}")]
    Session(String),
    /// A value could not be encoded as JSON.
    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        Self::Output(e)
    }
}
