//! Projection and preparation for one target model: the rules, their
//! invariants, the editor and model ids.
//!
//! One test binary for the area (as ripgrep keeps `tests/tests.rs`): one
//! link, and a module per file.

#[path = "../common/mod.rs"]
mod common;

mod editor;
mod invariants;
mod model_ids;
mod rules;
