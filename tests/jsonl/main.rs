//! Reading and writing JSON Lines transcripts. (jsonl_crash, which kills a
//! child process, is a binary of its own.)
//!
//! One test binary for the area (as ripgrep keeps `tests/tests.rs`): one
//! link, and a module per file.

#[path = "../common/mod.rs"]
mod common;

mod fuzz;
mod io;
mod repair;
