//! `agentmsg sessions`: the sessions of a store; and a session of a store read
//! where a command takes a transcript file (`sqlite:PATH#SESSION`,
//! `postgres://…#SESSION`, `DIR#SESSION`).

use std::io::Write;
use std::path::{Path, PathBuf};

use agentmsg_runtime::store::{
    AnyStore, Backend, Cursor, PageRequest, SessionInfo, SessionStore, StoreAddress, StoreError,
};
use agentmsg_runtime::time::format_iso8601_seconds;

use crate::error::CliError;
use crate::Outcome;

/// The store `sessions` lists when neither `--store` nor `AGENTMSG_STORE` names
/// one.
const DEFAULT_STORE: &str = ".agentmsg/sessions";

/// The arguments of `agentmsg sessions`.
#[derive(Debug, clap::Args)]
pub struct SessionsArgs {
    /// The store: a directory of session files (`DIR` or `dir:DIR`),
    /// `sqlite:PATH` or `postgres://USER@HOST/DB`; `#SESSION` after it shows
    /// that session only. Default: $AGENTMSG_STORE, else .agentmsg/sessions.
    #[arg(long, value_name = "ADDR")]
    pub store: Option<String>,
    /// List the sessions whose ids sort after this one.
    #[arg(long, value_name = "ID")]
    pub after: Option<String>,
    /// List at most this many.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Print JSON Lines (one object per session) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One session as `--json` prints it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Row<'a> {
    id: &'a str,
    name: Option<&'a str>,
    created: String,
    updated: String,
    entries: u64,
    leaf: Option<&'a str>,
}

pub fn run(args: &SessionsArgs) -> Result<Outcome, CliError> {
    let address = match &args.store {
        Some(address) => address.clone(),
        None => std::env::var("AGENTMSG_STORE").unwrap_or_else(|_| DEFAULT_STORE.to_owned()),
    };
    let address: StoreAddress = address.parse().map_err(store_error)?;
    must_exist(&address.backend)?;
    let sessions = block_on(async {
        let store = AnyStore::open(&address.backend).await?;
        if let Some(session) = &address.session {
            return Ok(vec![store.open(session).await?]);
        }
        let mut sessions = Vec::new();
        let mut request = PageRequest {
            after: args.after.clone(),
            limit: args.limit.unwrap_or(500).min(500),
        };
        loop {
            let page = store.list(&request).await?;
            sessions.extend(page.sessions);
            match page.next {
                Some(next) if args.limit.is_none_or(|limit| sessions.len() < limit) => {
                    request.after = Some(next);
                }
                _ => break,
            }
        }
        if let Some(limit) = args.limit {
            sessions.truncate(limit);
        }
        Ok(sessions)
    })?
    .map_err(store_error)?;
    let mut out = crate::output::stdout();
    if args.json {
        for s in &sessions {
            serde_json::to_writer(&mut out, &row(s))?;
            writeln!(out)?;
        }
    } else {
        print_table(&mut out, &sessions)?;
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

fn row(s: &SessionInfo) -> Row<'_> {
    Row {
        id: &s.id,
        name: s.name.as_deref(),
        created: format_iso8601_seconds(s.created_ms),
        updated: format_iso8601_seconds(s.updated_ms),
        entries: s.entries,
        leaf: s.leaf.as_deref(),
    }
}

fn print_table(out: &mut impl Write, sessions: &[SessionInfo]) -> Result<(), CliError> {
    let width = sessions
        .iter()
        .map(|s| s.id.len())
        .max()
        .unwrap_or(2)
        .max(2);
    writeln!(
        out,
        "{:<width$}  {:>7}  {:<24}  {:<20}  NAME",
        "ID", "ENTRIES", "UPDATED", "LEAF"
    )?;
    for s in sessions {
        let leaf = s.leaf.as_deref().unwrap_or("-");
        let leaf = if leaf.chars().count() > 20 {
            format!("{}…", leaf.chars().take(19).collect::<String>())
        } else {
            leaf.to_owned()
        };
        writeln!(
            out,
            "{:<width$}  {:>7}  {:<24}  {:<20}  {}",
            s.id,
            s.entries,
            format_iso8601_seconds(s.updated_ms),
            leaf,
            s.name.as_deref().unwrap_or("")
        )?;
    }
    if sessions.is_empty() {
        crate::output::note!("agentmsg: the store has no sessions");
    }
    Ok(())
}

/// Whether `path` is a store address (`sqlite:…`, `postgres://…`, `dir:…`, or
/// `DIR#SESSION` where no file has that name) rather than a file.
pub fn is_store_address(path: &Path) -> bool {
    let Some(text) = path.to_str() else {
        return false;
    };
    let is_store = text.starts_with("sqlite:")
        || text.starts_with("postgres://")
        || text.starts_with("postgresql://")
        || text.starts_with("dir:");
    is_store
        || (!path.exists()
            && text
                .rsplit_once('#')
                .is_some_and(|(dir, _)| Path::new(dir).is_dir()))
}

/// The lines of the session `path` names when it is a store address with a
/// session (`sqlite:PATH#SESSION`, `postgres://…#SESSION`, `DIR#SESSION`), as
/// transcript bytes; `None` for a plain file path.
pub fn read_session(path: &Path) -> Result<Option<Vec<u8>>, CliError> {
    if !is_store_address(path) {
        return Ok(None);
    }
    let text = path.to_string_lossy();
    let address: StoreAddress = text.parse().map_err(store_error)?;
    let Some(session) = address.session.clone() else {
        return Err(CliError::Usage(format!(
            "{text}: a store address needs #SESSION to name a session"
        )));
    };
    must_exist(&address.backend)?;
    let loaded = block_on(async {
        let store = AnyStore::open(&address.backend).await?;
        store.load(&session, Cursor::START).await
    })?
    .map_err(store_error)?;
    for torn in &loaded.torn {
        crate::output::note!(
            "agentmsg: {text}: a line torn by a crash ({} bytes) is kept aside in {}",
            torn.raw.len(),
            torn.kept_in.display()
        );
    }
    let mut bytes = Vec::with_capacity(loaded.entries.iter().map(|e| e.line().len() + 1).sum());
    for entry in &loaded.entries {
        bytes.extend_from_slice(entry.line().as_bytes());
        bytes.push(b'\n');
    }
    Ok(Some(bytes))
}

/// Reading never creates a store: a directory or database file that is not
/// there is an error.
fn must_exist(backend: &Backend) -> Result<(), CliError> {
    let missing = match backend {
        Backend::JsonlDir(dir) => (!dir.is_dir()).then_some(dir),
        Backend::Sqlite(path) => (!path.is_file()).then_some(path),
        Backend::Postgres(_) => None,
    };
    match missing {
        Some(path) => Err(CliError::Usage(format!(
            "no session store at {} (pass --store ADDR or set AGENTMSG_STORE)",
            path.display()
        ))),
        None => Ok(()),
    }
}

fn store_error(e: StoreError) -> CliError {
    match e {
        StoreError::Io { path, source } => CliError::Read { path, source },
        other => CliError::Usage(other.to_string()),
    }
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| CliError::Read {
            path: PathBuf::from("<tokio runtime>"),
            source,
        })?;
    Ok(runtime.block_on(future))
}
