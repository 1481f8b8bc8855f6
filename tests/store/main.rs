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
mod lock_per_append;
mod session;
mod suite;

/// Polls a future that never waits on anything (JsonlDir's) to its end.
pub(crate) fn now<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("a JsonlDir future waited"),
    }
}
