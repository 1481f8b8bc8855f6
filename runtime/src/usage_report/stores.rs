//! The sessions of a store (`sqlite:PATH`, `postgres://…`, a directory
//! store), read as a report reads a log: each session once, every reply on
//! every branch.

use crate::store::{AnyStore, Backend, Cursor, PageRequest, SessionStore, StoreAddress};

use super::logs::{self, LogContents, LogFile};
use super::ReportError;

/// The sessions of the store `address` names (every one, page by page, or
/// only the one after its `#`), each with what it holds for a report. The
/// store is opened to read only (nothing is created). A session's
/// [`LogFile`] names it by the address and its id (`sqlite:PATH#ID`; a
/// PostgreSQL password is never shown), its `session` is its id and its
/// `project` the store's address.
///
/// ```no_run
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::store::StoreAddress;
/// # use agentmsg::usage_report::{stores, Grouping, Options, Report};
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let address = StoreAddress::resolve("sqlite:sessions.db")?;
/// let sessions = stores::read_store(&address).await?;
/// let report = Report::build_with(&[], sessions, &Options::new(Grouping::Session))?;
/// println!("{}", report.to_text());
/// # Ok(())
/// # }
/// ```
pub async fn read_store(
    address: &StoreAddress,
) -> Result<Vec<(LogFile, LogContents)>, ReportError> {
    let shown = shown(&address.backend);
    let fail = |source| ReportError::Store {
        address: shown.clone(),
        source,
    };
    let store = AnyStore::open_existing(&address.backend)
        .await
        .map_err(fail)?;
    let ids = match &address.session {
        Some(id) => vec![id.clone()],
        None => {
            let mut ids = Vec::new();
            let mut page = PageRequest::default();
            loop {
                let listed = store.list(&page).await.map_err(fail)?;
                ids.extend(listed.sessions.into_iter().map(|s| s.id));
                match listed.next {
                    Some(next) => page.after = Some(next),
                    None => break,
                }
            }
            ids
        }
    };
    let mut sessions = Vec::with_capacity(ids.len());
    for id in ids {
        let loaded = store.load(&id, Cursor::START).await.map_err(fail)?;
        let mut bytes = Vec::new();
        for entry in &loaded.entries {
            bytes.extend_from_slice(entry.line().as_bytes());
            bytes.push(b'\n');
        }
        let mut contents = logs::read_transcript(&bytes);
        // Lines that are no text are not among the entries: counted unread.
        contents.unread_lines += loaded
            .problems
            .iter()
            .filter(|p| matches!(p.problem, crate::store::EntryProblem::NotUtf8(_)))
            .count();
        let file = LogFile {
            path: format!("{shown}#{id}").into(),
            session: id,
            project: shown.clone(),
        };
        sessions.push((file, contents));
    }
    Ok(sessions)
}

/// The store's address as it may be shown: a PostgreSQL URL without its
/// password.
fn shown(backend: &Backend) -> String {
    match backend {
        Backend::JsonlDir(dir) => format!("dir:{}", dir.display()),
        Backend::Sqlite(path) => format!("sqlite:{}", path.display()),
        Backend::Postgres(url) => crate::store::redact_passwords(url),
    }
}
