//! Sessions: trees, pi's session files, other agents' logs, and the
//! differential test against pi's own code.
//!
//! One test binary for the area (as ripgrep keeps `tests/tests.rs`): one
//! link, and a module per file.

#[path = "../common/mod.rs"]
mod common;

mod compaction;
mod compaction_differential;
#[cfg(feature = "html")]
mod export_file;
mod import_logs;
mod pi;
mod pi_differential;
mod tree;
