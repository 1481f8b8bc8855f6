//! The stores, one suite over every backend, and the boundary each holds.
//! (store_processes, which runs several processes, is a binary of its own.)
//!
//! One test binary for the area (as ripgrep keeps `tests/tests.rs`): one
//! link, and a module per file.

#[macro_use]
#[path = "../store_fixture/mod.rs"]
mod store_fixture;

mod attacks;
mod between_appends;
mod concurrency;
mod session;
mod suite;
