//! Which file a session's path names, asked once per append.
//!
//! An append holds the session file open and, under its lock, checks that the
//! file's path still names that file (device and inode): a session deleted,
//! replaced (a file renamed over it, as `agentmsg repair` does, even while
//! another link keeps the old one) or renamed away is never written to, and
//! the path is opened again. The same call gives the file's length, which says
//! whether other writers appended since this one last looked. The check is an
//! `lstat` of the whole path ([`std::fs::symlink_metadata`]): it is the only
//! one that sees a rename, and a program that appends without the lock, so a
//! store directory moved while a session file is open is seen too (the path
//! names another file, or none).

use std::io;
use std::path::Path;

use super::StoreError;

/// Which file an open session file is (its device and inode), so an append
/// can tell whether its path still names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Identity {
    dev: u64,
    ino: u64,
}

#[cfg(unix)]
impl Identity {
    /// The identity of a file from what `fstat` said of it.
    pub(super) fn of_metadata(metadata: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            dev: metadata.dev(),
            ino: metadata.ino(),
        }
    }

    /// The length of the file, when `path` still names it (`None` when it
    /// names nothing or something else: a link put in the file's place is not
    /// the file).
    pub(super) fn len_at(&self, path: &Path) -> Result<Option<u64>, StoreError> {
        use std::os::unix::fs::MetadataExt;
        match std::fs::symlink_metadata(path) {
            Ok(named) if named.dev() == self.dev && named.ino() == self.ino => {
                Ok(Some(named.len()))
            }
            Ok(_) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(path)(e)),
        }
    }
}

#[cfg(not(unix))]
impl Identity {
    pub(super) fn of_metadata(_: &std::fs::Metadata) -> Self {
        Self { dev: 0, ino: 0 }
    }

    pub(super) fn len_at(&self, path: &Path) -> Result<Option<u64>, StoreError> {
        match std::fs::symlink_metadata(path) {
            Ok(named) if named.is_file() => Ok(Some(named.len())),
            _ => Ok(None),
        }
    }
}
