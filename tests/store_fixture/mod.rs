//! Stores for the store tests: a fresh one of each backend, and the rule for
//! PostgreSQL (it needs a server: `AGENTMSG_PG_URL`, which `.ci/run` sets).
#![allow(dead_code)]

/// Runs each async test function `name(&Fixture)` against every backend: a
/// module per backend with a `#[tokio::test]` per function (PostgreSQL only
/// with a server, see [`postgres`]).
#[allow(unused_macros)]
macro_rules! suite {
    ($($test:ident),* $(,)?) => {
        mod jsonl_dir {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(&crate::store_fixture::jsonl_dir().await).await;
                }
            )*
        }
        #[cfg(feature = "sqlite")]
        mod sqlite {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(&crate::store_fixture::sqlite().await).await;
                }
            )*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(
                #[tokio::test]
                async fn $test() {
                    if let Some(f) = crate::store_fixture::postgres(stringify!($test)).await {
                        super::$test(&f).await;
                    }
                }
            )*
        }
    };
}

use agentmsg::store::{AnyStore, JsonlDir, StoreError, StoredEntry};

/// The variables under which a missing PostgreSQL fails the tests instead of
/// skipping them.
const REQUIRE_VARS: [&str; 2] = ["CI", "AGENTMSG_REQUIRE_CONFORMANCE"];

/// A store and what keeps it alive.
pub struct Fixture {
    pub store: AnyStore,
    /// The temporary directory of a JsonlDir or an SQLite file.
    pub dir: Option<tempfile::TempDir>,
    /// How to open the same store again (a second writer).
    pub reopen: Reopen,
}

/// How to open the same store again.
#[derive(Clone, Debug)]
pub enum Reopen {
    Dir(std::path::PathBuf),
    Sqlite(std::path::PathBuf),
    Postgres { url: String, schema: String },
}

impl Reopen {
    pub async fn open(&self) -> AnyStore {
        match self {
            Reopen::Dir(dir) => AnyStore::JsonlDir(JsonlDir::open(dir).unwrap()),
            #[cfg(feature = "sqlite")]
            Reopen::Sqlite(path) => {
                AnyStore::Sqlite(agentmsg::store::SqliteStore::open(path).await.unwrap())
            }
            #[cfg(feature = "postgres")]
            Reopen::Postgres { url, schema } => {
                let options = agentmsg::store::PgOptions {
                    connections: 2,
                    schema: Some(schema.clone()),
                    ..Default::default()
                };
                AnyStore::Postgres(Box::new(
                    agentmsg::store::PgStore::connect_with(url, options)
                        .await
                        .unwrap(),
                ))
            }
            #[allow(unreachable_patterns)]
            _ => unreachable!("backend not built"),
        }
    }
}

pub async fn jsonl_dir() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions");
    Fixture {
        store: AnyStore::JsonlDir(JsonlDir::open(&path).unwrap()),
        dir: Some(dir),
        reopen: Reopen::Dir(path),
    }
}

#[cfg(feature = "sqlite")]
pub async fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let reopen = Reopen::Sqlite(path);
    Fixture {
        store: reopen.open().await,
        dir: Some(dir),
        reopen,
    }
}

/// A store in a schema of its own on the server at `AGENTMSG_PG_URL`; `None`
/// (said loudly) without it, a failure under CI.
#[cfg(feature = "postgres")]
pub async fn postgres(test: &str) -> Option<Fixture> {
    let Ok(url) = std::env::var("AGENTMSG_PG_URL") else {
        if let Some(var) = REQUIRE_VARS.iter().find(|v| std::env::var_os(v).is_some()) {
            panic!("AGENTMSG_PG_URL is not set but {var} is: the PostgreSQL store tests must run (.ci/run starts a server)");
        }
        eprintln!(
            "\n==== SKIPPED: PostgreSQL store test `{test}`: AGENTMSG_PG_URL is not set ====\n\
             ==== (.ci/run starts a throwaway server and sets it; under CI this fails) ====\n"
        );
        return None;
    };
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let schema = format!(
        "agentmsg_test_{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        stamp % 1_000_000_000
    );
    let reopen = Reopen::Postgres { url, schema };
    Some(Fixture {
        store: reopen.open().await,
        dir: None,
        reopen,
    })
}

/// A plain client of the server at `url`, for what a test does beside the
/// store (planting rows, holding locks, inspecting plans).
#[cfg(feature = "postgres")]
pub async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// The entry of `line`, which must read without a problem.
pub fn entry(line: &str) -> StoredEntry {
    let (entry, problem) = StoredEntry::from_line(line);
    assert!(problem.is_none(), "{line}: {problem:?}");
    entry
}

/// A user message line with `id` whose parent is `parent` (`None`: a root).
pub fn message(id: &str, parent: Option<&str>, text: &str) -> StoredEntry {
    let parent = match parent {
        Some(p) => format!("\"{p}\""),
        None => "null".to_owned(),
    };
    entry(&format!(
        r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"id":"{id}","parentId":{parent},"timestamp":1765233665292}}"#
    ))
}

/// Appends `make(parent)` as a child of the leaf, taking the leaf from each
/// conflict and trying again; returns the number of conflicts.
pub async fn append_child<S: agentmsg::store::SessionStore>(
    store: &S,
    session: &str,
    leaf: &mut Option<String>,
    make: impl Fn(Option<&str>) -> StoredEntry,
) -> usize {
    let mut conflicts = 0;
    loop {
        let entry = make(leaf.as_deref());
        match store
            .append(
                session,
                &[entry],
                agentmsg::store::Expect::leaf(leaf.as_deref()),
            )
            .await
        {
            Ok(appended) => {
                *leaf = appended.leaf;
                return conflicts;
            }
            Err(StoreError::Conflict { actual, .. }) => {
                conflicts += 1;
                *leaf = actual;
            }
            Err(e) if e.is_retryable() => conflicts += 1,
            Err(e) => panic!("append to {session}: {e}"),
        }
    }
}

/// Checks that `entries` form one chain from a root, each the child of the one
/// before, and returns their ids.
pub fn assert_chain(session: &str, entries: &[StoredEntry]) -> Vec<String> {
    let mut previous: Option<&str> = None;
    let mut ids = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        assert_eq!(
            entry.parent().id().map(agentmsg::MessageId::as_str),
            previous,
            "{session}: entry {i} ({:?}) is not the child of the one before: a fork",
            entry.id()
        );
        previous = entry.id();
        ids.push(entry.id().expect("an id").to_owned());
    }
    ids
}
