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

/// A `JsonlDir` store in a temporary directory with session `s` holding one
/// entry, `a`, appended through it (so it keeps the file open): the temporary
/// root (kept alive by the caller), the store's directory and the store.
pub(crate) fn one_entry() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    agentmsg::store::JsonlDir,
) {
    use agentmsg::store::{Expect, JsonlDir, SessionStore};
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    let store = JsonlDir::open(&dir).unwrap();
    now(store.create("s")).unwrap();
    now(store.append(
        "s",
        &[store_fixture::message("a", None, "one")],
        Expect::Empty,
    ))
    .unwrap();
    (root, dir, store)
}
