//! Core types: messages, blocks, media, usage, the transcript line format, and
//! what no input may lose.
//!
//! One test binary for the area (as ripgrep keeps `tests/tests.rs`): one
//! link, and a module per file.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod golden;
mod media;
mod no_loss_props;
mod overflow;
mod pi;
mod roles;
mod roundtrip;
mod usage;
