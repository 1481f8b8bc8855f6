//! Opening a store's files so that only a regular file inside its directory is
//! ever read or written: a symbolic link planted at a session's path is not
//! followed (the store would otherwise read or write whatever it points to), and
//! a FIFO, a directory, a socket or a device is refused before a read can block
//! on it.
//!
//! On Unix the file is opened with `O_NOFOLLOW` (a link in the last component
//! fails the open itself, so there is no window between a check and the open)
//! and `O_NONBLOCK` (opening a FIFO does not wait for a writer; not needed to
//! create a file, `O_EXCL`, which opens nothing that is there), then checked
//! with `fstat` on the descriptor that was opened. Elsewhere the path is
//! checked with `symlink_metadata` before it is opened.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use super::StoreError;

/// How a store file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read only.
    Read,
    /// Read and append, the file existing.
    Append,
    /// Append, created (mode 0600) when missing.
    AppendOrCreate,
    /// Read and append, created (mode 0600); fails when the path exists.
    CreateNew,
}

/// Opens the regular file at `path`: [`OpenError::Missing`] when nothing is
/// there, [`OpenError::Exists`] when something is and `access` is
/// [`Access::CreateNew`], and a [`StoreError::NotRegularFile`] for what is no
/// regular file.
pub(crate) fn open(path: &Path, access: Access) -> Result<File, OpenError> {
    open_with_metadata(path, access).map(|(file, _)| file)
}

/// [`open`], with what `fstat` said of the file opened.
pub(crate) fn open_with_metadata(
    path: &Path,
    access: Access,
) -> Result<(File, std::fs::Metadata), OpenError> {
    let mut options = OpenOptions::new();
    match access {
        Access::Read => {
            options.read(true);
        }
        Access::Append => {
            options.read(true).append(true);
        }
        Access::AppendOrCreate => {
            options.append(true).create(true);
        }
        Access::CreateNew => {
            options.read(true).append(true).create_new(true);
        }
    }
    // `O_CREAT | O_EXCL` fails when anything at all is at the path (a FIFO,
    // a link, dangling or not), so what it opens is the regular file it has
    // just created, which no read or write blocks on: `O_NONBLOCK`, and the
    // two `fcntl` calls that clear it again, are left out.
    #[cfg(unix)]
    let nonblocking = access != Access::CreateNew;
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
        use rustix::fs::OFlags;
        let mut flags = OFlags::NOFOLLOW | OFlags::CLOEXEC;
        flags.set(OFlags::NONBLOCK, nonblocking);
        options.custom_flags(flags.bits().cast_signed());
    }
    #[cfg(not(unix))]
    if let Ok(metadata) = std::fs::symlink_metadata(path) {
        if !metadata.file_type().is_file() {
            return Err(OpenError::Refused(refused(path, &metadata)));
        }
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => return Err(classify(path, e)),
    };
    let metadata = file
        .metadata()
        .map_err(|e| OpenError::Io(io_error(path, e)))?;
    if !metadata.file_type().is_file() {
        return Err(OpenError::Refused(refused(path, &metadata)));
    }
    #[cfg(unix)]
    if nonblocking {
        clear_nonblocking(&file).map_err(|e| OpenError::Io(io_error(path, e)))?;
    }
    Ok((file, metadata))
}

/// Why [`open`] failed.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// Nothing is at the path.
    Missing,
    /// Something is at the path (for [`Access::CreateNew`]).
    Exists,
    /// What is at the path is no regular file (a link, a FIFO…).
    Refused(StoreError),
    /// Another I/O error.
    Io(StoreError),
}

impl OpenError {
    /// The error, with `missing` and `exists` for the two that depend on what
    /// the caller was doing.
    pub(crate) fn into_store_error(
        self,
        missing: impl FnOnce() -> StoreError,
        exists: impl FnOnce() -> StoreError,
    ) -> StoreError {
        match self {
            OpenError::Missing => missing(),
            OpenError::Exists => exists(),
            OpenError::Refused(e) | OpenError::Io(e) => e,
        }
    }
}

impl OpenError {
    /// The error as an I/O error of `path` where the caller expects neither
    /// [`OpenError::Missing`] nor [`OpenError::Exists`].
    pub(crate) fn into_io(self, path: &Path) -> StoreError {
        match self {
            OpenError::Missing => io_error(path, io::ErrorKind::NotFound.into()),
            OpenError::Exists => io_error(path, io::ErrorKind::AlreadyExists.into()),
            OpenError::Refused(e) | OpenError::Io(e) => e,
        }
    }
}

fn io_error(path: &Path, e: io::Error) -> StoreError {
    StoreError::io(path)(e)
}

fn classify(path: &Path, e: io::Error) -> OpenError {
    match e.kind() {
        io::ErrorKind::NotFound => return OpenError::Missing,
        io::ErrorKind::AlreadyExists => {
            // `O_CREAT | O_EXCL` does not follow a link either, but a dangling
            // link is no session that exists: say what it is.
            if let Ok(metadata) = std::fs::symlink_metadata(path) {
                if !metadata.file_type().is_file() {
                    return OpenError::Refused(refused(path, &metadata));
                }
            }
            return OpenError::Exists;
        }
        _ => {}
    }
    #[cfg(unix)]
    if matches!(
        rustix::io::Errno::from_io_error(&e),
        Some(rustix::io::Errno::LOOP | rustix::io::Errno::ISDIR)
    ) {
        // ELOOP: the last component is a link (O_NOFOLLOW). EISDIR: a
        // directory opened for writing.
        if let Ok(metadata) = std::fs::symlink_metadata(path) {
            return OpenError::Refused(refused(path, &metadata));
        }
    }
    OpenError::Io(io_error(path, e))
}

fn refused(path: &Path, metadata: &std::fs::Metadata) -> StoreError {
    StoreError::NotRegularFile {
        path: path.to_owned(),
        found: describe(metadata.file_type()),
    }
}

/// What a file type is, for a person.
pub(crate) fn describe(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        return "a symbolic link";
    }
    if file_type.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_file() {
        return "a regular file";
    }
    "not a regular file"
}

/// Reads and writes on the descriptor block as usual again (`O_NONBLOCK` was
/// only for the open).
#[cfg(unix)]
fn clear_nonblocking(file: &File) -> io::Result<()> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    let flags = fcntl_getfl(file)?;
    fcntl_setfl(file, flags - OFlags::NONBLOCK)?;
    Ok(())
}

/// Creates `dir` and any missing parents, each new one mode 0700 (a store's
/// directories hold transcripts, which hold secrets). Directories that exist
/// are left as they are.
pub(crate) fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use rustix::fs::{fcntl_getfl, OFlags};

    /// A file opened by any access blocks on reads and writes again: the
    /// `O_NONBLOCK` that kept the open from waiting on a FIFO is cleared.
    #[test]
    fn an_opened_file_blocks_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let created = open(&path, Access::CreateNew).unwrap();
        assert!(!fcntl_getfl(&created).unwrap().contains(OFlags::NONBLOCK));
        for access in [Access::Read, Access::Append, Access::AppendOrCreate] {
            let file = open(&path, access).unwrap();
            let flags = fcntl_getfl(&file).unwrap();
            assert!(!flags.contains(OFlags::NONBLOCK), "{access:?}: {flags:?}");
        }
    }
}
