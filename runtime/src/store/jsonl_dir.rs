//! The embedded store: one transcript file per session in a directory.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use super::file_lock::{self, Locked};
use super::identity::Identity;
use super::regular_file::{self, Access, OpenError};
use super::tree_index::TreeIndex;
use super::{
    leaf_after, validate_entries, validate_session_id, Appended, Cursor, Durability, EntryProblem,
    Expect, LoadProblem, Loaded, Page, PageRequest, SessionInfo, SessionStore, SkippedSession,
    StoreError, StoredEntry, TornEntry,
};
use crate::transcript::is_torn_line;

/// How long a [`JsonlDir`] waits for a session file's lock by default.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// How long after a directory's last change its listing can be trusted to be
/// unchanged while its modification time is: longer than any file system's
/// timestamp granularity (the "racy" window, as git calls it).
const LISTING_SETTLED: Duration = Duration::from_secs(2);

/// The UTF-8 byte-order mark, which an editor may put before a file's first line.
use crate::lines::BOM;

/// How many session files a [`JsonlDir`] keeps open between appends.
const MAX_OPEN_FILES: usize = 64;

/// The embedded store: a directory with one transcript file per session,
/// `SESSION.jsonl`, in agentmsg's transcript format (one entry per line), so
/// `agentmsg check`, `stats` and the other tools read a session file as it is.
///
/// # Concurrent writers
///
/// Each append takes the file's advisory lock ([`File::lock`]: `flock` on Unix,
/// `LockFileEx` on Windows; std's, as [`AppendFile`](crate::transcript::AppendFile) uses, so
/// no lock crate is needed), checks that the file's path still names the file
/// it holds open (a deleted, replaced or renamed session is not written to,
/// nor one whose store directory was moved), reads what other writers
/// appended since its last look to know the leaf, checks the leaf the append
/// expects, writes all of the append's lines in one `write`, and unlocks the
/// file. Loads take the lock shared. So writers in any number of processes
/// never interleave or tear each other's lines, and a reader never sees half
/// an append. Within one process, appends to one session through one
/// `JsonlDir` are also serialized by a mutex; appends to different sessions
/// do not wait for each other. A `JsonlDir` keeps the files of up to 64
/// sessions open between appends (and what it read of them, so an append
/// reads only what others appended since). The lock is advisory: a program
/// that writes the file without taking it is not held back.
///
/// Each append costs its system calls (lock, `lstat`, `write`, unlock), about
/// what `open`, `write`, `close` of the line would, so a batch of entries
/// costs much less per entry: prefer one append of a turn's entries to one
/// append each.
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
/// # The directory's boundary
///
/// The store reads and writes only regular files in its directory. A symbolic
/// link at a session's path (or at its `.torn` file) is never followed: it is
/// refused with [`StoreError::NotRegularFile`], as are a FIFO (which would
/// block a read forever), a directory, a socket and a device, and
/// [`list`](SessionStore::list) skips them ([`Page::skipped`]). The store's
/// directory itself may be a link. Files the store creates are mode 0600, and
/// directories 0700: transcripts hold secrets.
///
/// # Blocking
///
/// The futures do their file I/O when polled, without yielding: local-file
/// reads and writes of a few lines, under a lock held for one append. A session's file is read whole by `load` and
/// `open`, and by `list` for the sessions of the page. A lock another process
/// holds is waited for up to
/// [`lock_timeout`](Self::lock_timeout) (10 s by default), then the call fails
/// with [`StoreError::LockTimeout`].
///
/// # Listing
///
/// `list` reads the directory's names once and keeps them sorted while the
/// directory is unchanged (its modification time, trusted once it is two
/// seconds old), so paging through many sessions costs each page its own size.
#[derive(Debug)]
pub struct JsonlDir {
    dir: PathBuf,
    durability: Durability,
    lock_timeout: Duration,
    files: Mutex<HashMap<String, Arc<Mutex<SessionFile>>, foldhash::fast::RandomState>>,
    listing: Mutex<Option<Arc<Listing>>>,
}

/// The session ids of the directory, sorted, as read at one time.
#[derive(Debug)]
struct Listing {
    /// The directory's modification time when it was read.
    modified: SystemTime,
    /// When it was read.
    taken: SystemTime,
    /// The ids of the regular files named `ID.jsonl`, sorted.
    ids: Vec<String>,
    /// Entries named like sessions that are no regular file, sorted by id.
    skipped: Vec<SkippedSession>,
}

/// An open session file and what was learnt from reading it.
#[derive(Debug)]
struct SessionFile {
    file: File,
    /// The open file's identity (device and inode), read once when it was
    /// opened: an append compares the path's with it (see `identity`), and
    /// takes the file's length from the same call.
    identity: Identity,
    path: PathBuf,
    /// How many bytes of the file were read into `entries` and `leaf`.
    scanned: u64,
    entries: u64,
    leaf: Option<String>,
    /// The ids of its entries, and the ids its entries name as parents (so an
    /// append that would repeat an id or close a cycle is refused).
    tree: TreeIndex,
    /// Where an append puts its lines to write them at once: kept from one
    /// append to the next up to [`KEPT_BUFFER`] bytes (a few entries), so the
    /// common append allocates nothing and a session's memory stays small.
    buf: Vec<u8>,
}

/// The largest buffer a session file keeps from one append to the next.
const KEPT_BUFFER: usize = 4 * 1024;

impl JsonlDir {
    /// The store in `dir`, created if needed.
    ///
    /// Directories it creates are mode 0700.
    pub fn open(dir: impl AsRef<Path>) -> Result<JsonlDir, StoreError> {
        let dir = dir.as_ref().to_owned();
        regular_file::create_dir_all(&dir).map_err(StoreError::io(&dir))?;
        Ok(JsonlDir::at(dir))
    }

    /// The store in `dir`, which must exist: what a reader opens, since
    /// reading never creates a store. A `dir` that is missing or no directory
    /// is a [`StoreError::NotAStore`].
    pub fn open_existing(dir: impl AsRef<Path>) -> Result<JsonlDir, StoreError> {
        let dir = dir.as_ref().to_owned();
        match std::fs::metadata(&dir) {
            Ok(metadata) if metadata.is_dir() => Ok(JsonlDir::at(dir)),
            Ok(metadata) => Err(StoreError::NotAStore {
                address: dir.display().to_string(),
                reason: format!(
                    "{}, not a directory of session files",
                    regular_file::describe(metadata.file_type())
                ),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(StoreError::NotAStore {
                address: dir.display().to_string(),
                reason: "no such directory".to_owned(),
            }),
            Err(e) => Err(StoreError::io(dir)(e)),
        }
    }

    fn at(dir: PathBuf) -> JsonlDir {
        JsonlDir {
            dir,
            durability: Durability::Os,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            files: Mutex::default(),
            listing: Mutex::default(),
        }
    }

    /// The same store, waiting at most `timeout` for a session file's lock
    /// (10 s by default).
    #[must_use]
    pub fn lock_timeout(mut self, timeout: Duration) -> JsonlDir {
        self.lock_timeout = timeout;
        self
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

    /// The file that holds `session`. An id a store cannot use (`../x`, an
    /// empty one…) is a [`StoreError::InvalidSessionId`], so the path is
    /// always inside the directory.
    pub fn session_path(&self, session: &str) -> Result<PathBuf, StoreError> {
        validate_session_id(session)?;
        Ok(self.file_of(session))
    }

    /// The file that keeps the torn lines of `session` (checked as
    /// [`session_path`](Self::session_path) checks it).
    pub fn torn_path(&self, session: &str) -> Result<PathBuf, StoreError> {
        validate_session_id(session)?;
        Ok(self.torn_of(session))
    }

    /// The session file of an id already checked.
    fn file_of(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{session}.jsonl"))
    }

    /// The torn-line file of an id already checked.
    fn torn_of(&self, session: &str) -> PathBuf {
        torn_file(&self.dir, session)
    }

    fn handle(&self, session: &str) -> Result<Arc<Mutex<SessionFile>>, StoreError> {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(file) = files.get(session) {
            return Ok(Arc::clone(file));
        }
        let path = self.file_of(session);
        let (file, metadata) = open_existing(&path, session)?;
        Ok(keep(
            &mut files,
            session,
            SessionFile::new(file, &metadata, path),
        ))
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
        let settings = Settings {
            durability: self.durability,
            lock_timeout: self.lock_timeout,
            dir: &self.dir,
        };
        let handle = self.handle(session)?;
        let mut file = handle.lock().unwrap_or_else(PoisonError::into_inner);
        let appended = file.append(session, entries, expected, settings);
        drop(file);
        if let Err(StoreError::NotFound { .. }) = appended {
            self.forget(session);
        }
        appended
    }

    fn info_now(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        let path = self.file_of(session);
        let (bytes, metadata) = read_shared(&path, session, self.lock_timeout)?;
        let mut info = SessionInfo {
            id: session.to_owned(),
            name: None,
            created_ms: 0,
            updated_ms: 0,
            entries: 0,
            leaf: None,
        };
        for line in entry_lines(&bytes) {
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
        (info.created_ms, info.updated_ms) = times_ms(&metadata);
        Ok(info)
    }

    fn load_now(&self, session: &str, from: Cursor) -> Result<Loaded, StoreError> {
        validate_session_id(session)?;
        let path = self.file_of(session);
        let (bytes, _) = read_shared(&path, session, self.lock_timeout)?;
        let bytes = bytes.strip_prefix(BOM).unwrap_or(&bytes);
        let mut loaded = Loaded {
            first: from.0,
            ..Loaded::default()
        };
        let mut position = 0u64;
        let complete = complete_len(bytes);
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
        let torn_path = self.torn_of(session);
        let kept = match regular_file::open(&torn_path, Access::Read) {
            Ok(mut file) => {
                let mut kept = Vec::new();
                file.read_to_end(&mut kept)
                    .map_err(StoreError::io(&torn_path))?;
                kept
            }
            Err(OpenError::Missing) => Vec::new(),
            Err(e) => return Err(e.into_io(&torn_path)),
        };
        loaded.torn.extend(
            kept.split(|b| *b == b'\n')
                .filter(|piece| !piece.is_empty())
                .map(|piece| TornEntry {
                    kept_in: torn_path.clone(),
                    raw: piece.to_vec(),
                }),
        );
        Ok(loaded)
    }

    fn list_now(&self, page: &PageRequest) -> Result<Page, StoreError> {
        let listing = self.listing()?;
        let start = match &page.after {
            Some(after) => listing
                .ids
                .partition_point(|id| id.as_str() <= after.as_str()),
            None => 0,
        };
        let end = start.saturating_add(page.limit).min(listing.ids.len());
        let ids = &listing.ids[start..end];
        let more = end < listing.ids.len();
        let mut sessions = Vec::with_capacity(ids.len());
        let mut skipped = Vec::new();
        for id in ids {
            match self.info_now(id) {
                Ok(info) => sessions.push(info),
                // Deleted since the directory was read.
                Err(StoreError::NotFound { .. }) => {}
                // Replaced by a link, a FIFO…, or locked by a stuck process:
                // one session does not fail the listing of all of them.
                Err(e @ (StoreError::NotRegularFile { .. } | StoreError::LockTimeout { .. })) => {
                    log::warn!(
                        "agentmsg store {}: skipped session `{id}`: {e}",
                        self.dir.display()
                    );
                    skipped.push(SkippedSession {
                        id: id.clone(),
                        reason: e.to_string(),
                    });
                }
                Err(e) => return Err(e),
            }
        }
        let next = more.then(|| ids.last().cloned()).flatten();
        // The names skipped when the directory was read, on the page whose
        // range holds them.
        let upper = next.as_deref();
        skipped.extend(
            listing
                .skipped
                .iter()
                .filter(|s| {
                    page.after
                        .as_deref()
                        .is_none_or(|after| s.id.as_str() > after)
                })
                .filter(|s| upper.is_none_or(|upper| s.id.as_str() <= upper))
                .cloned(),
        );
        skipped.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(Page {
            sessions,
            next,
            skipped,
        })
    }

    /// The directory's sessions, read again unless the listing kept is still
    /// true.
    fn listing(&self) -> Result<Arc<Listing>, StoreError> {
        let modified = std::fs::metadata(&self.dir)
            .and_then(|m| m.modified())
            .map_err(StoreError::io(&self.dir))?;
        let mut kept = self.listing.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(listing) = kept.as_ref() {
            let settled = listing
                .taken
                .duration_since(listing.modified)
                .is_ok_and(|age| age >= LISTING_SETTLED);
            if listing.modified == modified && settled {
                return Ok(Arc::clone(listing));
            }
        }
        let taken = SystemTime::now();
        let read = std::fs::read_dir(&self.dir).map_err(StoreError::io(&self.dir))?;
        let mut ids = Vec::new();
        let mut skipped = Vec::new();
        for item in read {
            let item = item.map_err(StoreError::io(&self.dir))?;
            let name = item.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
                continue;
            };
            if validate_session_id(id).is_err() {
                continue;
            }
            // The entry itself, not what a link points to.
            let file_type = item.file_type().map_err(StoreError::io(item.path()))?;
            if file_type.is_file() {
                ids.push(id.to_owned());
            } else {
                let found = regular_file::describe(file_type);
                log::warn!(
                    "agentmsg store {}: skipped `{}`: {found}, not a regular file",
                    self.dir.display(),
                    name.to_string_lossy()
                );
                skipped.push(SkippedSession {
                    id: id.to_owned(),
                    reason: format!(
                        "{}: is {found}, not a regular file (a store never follows links)",
                        item.path().display()
                    ),
                });
            }
        }
        ids.sort_unstable();
        skipped.sort_by(|a, b| a.id.cmp(&b.id));
        let listing = Arc::new(Listing {
            modified,
            taken,
            ids,
            skipped,
        });
        *kept = Some(Arc::clone(&listing));
        Ok(listing)
    }

    /// Forgets the listing kept (this store created or deleted a session).
    fn relist(&self) {
        *self.listing.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn create_now(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        let path = self.file_of(session);
        let (file, metadata) =
            regular_file::open_with_metadata(&path, Access::CreateNew).map_err(|e| {
                e.into_store_error(
                    || StoreError::io(&path)(io::ErrorKind::NotFound.into()),
                    || StoreError::Exists {
                        session: session.to_owned(),
                    },
                )
            })?;
        self.relist();
        self.sync_dir()?;
        // The file is new (`O_EXCL`), so empty, and kept open for the appends
        // that follow: what it was created as is its info.
        let (created_ms, updated_ms) = times_ms(&metadata);
        let file = SessionFile::new(file, &metadata, path);
        keep(
            &mut self.files.lock().unwrap_or_else(PoisonError::into_inner),
            session,
            file,
        );
        Ok(SessionInfo {
            id: session.to_owned(),
            name: None,
            created_ms,
            updated_ms,
            entries: 0,
            leaf: None,
        })
    }

    fn delete_now(&self, session: &str) -> Result<(), StoreError> {
        validate_session_id(session)?;
        let path = self.file_of(session);
        loop {
            let (file, metadata) = open_existing(&path, session)?;
            let _locked = file_lock::lock(&file, &path, false, self.lock_timeout)?;
            let named = Identity::of_metadata(&metadata).len_at(&path)?;
            if named.is_none() {
                continue;
            }
            // Under the lock, so no appender writes to the file once it is gone
            // (each checks that the file's name still names its file). Removing a
            // path removes a link, never what it points to.
            std::fs::remove_file(&path).map_err(StoreError::io(&path))?;
            let torn = self.torn_of(session);
            match std::fs::remove_file(&torn) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(StoreError::io(torn)(e)),
            }
            break;
        }
        self.forget(session);
        self.relist();
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

/// What an append needs of its store.
struct Settings<'a> {
    durability: Durability,
    lock_timeout: Duration,
    /// The store's directory (where a torn line would be put aside).
    dir: &'a Path,
}

impl SessionFile {
    /// A session file just opened (`metadata` is the open file's).
    fn new(file: File, metadata: &std::fs::Metadata, path: PathBuf) -> SessionFile {
        let identity = Identity::of_metadata(metadata);
        SessionFile {
            file,
            identity,
            path,
            scanned: 0,
            entries: 0,
            leaf: None,
            tree: TreeIndex::default(),
            buf: Vec::new(),
        }
    }

    /// Appends under the lock.
    fn append(
        &mut self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
        settings: Settings<'_>,
    ) -> Result<Appended, StoreError> {
        // Lock the file the path names now (reopening when the one held open
        // was deleted or replaced).
        loop {
            file_lock::acquire(&self.file, &self.path, false, settings.lock_timeout)?;
            let current = self.identity.len_at(&self.path);
            if let Ok(Some(len)) = current {
                let appended = self.append_locked(len, session, entries, expected, &settings);
                let _ = self.file.unlock();
                return appended;
            }
            let _ = self.file.unlock();
            current?;
            let (file, metadata) = open_existing(&self.path, session)?;
            self.identity = Identity::of_metadata(&metadata);
            self.file = file;
            self.forget_scan();
        }
    }

    /// Forgets what was read of the file (it is read again from the start).
    fn forget_scan(&mut self) {
        self.scanned = 0;
        self.entries = 0;
        self.leaf = None;
        self.tree.clear();
    }

    fn append_locked(
        &mut self,
        len: u64,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
        settings: &Settings<'_>,
    ) -> Result<Appended, StoreError> {
        self.catch_up(len, (settings.dir, session), settings.durability)?;
        expected.check(session, self.leaf.as_deref())?;
        self.tree.check(session, entries)?;
        let written = write_lines(&self.file, entries, &mut self.buf)
            .and_then(|written| {
                if settings.durability == Durability::Disk {
                    self.file.sync_data()?;
                }
                Ok(written)
            })
            .map_err(StoreError::io(&self.path))?;
        for entry in entries {
            self.tree.note(entry);
        }
        let first = self.entries;
        self.scanned += written;
        self.entries += entries.len() as u64;
        if let Some(id) = leaf_after(None, entries) {
            // The leaf's string is reused: no allocation but the copy returned.
            match &mut self.leaf {
                Some(leaf) => {
                    leaf.clear();
                    leaf.push_str(id);
                }
                leaf => *leaf = Some(id.to_owned()),
            }
        }
        Ok(Appended {
            first,
            entries: self.entries,
            leaf: self.leaf.clone(),
        })
    }

    /// Reads one whole line of the file.
    fn read_line(&mut self, line: &[u8]) {
        self.entries += 1;
        if let Ok(text) = std::str::from_utf8(line) {
            let entry = StoredEntry::from_line(text).0;
            if let Some(id) = entry.id() {
                self.leaf = Some(id.to_owned());
            }
            self.tree.note(&entry);
        }
    }

    /// Reads what was appended since the last look (the lock is held), and
    /// ends the file cleanly: a torn last line is moved aside, a whole line
    /// without its newline gets one.
    fn catch_up(
        &mut self,
        len: u64,
        (dir, session): (&Path, &str),
        durability: Durability,
    ) -> Result<(), StoreError> {
        if len < self.scanned {
            // Rewritten shorter (a repair under the lock): read it again.
            self.forget_scan();
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
        // A byte-order mark before the first line is no part of it.
        let body = match self.scanned {
            0 => bytes.strip_prefix(BOM).unwrap_or(&bytes),
            _ => &bytes[..],
        };
        let complete = complete_len(body);
        for line in complete_lines(&body[..complete]) {
            self.read_line(line);
        }
        let tail = body[complete..].to_vec();
        self.scanned += bytes.len() as u64;
        if tail.is_empty() {
            return Ok(());
        }
        if is_torn_line(&tail) {
            let torn_path = &torn_file(dir, session);
            let mut kept = Vec::with_capacity(tail.len() + 1);
            kept.extend_from_slice(&tail);
            kept.push(b'\n');
            regular_file::open(torn_path, Access::AppendOrCreate)
                .map_err(|e| e.into_io(torn_path))
                .and_then(|mut aside| {
                    aside
                        .write_all(&kept)
                        .and_then(|()| aside.sync_data())
                        .map_err(StoreError::io(torn_path))
                })?;
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
        if !is_blank(&tail) {
            self.read_line(&tail);
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

/// A file's creation and modification times in milliseconds since the Unix
/// epoch (the modification time where the creation time is unknown).
fn times_ms(metadata: &std::fs::Metadata) -> (i64, i64) {
    let ms = |time: io::Result<SystemTime>| {
        time.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    };
    let updated = ms(metadata.modified()).unwrap_or(0);
    (ms(metadata.created()).unwrap_or(updated), updated)
}

/// Writes each entry's line and its newline at the end of `file`, in one
/// `write` of `buf` (kept from one append to the next up to
/// [`KEPT_BUFFER`]), so that a reader, which takes the lock too, and a
/// crash see whole appends. The number of bytes written.
fn write_lines(mut file: &File, entries: &[StoredEntry], buf: &mut Vec<u8>) -> io::Result<u64> {
    buf.clear();
    buf.reserve(entries.iter().map(|e| e.line().len() + 1).sum());
    for entry in entries {
        buf.extend_from_slice(entry.line().as_bytes());
        buf.push(b'\n');
    }
    file.write_all(buf)?;
    let written = buf.len() as u64;
    if buf.capacity() > KEPT_BUFFER {
        *buf = Vec::new();
    }
    Ok(written)
}

/// Keeps `file` open as `session`'s, in place of any kept before.
fn keep(
    files: &mut HashMap<String, Arc<Mutex<SessionFile>>, foldhash::fast::RandomState>,
    session: &str,
    file: SessionFile,
) -> Arc<Mutex<SessionFile>> {
    if files.len() >= MAX_OPEN_FILES {
        // Close the files no append is using (they are opened again, and read
        // again, when needed).
        files.retain(|_, file| Arc::strong_count(file) > 1);
    }
    let handle = Arc::new(Mutex::new(file));
    files.insert(session.to_owned(), Arc::clone(&handle));
    handle
}

/// Opens a session's file to append to it (a link, a FIFO… refused).
fn open_existing(path: &Path, session: &str) -> Result<(File, std::fs::Metadata), StoreError> {
    regular_file::open_with_metadata(path, Access::Append)
        .map_err(|e| not_found_or(e, path, session))
}

/// The error of opening a session file that should be there.
fn not_found_or(e: OpenError, path: &Path, session: &str) -> StoreError {
    e.into_store_error(
        || StoreError::NotFound {
            session: session.to_owned(),
        },
        || StoreError::io(path)(io::ErrorKind::AlreadyExists.into()),
    )
}

/// Reads the whole file under its shared lock.
fn read_shared(
    path: &Path,
    session: &str,
    lock_timeout: Duration,
) -> Result<(Vec<u8>, std::fs::Metadata), StoreError> {
    let file =
        regular_file::open(path, Access::Read).map_err(|e| not_found_or(e, path, session))?;
    let locked: Locked<'_> = file_lock::lock(&file, path, true, lock_timeout)?;
    let metadata = file.metadata().map_err(StoreError::io(path))?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    (&file)
        .read_to_end(&mut bytes)
        .map_err(StoreError::io(path))?;
    drop(locked);
    Ok((bytes, metadata))
}

/// Where a session's torn lines are put aside.
fn torn_file(dir: &Path, session: &str) -> PathBuf {
    dir.join(format!("{session}.jsonl.torn"))
}

/// The lines of a whole session file that are entries: its whole lines and a
/// last line without its newline unless a crash tore it (a byte-order mark
/// before the first is skipped).
fn entry_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let complete = complete_len(bytes);
    let tail = &bytes[complete..];
    let tail = (!is_blank(tail) && !is_torn_line(tail)).then_some(tail);
    complete_lines(&bytes[..complete]).chain(tail)
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
