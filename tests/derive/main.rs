//! `#[derive(AgentMessage)]`: kinds, envelopes, projections, timestamps and
//! what the derive refuses. (The tests that own the global registry,
//! derive_duplicate, derive_duplicate_log and derive_install, are binaries of
//! their own.)
//!
//! One test binary for the area (as ripgrep keeps `tests/tests.rs`): one
//! link, and a module per file.

mod basic;
mod envelope;
mod projection;
mod security;
mod timestamp;
