//! The embedded store: one transcript file per session in a directory.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::{
    leaf_after, validate_entries, validate_session_id, Appended, Cursor, Durability, EntryProblem,
    Expect, LoadProblem, Loaded, Page, PageRequest, SessionInfo, SessionStore, StoreError,
    StoredEntry, TornEntry,
};
use crate::is_torn_line;

/// How many session files a [`JsonlDir`] keeps open between appends.
const MAX_OPEN_FILES: usize = 64;

/// The embedded store: a directory with one transcript file per session,
/// `SESSION.jsonl`, in agentmsg's transcript format (one entry per line), so
/// `agentmsg check`, `stats` and the other tools read a session file as it is.
///
/// # Concurrent writers
///
/// Each append takes the file's advisory lock ([`File::lock`]: `flock` on Unix,
/// `LockFileEx` on Windows; std's, as [`AppendFile`](crate::AppendFile) uses, so
/// no lock crate is needed), checks that the path still names the file it holds
/// open (a deleted or replaced session is not written to), reads what other
/// writers appended since its last look to know the leaf, checks the leaf the
/// append expects, writes all of the append's lines in one `write`, and
/// unlocks. Loads take the lock shared. So writers in any number of processes
/// never interleave or tear each other's lines, and a reader never sees half an
/// append. Within one process, appends to one session through one `JsonlDir`
/// are also serialized by a mutex. A `JsonlDir` keeps the files of up to 64
/// sessions open between appends (and what it read of them, so an append reads
/// only what others appended since). The lock is advisory: a program that writes
/// the file without taking it is not held back.
///
/// # Durability (fsync policy)
///
/// With [`Durability::Os`], the default, an append has been handed to the
/// operating system when it returns: it survives the process crashing, not a
/// power loss. With [`Durability::Disk`] every append is followed by
/// `fdatasync` (and creating or deleting a session by a sync of the directory)
/// before it returns.
///
/// # Crashes
///
/// A crash in the middle of an append can leave a torn last line. The next
/// append (under the lock) moves it aside, byte for byte, to
/// `SESSION.jsonl.torn` (one torn line per line, synced before the session file
/// is cut) and cuts it from the session file, so the session stays a clean
/// transcript. [`load`](SessionStore::load) reports torn lines in
/// [`Loaded::torn`], both one still at the end of the file and those kept
/// aside. An append of several entries that a crash cut keeps the whole lines
/// written before the cut.
///
/// # Blocking
///
/// The futures do their file I/O when polled, without yielding: local-file
/// reads and writes of a few lines, under a lock held only for one write. A
/// session's file is read whole by `load`, `open` and `list`.
#[derive(Debug)]
pub struct JsonlDir {
    dir: PathBuf,
    durability: Durability,
    files: Mutex<HashMap<String, Arc<Mutex<SessionFile>>>>,
}

/// An open session file and what was learnt from reading it.
#[derive(Debug)]
struct SessionFile {
    file: File,
    path: PathBuf,
    /// How many bytes of the file were read into `entries` and `leaf`.
    scanned: u64,
    entries: u64,
    leaf: Option<String>,
}

/// The file's lock, released on drop.
struct Locked<'a>(&'a File);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl JsonlDir {
    /// The store in `dir`, created if needed.
    pub fn open(dir: impl AsRef<Path>) -> Result<JsonlDir, StoreError> {
        let dir = dir.as_ref().to_owned();
        std::fs::create_dir_all(&dir).map_err(StoreError::io(&dir))?;
        Ok(JsonlDir {
            dir,
            durability: Durability::Os,
            files: Mutex::default(),
        })
    }

    /// The same store with `durability` (see the type's docs).
    #[must_use]
    pub fn durability(mut self, durability: Durability) -> JsonlDir {
        self.durability = durability;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `session`.
    pub fn session_path(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{session}.jsonl"))
    }

    /// The file that keeps the torn lines of `session`.
    pub fn torn_path(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{session}.jsonl.torn"))
    }

    fn handle(&self, session: &str) -> Result<Arc<Mutex<SessionFile>>, StoreError> {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(file) = files.get(session) {
            return Ok(Arc::clone(file));
        }
        if files.len() >= MAX_OPEN_FILES {
            // Close the files no append is using (they are opened again, and
            // read again, when needed).
            files.retain(|_, file| Arc::strong_count(file) > 1);
        }
        let path = self.session_path(session);
        let file = open_existing(&path, session)?;
        let handle = Arc::new(Mutex::new(SessionFile {
            file,
            path,
            scanned: 0,
            entries: 0,
            leaf: None,
        }));
        files.insert(session.to_owned(), Arc::clone(&handle));
        Ok(handle)
    }

    fn forget(&self, session: &str) {
        self.files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session);
    }

    fn append_now(
        &self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
    ) -> Result<Appended, StoreError> {
        validate_session_id(session)?;
        validate_entries(entries)?;
        let handle = self.handle(session)?;
        let mut file = handle.lock().unwrap_or_else(PoisonError::into_inner);
        let appended = file.append(
            session,
            entries,
            expected,
            self.durability,
            &self.torn_path(session),
        );
        if let Err(StoreError::NotFound { .. }) = appended {
            drop(file);
            self.forget(session);
        }
        appended
    }

    fn info_now(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        let path = self.session_path(session);
        let (bytes, metadata) = read_shared(&path, session)?;
        let mut info = SessionInfo {
            id: session.to_owned(),
            name: None,
            created_ms: 0,
            updated_ms: 0,
            entries: 0,
            leaf: None,
        };
        for line in complete_lines(&bytes) {
            info.entries += 1;
            if let Ok(text) = std::str::from_utf8(line) {
                let (entry, _) = StoredEntry::from_line(text);
                if let Some(id) = entry.id() {
                    info.leaf = Some(id.to_owned());
                }
                if let Some(name) = entry.session_name() {
                    info.name = Some(name.to_owned());
                }
            }
        }
        let ms = |time: io::Result<std::time::SystemTime>| {
            time.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        };
        info.updated_ms = ms(metadata.modified()).unwrap_or(0);
        info.created_ms = ms(metadata.created()).unwrap_or(info.updated_ms);
        Ok(info)
    }

    fn load_now(&self, session: &str, from: Cursor) -> Result<Loaded, StoreError> {
        validate_session_id(session)?;
        let path = self.session_path(session);
        let (bytes, _) = read_shared(&path, session)?;
        let mut loaded = Loaded {
            first: from.0,
            ..Loaded::default()
        };
        let mut position = 0u64;
        let complete = complete_len(&bytes);
        for line in complete_lines(&bytes[..complete]) {
            if position >= from.0 {
                match std::str::from_utf8(line) {
                    Ok(text) => {
                        let (entry, problem) = StoredEntry::from_line(text);
                        if let Some(problem) = problem {
                            loaded.problems.push(LoadProblem {
                                position,
                                problem: problem.into(),
                            });
                        }
                        loaded.entries.push(entry);
                    }
                    Err(_) => loaded.problems.push(LoadProblem {
                        position,
                        problem: EntryProblem::NotUtf8(line.to_vec()),
                    }),
                }
            }
            position += 1;
        }
        let tail = &bytes[complete..];
        if !is_blank(tail) {
            if is_torn_line(tail) {
                loaded.torn.push(TornEntry {
                    kept_in: path.clone(),
                    raw: tail.to_vec(),
                });
            } else {
                // A whole line that only lacks its newline: the next append ends it.
                let (entry, problem) = StoredEntry::from_line(String::from_utf8_lossy(tail));
                if position >= from.0 {
                    if let Some(problem) = problem {
                        loaded.problems.push(LoadProblem {
                            position,
                            problem: problem.into(),
                        });
                    }
                    match std::str::from_utf8(tail) {
                        Ok(_) => loaded.entries.push(entry),
                        Err(_) => loaded.problems.push(LoadProblem {
                            position,
                            problem: EntryProblem::NotUtf8(tail.to_vec()),
                        }),
                    }
                }
                position += 1;
            }
        }
        loaded.next = Cursor(position.max(from.0));
        let torn_path = self.torn_path(session);
        match std::fs::read(&torn_path) {
            Ok(kept) => loaded.torn.extend(
                kept.split(|b| *b == b'\n')
                    .filter(|piece| !piece.is_empty())
                    .map(|piece| TornEntry {
                        kept_in: torn_path.clone(),
                        raw: piece.to_vec(),
                    }),
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(torn_path)(e)),
        }
        Ok(loaded)
    }

    fn list_now(&self, page: &PageRequest) -> Result<Page, StoreError> {
        let read = std::fs::read_dir(&self.dir).map_err(StoreError::io(&self.dir))?;
        let mut ids = Vec::new();
        for item in read {
            let item = item.map_err(StoreError::io(&self.dir))?;
            let name = item.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
                continue;
            };
            if validate_session_id(id).is_ok()
                && page.after.as_deref().is_none_or(|after| id > after)
            {
                ids.push(id.to_owned());
            }
        }
        ids.sort_unstable();
        let more = ids.len() > page.limit;
        ids.truncate(page.limit);
        let mut sessions = Vec::with_capacity(ids.len());
        for id in &ids {
            match self.info_now(id) {
                Ok(info) => sessions.push(info),
                // Deleted since the directory was read.
                Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let next = more.then(|| ids.last().cloned()).flatten();
        Ok(Page { sessions, next })
    }

    fn create_now(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        let path = self.session_path(session);
        let mut options = OpenOptions::new();
        options.read(true).append(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(StoreError::Exists {
                    session: session.to_owned(),
                })
            }
            Err(e) => return Err(StoreError::io(path)(e)),
        }
        self.sync_dir()?;
        self.info_now(session)
    }

    fn delete_now(&self, session: &str) -> Result<(), StoreError> {
        validate_session_id(session)?;
        let path = self.session_path(session);
        loop {
            let file = open_existing(&path, session)?;
            file.lock().map_err(StoreError::io(&path))?;
            let _locked = Locked(&file);
            if current_len(&file, &path)?.is_none() {
                continue;
            }
            // Under the lock, so no appender writes to the file once it is gone
            // (each checks that the path still names its file).
            std::fs::remove_file(&path).map_err(StoreError::io(&path))?;
            let torn = self.torn_path(session);
            match std::fs::remove_file(&torn) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(StoreError::io(torn)(e)),
            }
            break;
        }
        self.forget(session);
        self.sync_dir()
    }

    fn sync_dir(&self) -> Result<(), StoreError> {
        if self.durability == Durability::Disk {
            #[cfg(unix)]
            File::open(&self.dir)
                .and_then(|dir| dir.sync_all())
                .map_err(StoreError::io(&self.dir))?;
        }
        Ok(())
    }
}

impl SessionFile {
    fn append(
        &mut self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
        durability: Durability,
        torn_path: &Path,
    ) -> Result<Appended, StoreError> {
        let io = |e| StoreError::io(&self.path)(e);
        // Lock the file the path names now (reopening when the one held open
        // was deleted or replaced).
        let len = loop {
            self.file.lock().map_err(io)?;
            let current = current_len(&self.file, &self.path);
            if !matches!(current, Ok(Some(_))) {
                let _ = self.file.unlock();
            }
            if let Some(len) = current? {
                break len;
            }
            self.file = open_existing(&self.path, session)?;
            self.scanned = 0;
            self.entries = 0;
            self.leaf = None;
        };
        let appended = self.append_locked(len, session, entries, expected, durability, torn_path);
        let _ = self.file.unlock();
        appended
    }

    fn append_locked(
        &mut self,
        len: u64,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
        durability: Durability,
        torn_path: &Path,
    ) -> Result<Appended, StoreError> {
        self.catch_up(len, torn_path, durability)?;
        expected.check(session, self.leaf.as_deref())?;
        let mut buf = Vec::with_capacity(entries.iter().map(|e| e.line().len() + 1).sum());
        for entry in entries {
            buf.extend_from_slice(entry.line().as_bytes());
            buf.push(b'\n');
        }
        (&self.file)
            .write_all(&buf)
            .map_err(StoreError::io(&self.path))?;
        if durability == Durability::Disk {
            self.file.sync_data().map_err(StoreError::io(&self.path))?;
        }
        let first = self.entries;
        self.scanned += buf.len() as u64;
        self.entries += entries.len() as u64;
        self.leaf = leaf_after(self.leaf.as_deref(), entries).map(str::to_owned);
        Ok(Appended {
            first,
            entries: self.entries,
            leaf: self.leaf.clone(),
        })
    }

    /// Reads what was appended since the last look (the lock is held), and
    /// ends the file cleanly: a torn last line is moved aside, a whole line
    /// without its newline gets one.
    fn catch_up(
        &mut self,
        len: u64,
        torn_path: &Path,
        durability: Durability,
    ) -> Result<(), StoreError> {
        if len < self.scanned {
            // Rewritten shorter (a repair under the lock): read it again.
            self.scanned = 0;
            self.entries = 0;
            self.leaf = None;
        }
        if len == self.scanned {
            return Ok(());
        }
        let path = self.path.clone();
        let io = |e| StoreError::io(&path)(e);
        let mut bytes = Vec::with_capacity((len - self.scanned) as usize);
        self.file.seek(SeekFrom::Start(self.scanned)).map_err(io)?;
        (&self.file)
            .take(len - self.scanned)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        let complete = complete_len(&bytes);
        for line in complete_lines(&bytes[..complete]) {
            self.entries += 1;
            if let Ok(text) = std::str::from_utf8(line) {
                if let Some(id) = StoredEntry::from_line(text).0.id() {
                    self.leaf = Some(id.to_owned());
                }
            }
        }
        let tail = &bytes[complete..];
        self.scanned += bytes.len() as u64;
        if tail.is_empty() {
            return Ok(());
        }
        if is_torn_line(tail) {
            let mut kept = Vec::with_capacity(tail.len() + 1);
            kept.extend_from_slice(tail);
            kept.push(b'\n');
            let mut options = OpenOptions::new();
            options.append(true).create(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            options
                .open(torn_path)
                .and_then(|mut aside| {
                    aside.write_all(&kept)?;
                    aside.sync_data()
                })
                .map_err(StoreError::io(torn_path))?;
            let cut = self.scanned - tail.len() as u64;
            self.file.set_len(cut).map_err(io)?;
            if durability == Durability::Disk {
                self.file.sync_data().map_err(io)?;
            }
            self.scanned = cut;
            return Ok(());
        }
        // A whole line (or text that is no JSON at all) without its newline:
        // it stays a line of its own.
        (&self.file).write_all(b"\n").map_err(io)?;
        self.scanned += 1;
        if !is_blank(tail) {
            self.entries += 1;
            if let Ok(text) = std::str::from_utf8(tail) {
                if let Some(id) = StoredEntry::from_line(text).0.id() {
                    self.leaf = Some(id.to_owned());
                }
            }
        }
        Ok(())
    }
}

impl SessionStore for JsonlDir {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        self.create_now(session)
    }

    async fn open(&self, session: &str) -> Result<SessionInfo, StoreError> {
        self.info_now(session)
    }

    async fn append(
        &self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
    ) -> Result<Appended, StoreError> {
        self.append_now(session, entries, expected)
    }

    async fn load(&self, session: &str, from: Cursor) -> Result<Loaded, StoreError> {
        self.load_now(session, from)
    }

    async fn list(&self, page: &PageRequest) -> Result<Page, StoreError> {
        self.list_now(page)
    }

    async fn delete(&self, session: &str) -> Result<(), StoreError> {
        self.delete_now(session)
    }
}

fn open_existing(path: &Path, session: &str) -> Result<File, StoreError> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => StoreError::NotFound {
                session: session.to_owned(),
            },
            _ => StoreError::io(path)(e),
        })
}

/// Reads the whole file under its shared lock.
fn read_shared(path: &Path, session: &str) -> Result<(Vec<u8>, std::fs::Metadata), StoreError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(StoreError::NotFound {
                session: session.to_owned(),
            })
        }
        Err(e) => return Err(StoreError::io(path)(e)),
    };
    file.lock_shared().map_err(StoreError::io(path))?;
    let locked = Locked(&file);
    let metadata = file.metadata().map_err(StoreError::io(path))?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    (&file)
        .read_to_end(&mut bytes)
        .map_err(StoreError::io(path))?;
    drop(locked);
    Ok((bytes, metadata))
}

/// The length of the open `file` when `path` still names it, `None` when the
/// path was deleted or names another file now.
#[cfg(unix)]
fn current_len(file: &File, path: &Path) -> Result<Option<u64>, StoreError> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata().map_err(StoreError::io(path))?;
    match std::fs::metadata(path) {
        Ok(named) if named.dev() == open.dev() && named.ino() == open.ino() => Ok(Some(open.len())),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(path)(e)),
    }
}

#[cfg(not(unix))]
fn current_len(file: &File, path: &Path) -> Result<Option<u64>, StoreError> {
    if !path.exists() {
        return Ok(None);
    }
    Ok(Some(file.metadata().map_err(StoreError::io(path))?.len()))
}

/// The length of `bytes` up to and including its last newline.
fn complete_len(bytes: &[u8]) -> usize {
    memchr::memrchr(b'\n', bytes).map_or(0, |at| at + 1)
}

/// The non-blank lines of `bytes`, which ends with a newline (or is empty).
fn complete_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|b| *b == b'\n')
        .filter(|line| !line.is_empty() && !is_blank(line))
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}
