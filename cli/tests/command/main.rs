//! The `agentmsg` command, run as a process: each module holds one side of
//! it (checking, decoding, sessions and stores, pi's sessions, streaming
//! input, what no input may lose, and the boundary a store holds).
//!
//! One test binary for the area (as ripgrep keeps `tests/tests.rs`): one
//! link, and a module per file.

#[path = "../common/mod.rs"]
mod common;

mod boundary;
mod commands;
mod decode;
mod no_loss;
mod pi_sessions;
mod sessions;
mod streaming;
