//! Session stores against plain files, on the same lines (realistic transcript
//! lines of about 0.5 kB, each with an `id` and a `parentId`):
//!
//! - `append`: 1,000 appends of one entry each (`Expect::Any`,
//!   `Durability::Os`) to a fresh session, per backend, against two
//!   baselines: `file-buffered` (a `BufWriter` over a file opened for
//!   appending, flushed once at the end: the limit) and `file-write-each`
//!   (the same, flushed after each line: one `write` per append, the least an
//!   append that is on its way to the disk when it returns can cost), and
//!   `file-open-each` (open the file for appending, write the line, close it:
//!   what pi does for every entry with `appendFileSync`); 100 entries per
//!   call (`-batch100`) too, against `file-buffered`;
//! - `load`: a 10,000-entry session loaded whole, per backend, against
//!   `JsonlReader` reading (and decoding) the same lines from a file;
//! - `list`: a page of 500 sessions of a `JsonlDir` and an SQLite store
//!   holding 100,000, the first page against the last one (a page costs its
//!   own size, wherever it is: the ratio stays near 1).
//!
//! PostgreSQL is measured when `AGENTMSG_PG_URL` is set. After criterion's
//! report the bench prints each ratio to its baseline (median of interleaved
//! runs, which side goes first alternating), e.g. `ratio append/jsonl-dir vs
//! file-buffered: 3.10x`.
//!
//! `AGENTMSG_BENCH_ONLY=append` (or `load`, `list`; several joined by
//! commas) sets up and measures only those groups, criterion's and the
//! ratios, and a backend named there (`jsonl-dir`, `sqlite`, `postgres`)
//! leaves out the others: with `AGENTMSG_BENCH_ONLY=append,jsonl-dir` and a
//! filter that matches no criterion bench (`--bench zzz`) the run is the
//! `JsonlDir` append ratios alone, a second or two, for `perf` or `strace`.
//! `AGENTMSG_BENCH_RUNS=N` runs each ratio's sides N times each (7 by
//! default). `benches/pi_append.sh` sets pi's own appends beside these.
//!
//! Run: `benches/bench.sh --bench store --all-features` (see benches/README.md).

use std::fs::OpenOptions;
use std::hint::black_box;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentmsg::store::{AnyStore, Cursor, Expect, JsonlDir, SessionStore, StoredEntry};
use criterion::{BatchSize, Criterion, Throughput};

const APPENDS: usize = 1_000;
const LOAD_ENTRIES: usize = 10_000;
const RATIO_RUNS: usize = 7;

fn bench_mode() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The names `AGENTMSG_BENCH_ONLY` lists (none when it is unset).
fn only() -> Vec<String> {
    std::env::var("AGENTMSG_BENCH_ONLY")
        .map(|only| only.split(',').map(|n| n.trim().to_owned()).collect())
        .unwrap_or_default()
}

/// Whether `name` (a group, or a backend) is measured: when
/// `AGENTMSG_BENCH_ONLY` names none of `kind` (the groups, or the backends),
/// all of them are.
fn measured(name: &str, kind: &[&str]) -> bool {
    let only = only();
    !only.iter().any(|n| kind.contains(&n.as_str())) || only.iter().any(|n| n == name)
}

const GROUPS: &[&str] = &["append", "load", "list"];
const BACKENDS: &[&str] = &["jsonl-dir", "sqlite", "postgres"];

/// How many runs of each side a ratio takes (`AGENTMSG_BENCH_RUNS`, odd
/// numbers keep the median a run's).
fn ratio_runs() -> usize {
    std::env::var("AGENTMSG_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .filter(|&runs| runs > 0)
        .unwrap_or(RATIO_RUNS)
}

/// Transcript lines: a user prompt, an assistant turn with a tool call, its
/// result, repeated; each a child of the one before.
fn lines(n: usize) -> Vec<StoredEntry> {
    (0..n)
        .map(|i| {
            let parent = if i == 0 { "null".to_owned() } else { format!("\"e{}\"", i - 1) };
            let line = match i % 3 {
                0 => format!(
                    r#"{{"role":"user","content":[{{"type":"text","text":"Please look at src/module_{i}.rs and tell me why the test fails; the error mentions a lifetime."}}],"timestamp":{},"id":"e{i}","parentId":{parent}}}"#,
                    1_765_233_665_292u64 + i as u64
                ),
                1 => format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":"Reading the file first."}},{{"type":"toolCall","id":"toolu_{i}","name":"read","arguments":{{"path":"src/module_{i}.rs"}}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{{"input":2775,"output":141,"cacheRead":0,"cacheWrite":0,"totalTokens":2916,"cost":{{"input":0.0139,"output":0.0035,"cacheRead":0,"cacheWrite":0,"total":0.0174}}}},"stopReason":"toolUse","timestamp":{},"id":"e{i}","parentId":{parent}}}"#,
                    1_765_233_665_292u64 + i as u64
                ),
                _ => format!(
                    r#"{{"role":"toolResult","toolCallId":"toolu_{}","toolName":"read","content":[{{"type":"text","text":"fn main() {{ let s = String::new(); println!(\"{{}}\", s); }}"}}],"isError":false,"timestamp":{},"details":{{"bytes":61}},"id":"e{i}","parentId":{parent}}}"#,
                    i - 1,
                    1_765_233_665_292u64 + i as u64
                ),
            };
            StoredEntry::from_line(line).0
        })
        .collect()
}

struct Backends {
    runtime: tokio::runtime::Runtime,
    stores: Vec<(&'static str, AnyStore)>,
    _dir: tempfile::TempDir,
}

fn backends() -> Backends {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut stores = vec![(
        "jsonl-dir",
        AnyStore::JsonlDir(JsonlDir::open(dir.path().join("sessions")).unwrap()),
    )];
    #[cfg(feature = "sqlite")]
    stores.push((
        "sqlite",
        AnyStore::Sqlite(
            runtime
                .block_on(agentmsg::store::SqliteStore::open(dir.path().join("s.db")))
                .unwrap(),
        ),
    ));
    #[cfg(feature = "postgres")]
    if let Ok(url) = std::env::var("AGENTMSG_PG_URL") {
        let options = agentmsg::store::PgOptions {
            connections: 2,
            schema: Some(format!("agentmsg_bench_{}", std::process::id())),
            ..Default::default()
        };
        let store = runtime
            .block_on(agentmsg::store::PgStore::connect_with(&url, options))
            .unwrap();
        stores.push(("postgres", AnyStore::Postgres(Box::new(store))));
    } else {
        eprintln!("store bench: AGENTMSG_PG_URL is not set: PostgreSQL is not measured");
    }
    stores.retain(|(name, _)| measured(name, BACKENDS));
    Backends {
        runtime,
        stores,
        _dir: dir,
    }
}

/// A file removed on drop (outside the measured time), so the bench does not
/// fill the disk.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A session deleted on drop.
struct ScratchSession<'a>(&'a Backends, &'a AnyStore, String);

impl Drop for ScratchSession<'_> {
    fn drop(&mut self) {
        let _ = self.0.runtime.block_on(self.1.delete(&self.2));
    }
}

/// How a baseline writes lines to a plain file.
#[derive(Clone, Copy)]
enum FileWrite {
    /// One `BufWriter`, flushed at the end.
    Buffered,
    /// One `BufWriter`, flushed after each line.
    WriteEach,
    /// Open, write, close for each line (`appendFileSync`).
    OpenEach,
}

fn append_file(path: &Path, lines: &[StoredEntry], how: FileWrite) {
    let open = || {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap()
    };
    if let FileWrite::OpenEach = how {
        let mut line = Vec::new();
        for entry in lines {
            line.clear();
            line.extend_from_slice(entry.line().as_bytes());
            line.push(b'\n');
            open().write_all(&line).unwrap();
        }
        return;
    }
    let mut out = BufWriter::new(open());
    for entry in lines {
        out.write_all(entry.line().as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        if let FileWrite::WriteEach = how {
            out.flush().unwrap();
        }
    }
    out.flush().unwrap();
}

/// The system calls a one-entry `JsonlDir` append makes, for each line, on a
/// file opened once: lock, `lstat` of the path (inode, size), write the line
/// and its newline, unlock.
fn append_floor(path: &Path, lines: &[StoredEntry]) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    let mut line = Vec::new();
    for entry in lines {
        line.clear();
        line.extend_from_slice(entry.line().as_bytes());
        line.push(b'\n');
        file.lock().unwrap();
        black_box(std::fs::symlink_metadata(path).unwrap().len());
        file.write_all(&line).unwrap();
        file.unlock().unwrap();
    }
}

fn append_store(
    b: &Backends,
    store: &AnyStore,
    session: &str,
    lines: &[StoredEntry],
    per_call: usize,
) {
    b.runtime.block_on(async {
        store.create(session).await.unwrap();
        for entries in lines.chunks(per_call.max(1)) {
            store.append(session, entries, Expect::Any).await.unwrap();
        }
    });
}

fn main() {
    let appends = if bench_mode() { APPENDS } else { 50 };
    let load_entries = if bench_mode() { LOAD_ENTRIES } else { 300 };
    let (do_append, do_load, do_list) = (
        measured("append", GROUPS),
        measured("load", GROUPS),
        measured("list", GROUPS),
    );
    let b = backends();
    let append_lines = lines(appends);
    let load_lines = lines(load_entries);
    let files = tempfile::tempdir().unwrap();
    let fresh = std::cell::Cell::new(0usize);
    let next = || {
        fresh.set(fresh.get() + 1);
        format!("b{}", fresh.get())
    };

    // The 10,000-entry session in every store, and in a plain file.
    let load_file = files.path().join("load.jsonl");
    if do_load {
        for (_, store) in &b.stores {
            append_store(&b, store, "load", &[], 1);
            b.runtime
                .block_on(store.append("load", &load_lines, Expect::Any))
                .unwrap();
        }
        append_file(&load_file, &load_lines, FileWrite::Buffered);
    }
    let mut read_file = || {
        let file = std::fs::File::open(&load_file).unwrap();
        let read = agentmsg::transcript::read_transcript(BufReader::new(file)).unwrap();
        assert_eq!(read.messages.len(), load_entries);
        black_box(read);
    };
    let load_store = |store: &AnyStore| {
        let loaded = b
            .runtime
            .block_on(store.load("load", Cursor::START))
            .unwrap();
        assert_eq!(loaded.entries.len(), load_entries);
        black_box(loaded);
    };

    let mut c = Criterion::default().configure_from_args();
    if do_append {
        let mut group = c.benchmark_group("append");
        group.throughput(Throughput::Elements(appends as u64));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(3));
        let scratch = || Scratch(files.path().join(format!("{}.jsonl", next())));
        for (name, how) in [
            ("file-buffered", FileWrite::Buffered),
            ("file-write-each", FileWrite::WriteEach),
            ("file-open-each", FileWrite::OpenEach),
        ] {
            group.bench_function(name, |bench| {
                bench.iter_batched(
                    scratch,
                    |file| {
                        append_file(&file.0, &append_lines, how);
                        file
                    },
                    BatchSize::PerIteration,
                )
            });
        }
        for (name, store) in &b.stores {
            for (variant, per_call) in [("", 1), ("-batch100", 100)] {
                group.bench_function(format!("{name}{variant}"), |bench| {
                    bench.iter_batched(
                        || ScratchSession(&b, store, next()),
                        |session| {
                            append_store(&b, store, &session.2, &append_lines, per_call);
                            session
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
        }
        group.finish();
    }
    if do_load {
        let mut group = c.benchmark_group("load");
        group.throughput(Throughput::Elements(load_entries as u64));
        group.sample_size(10);
        group.bench_function("jsonl-reader", |bench| bench.iter(&mut read_file));
        for (name, store) in &b.stores {
            group.bench_function(*name, |bench| bench.iter(|| load_store(store)));
        }
        group.finish();
    }
    // 100,000 sessions (empty: a page reads each of its sessions) in a
    // directory and in an SQLite database.
    let sessions = if bench_mode() { 100_000 } else { 2_000 };
    let list_dir = files.path().join("many");
    let mut listers: Vec<(&str, AnyStore)> = Vec::new();
    if do_list && measured("jsonl-dir", BACKENDS) {
        std::fs::create_dir(&list_dir).unwrap();
        for i in 0..sessions {
            std::fs::File::create(list_dir.join(format!("s{i:06}.jsonl"))).unwrap();
        }
        listers.push((
            "jsonl-dir",
            AnyStore::JsonlDir(JsonlDir::open(&list_dir).unwrap()),
        ));
    }
    #[cfg(feature = "sqlite")]
    if do_list && measured("sqlite", BACKENDS) {
        let many_db = files.path().join("many.db");
        let sqlite = b
            .runtime
            .block_on(agentmsg::store::SqliteStore::open(&many_db))
            .unwrap();
        let mut conn = rusqlite::Connection::open(&many_db).unwrap();
        let tx = conn.transaction().unwrap();
        let mut insert = tx
            .prepare(
                "INSERT INTO agentmsg_sessions (id, created_ms, updated_ms, entry_count)
                 VALUES (?1, 1, 1, 0)",
            )
            .unwrap();
        for i in 0..sessions {
            insert.execute([format!("s{i:06}")]).unwrap();
        }
        drop(insert);
        tx.commit().unwrap();
        listers.push(("sqlite", AnyStore::Sqlite(sqlite)));
    }
    // A directory's listing is kept once it has not changed for 2 s.
    if do_list {
        std::thread::sleep(Duration::from_millis(2_100));
    }
    let last_after = format!("s{:06}", sessions - 501);
    let list_page = |store: &AnyStore, after: Option<&str>| {
        let page = b
            .runtime
            .block_on(store.list(&agentmsg::store::PageRequest {
                after: after.map(str::to_owned),
                limit: 500,
            }))
            .unwrap();
        assert_eq!(page.sessions.len(), 500);
        black_box(page);
    };
    if do_list {
        let mut group = c.benchmark_group("list");
        group.throughput(Throughput::Elements(500));
        group.sample_size(20);
        for (name, store) in &listers {
            group.bench_function(format!("{name}/first-page"), |bench| {
                bench.iter(|| list_page(store, None))
            });
            group.bench_function(format!("{name}/last-page"), |bench| {
                bench.iter(|| list_page(store, Some(&last_after)))
            });
        }
        group.finish();
    }
    c.final_summary();

    // Ratios: the median of interleaved runs of each side.
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed().as_secs_f64()
    };
    let ratio = |name: String, f: &mut dyn FnMut(), baseline: &mut dyn FnMut()| {
        // Which side goes first alternates, so neither always meets a warm
        // or a cold machine.
        let runs = ratio_runs();
        let mut ratios: Vec<f64> = (0..runs)
            .map(|run| {
                if run % 2 == 0 {
                    let t = time(f);
                    t / time(baseline)
                } else {
                    let base = time(baseline);
                    time(f) / base
                }
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        println!("ratio {name}: {:.2}x", ratios[runs / 2]);
    };
    let jsonl_appends = do_append && measured("jsonl-dir", BACKENDS);
    let appended = b.stores.iter().filter(|_| do_append);
    for (name, store) in appended {
        for (variant, per_call, baseline, how) in [
            ("", 1, "file-buffered", FileWrite::Buffered),
            ("", 1, "file-write-each", FileWrite::WriteEach),
            ("", 1, "file-open-each", FileWrite::OpenEach),
            ("-batch100", 100, "file-buffered", FileWrite::Buffered),
        ] {
            // What each run wrote is removed after the ratio, outside the timing.
            let sessions = std::cell::RefCell::new(Vec::new());
            let scratch_files = std::cell::RefCell::new(Vec::new());
            ratio(
                format!("append/{name}{variant} vs {baseline}"),
                &mut || {
                    let session = ScratchSession(&b, store, next());
                    append_store(&b, store, &session.2, &append_lines, per_call);
                    sessions.borrow_mut().push(session);
                },
                &mut || {
                    let file = Scratch(files.path().join(format!("{}.jsonl", next())));
                    append_file(&file.0, &append_lines, how);
                    scratch_files.borrow_mut().push(file);
                },
            );
        }
    }
    // The floor of a one-entry `JsonlDir` append: its four system calls on a
    // file kept open (lock, `lstat` of the path, `write`, unlock), and none of
    // the store's own work.
    if jsonl_appends {
        let scratch_files = std::cell::RefCell::new(Vec::new());
        ratio(
            "append/floor (lock, lstat, write, unlock: no store) vs file-open-each".to_owned(),
            &mut || {
                let file = Scratch(files.path().join(format!("{}.jsonl", next())));
                append_floor(&file.0, &append_lines);
                scratch_files.borrow_mut().push(file);
            },
            &mut || {
                let file = Scratch(files.path().join(format!("{}.jsonl", next())));
                append_file(&file.0, &append_lines, FileWrite::OpenEach);
                scratch_files.borrow_mut().push(file);
            },
        );
    }
    for (name, store) in &listers {
        ratio(
            format!("list/{name} last page vs first page ({sessions} sessions)"),
            &mut || list_page(store, Some(&last_after)),
            &mut || list_page(store, None),
        );
    }
    for (name, store) in b.stores.iter().filter(|_| do_load) {
        ratio(
            format!("load/{name} vs jsonl-reader"),
            &mut || load_store(store),
            &mut read_file,
        );
    }
}
