//! A session file's lock kept from one append to the next while appends come
//! in a burst, and given back when they stop.
//!
//! An append takes the file's lock, checks the file's name and length
//! (`statx`), writes, and unlocks: four system calls, of which the lock and
//! the unlock are half the cost outside the write. An agent appends in bursts
//! (a turn's messages as they stream, a batch of tool results), so a
//! [`JsonlDir`](super::JsonlDir) keeps the lock after an append and the next
//! append of the burst skips both calls. It still checks the name and length
//! under the lock, so a rename, a replacement or a program that appends
//! without the lock is seen exactly as before; only other lock takers wait
//! longer.
//!
//! How long they wait is bounded by one thread per process, started with the
//! first lock kept, which looks at each kept lock every `idle` (500 µs by
//! default):
//!
//! - no append since its last look: the lock is released, so a lock is never
//!   kept more than twice `idle` after the last append;
//! - kept for [`MAX_HOLD`] `idle`s in a row: it is released even while appends
//!   go on, and the session's appends then lock and unlock each time for as
//!   long again, so other writers and readers, which poll for the lock, find
//!   it free in that time as they did before locks were kept.
//!
//! Other calls of the same store on the session (a load, a listing, a
//! delete) release the session's kept lock first, so they never wait for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, Once, PoisonError, TryLockError, Weak};
use std::time::{Duration, Instant};

use crate::time::deadline;

/// How many `idle`s a lock is kept at most in a row, and then not kept.
pub(super) const MAX_HOLD: u32 = 4;

/// What a handle whose lock may be kept gives the releasing thread.
pub(super) trait KeptLock: Send {
    /// Its state.
    fn kept(&mut self) -> &mut Kept;
    /// Unlocks the file, and marks the lock released ([`Kept::released`]).
    fn unlock(&mut self);
}

/// Unlocks `file` if its last append kept the lock.
pub(super) fn let_go(file: &mut dyn KeptLock) {
    if file.kept().held {
        file.unlock();
    }
}

/// A handle's kept lock.
#[derive(Debug, Default)]
pub(super) struct Kept {
    /// The lock is held since an append, which did not unlock it.
    held: bool,
    /// Appends made with the lock kept, counted from the first (the thread
    /// compares it from one look to the next: its sign of activity).
    appends: u64,
    /// The lock was kept [`MAX_HOLD`] `idle`s in a row: appends unlock it
    /// until the thread says otherwise.
    resting: bool,
}

impl Kept {
    /// Whether the lock is held from the last append (so the next one does
    /// not take it).
    pub(super) fn held(&self) -> bool {
        self.held
    }

    /// After an append under the lock: keeps it when `keep` and the lock is
    /// not resting, else leaves it to the caller to unlock (then not
    /// [`held`](Self::held)). `Some` when the lock was just kept: the append
    /// count the thread is to watch from (see [`watch`]).
    pub(super) fn after_append(&mut self, keep: bool) -> Option<u64> {
        if !keep || self.resting {
            self.held = false;
            return None;
        }
        self.appends = self.appends.wrapping_add(1);
        if self.held {
            return None;
        }
        self.held = true;
        Some(self.appends)
    }

    /// The lock is no longer held (unlocked, or its file closed).
    pub(super) fn released(&mut self) {
        self.held = false;
    }
}

/// A kept lock the thread is to look at.
struct Watched {
    at: Instant,
    handle: Weak<Mutex<dyn KeptLock>>,
    idle: Duration,
    /// `idle`s the lock has been kept in a row.
    looks: u32,
    /// The append count at the last look.
    seen: u64,
    /// Looked at to end the rest after [`MAX_HOLD`], not to release.
    resting: bool,
}

struct Releaser {
    state: Mutex<State>,
    wake: Condvar,
}

/// The thread's list, and whether it waits (so an append that keeps a lock
/// wakes it only when it would not look in time: a burst of appends to
/// session after session wakes it once).
struct State {
    watched: Vec<Watched>,
    /// `None`: it is looking; `Some(None)`: it waits for a lock to watch;
    /// `Some(Some(at))`: it waits until `at`.
    waits: Option<Option<Instant>>,
}

static RELEASER: Releaser = Releaser {
    state: Mutex::new(State {
        watched: Vec::new(),
        waits: None,
    }),
    wake: Condvar::new(),
};

static STARTED: Once = Once::new();

/// The thread was started (when it could not be, kept locks are released at
/// once: nothing else would release them).
static RUNNING: AtomicBool = AtomicBool::new(false);

/// Has the thread look at `handle`'s lock, just kept with `appends` made,
/// every `idle` until it is released.
pub(super) fn watch(handle: Weak<Mutex<dyn KeptLock>>, appends: u64, idle: Duration) {
    STARTED.call_once(|| {
        match std::thread::Builder::new()
            .name("agentmsg-lock-release".to_owned())
            .spawn(run)
        {
            Ok(_) => RUNNING.store(true, Ordering::Release),
            Err(e) => log::warn!(
                "agentmsg store: cannot start the thread that releases kept locks, so none is kept: {e}"
            ),
        }
    });
    if !RUNNING.load(Ordering::Acquire) {
        release_now(&handle);
        return;
    }
    let at = deadline(Instant::now(), idle);
    let mut state = RELEASER
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    state.watched.push(Watched {
        at,
        handle,
        idle,
        looks: 0,
        seen: appends,
        resting: false,
    });
    let late = match state.waits {
        None => false,
        Some(None) => true,
        Some(Some(until)) => until > at,
    };
    drop(state);
    if late {
        RELEASER.wake.notify_one();
    }
}

/// Unlocks `handle`'s kept lock at once.
fn release_now(handle: &Weak<Mutex<dyn KeptLock>>) {
    if let Some(handle) = handle.upgrade() {
        let_go(&mut *handle.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// The thread: looks at each watched lock when its time comes.
fn run() {
    let mut state = RELEASER
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let mut due = Vec::new();
    loop {
        let now = Instant::now();
        let watched = &mut state.watched;
        let mut i = 0;
        while i < watched.len() {
            if watched[i].at <= now {
                due.push(watched.swap_remove(i));
            } else {
                i += 1;
            }
        }
        if due.is_empty() {
            let next = watched.iter().map(|w| w.at).min();
            state.waits = Some(next);
            state = match next {
                None => RELEASER
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(at) => {
                    RELEASER
                        .wake
                        .wait_timeout(state, at.saturating_duration_since(now))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
            state.waits = None;
            continue;
        }
        // The handles are locked without the list's lock: an append that
        // keeps a lock adds to the list with its handle unlocked.
        drop(state);
        due.retain_mut(|w| look(w, now));
        state = RELEASER
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.watched.append(&mut due);
    }
}

/// Looks at one watched lock: whether to look again.
fn look(w: &mut Watched, now: Instant) -> bool {
    let Some(handle) = w.handle.upgrade() else {
        // The file was closed, and its lock with it.
        return false;
    };
    // Never waited for: an append in progress may itself be waiting for a
    // lock this thread is to release (another store's, in this process).
    let mut file = match handle.try_lock() {
        Ok(file) => file,
        Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(TryLockError::WouldBlock) => {
            w.at = deadline(now, w.idle);
            return true;
        }
    };
    let kept = file.kept();
    if w.resting {
        kept.resting = false;
        return false;
    }
    if !kept.held {
        return false;
    }
    w.looks += 1;
    let idle = kept.appends == w.seen;
    if !idle && w.looks < MAX_HOLD {
        w.seen = kept.appends;
        w.at = deadline(now, w.idle);
        return true;
    }
    // No append since the last look, or kept MAX_HOLD looks in a row: then
    // not kept for as long.
    kept.resting = !idle;
    file.unlock();
    w.resting = !idle;
    w.at = deadline(now, w.idle.saturating_mul(MAX_HOLD));
    w.resting
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_append_keeps_the_lock_unless_told_not_to_or_resting() {
        let mut kept = Kept::default();
        // The first append that keeps it asks for the thread's watch.
        assert_eq!(kept.after_append(true), Some(1));
        assert!(kept.held());
        // The next ones only count.
        assert_eq!(kept.after_append(true), None);
        assert!(kept.held());
        assert_eq!(kept.appends, 2);
        // A failed append (or a store that keeps no lock) unlocks.
        assert_eq!(kept.after_append(false), None);
        assert!(!kept.held());
        // Kept again: a new watch, from the count so far.
        assert_eq!(kept.after_append(true), Some(3));
        assert!(kept.held());
        // Resting after a long hold: appends unlock.
        kept.released();
        kept.resting = true;
        assert_eq!(kept.after_append(true), None);
        assert!(!kept.held());
    }
}
