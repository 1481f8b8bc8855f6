//! A session file's advisory lock, taken with a time limit: a file locked by a
//! stuck process makes an append or a read fail with
//! [`StoreError::LockTimeout`], naming the process when the system says who
//! holds it, instead of waiting forever.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use super::StoreError;

/// The lock on a file, released on drop.
pub(crate) struct Locked<'a>(&'a File);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Takes `file`'s lock (shared or exclusive), trying again with a growing
/// pause until `timeout` has passed; released when the guard drops.
pub(crate) fn lock<'a>(
    file: &'a File,
    path: &Path,
    shared: bool,
    timeout: Duration,
) -> Result<Locked<'a>, StoreError> {
    acquire(file, path, shared, timeout).map(|()| Locked(file))
}

/// [`lock`] without a guard: the caller unlocks.
pub(crate) fn acquire(
    file: &File,
    path: &Path,
    shared: bool,
    timeout: Duration,
) -> Result<(), StoreError> {
    let attempt = || {
        let tried = if shared {
            file.try_lock_shared()
        } else {
            file.try_lock()
        };
        match tried {
            Ok(()) => Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(e)) => Err(StoreError::io(path)(e)),
        }
    };
    // The clock is read only once the lock was found taken.
    if attempt()? {
        return Ok(());
    }
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        let waited = start.elapsed();
        if waited >= timeout {
            return Err(StoreError::LockTimeout {
                path: path.to_owned(),
                waited,
                holder: holder(file),
            });
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(Duration::from_millis(50));
        if attempt()? {
            return Ok(());
        }
    }
}

/// The process holding a lock on `file`, from `/proc/locks` (Linux), when one
/// other than this process is listed.
#[cfg(target_os = "linux")]
fn holder(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let metadata = file.metadata().ok()?;
    let ino = metadata.ino();
    let dev = metadata.dev();
    // `/proc/locks` names the device as MAJOR:MINOR in hex.
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let me = std::process::id();
    // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiter's line has
    // "->" after the number.
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) == Some(&"->") {
            return None;
        }
        let pid: u32 = fields.get(4)?.parse().ok()?;
        let mut place = fields.get(5)?.split(':');
        let (maj, min, node) = (place.next()?, place.next()?, place.next()?);
        let matches = u64::from_str_radix(maj, 16).ok()? == major
            && u64::from_str_radix(min, 16).ok()? == minor
            && node.parse::<u64>().ok()? == ino;
        (matches && pid != me).then_some(pid)
    })
}

#[cfg(not(target_os = "linux"))]
fn holder(_file: &File) -> Option<u32> {
    None
}
