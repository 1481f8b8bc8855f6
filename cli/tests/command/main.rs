//! The `agentmsg` command, run as a process: each module holds one side of
//! it (checking, decoding, importing other agents' logs, exporting a page and
//! testing it in Chromium, sessions and stores, pi's sessions, streaming
//! input, what no input may lose, and the boundary a store holds).
//!
//! One test binary for the area (as ripgrep keeps `tests/tests.rs`): one
//! link, and a module per file.

#[path = "../common/mod.rs"]
mod common;

mod browser;

mod boundary;
mod commands;
mod compact;
mod decode;
mod export_highlight;
mod export_html;
mod export_page;
mod import_claude;
mod import_codex;
mod import_logs;
mod no_loss;
mod page_entries;
mod pi_sessions;
mod sessions;
mod streaming;
mod usage;
