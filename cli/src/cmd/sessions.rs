//! `agentmsg sessions`: the sessions of a store; and a session of a store read
//! where a command takes a transcript file (`sqlite:PATH#SESSION`,
//! `postgres://…#SESSION`, `DIR#SESSION`).

use std::io::Write;
use std::path::{Path, PathBuf};

use agentmsg_runtime::store::{
    AnyStore, Backend, Cursor, EntryProblem, PageRequest, SessionInfo, SessionStore,
    SkippedSession, StoreAddress, StoreError,
};
use agentmsg_runtime::time::format_iso8601_seconds;

use crate::error::CliError;
use crate::load::Diagnostic;
use crate::output::escape_controls;
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
    let address = StoreAddress::resolve(&address).map_err(store_error)?;
    if let Backend::JsonlDir(dir) = &address.backend {
        if !dir.exists() {
            return Err(CliError::Usage(format!(
                "no session store at {} (pass --store ADDR or set AGENTMSG_STORE)",
                crate::output::shown(dir)
            )));
        }
    }
    let mut skipped: Vec<SkippedSession> = Vec::new();
    let sessions = block_on(async {
        let store = AnyStore::open_existing(&address.backend).await?;
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
            skipped.extend(page.skipped);
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
    for s in &skipped {
        crate::output::note!(
            "agentmsg: warning: skipped `{}`: {}",
            s.id,
            escape_controls(&s.reason)
        );
    }
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
        // A leaf and a name come from the session's lines: what a terminal
        // acts on is escaped, so they cannot clear the screen or forge a row.
        let leaf = escape_controls(s.leaf.as_deref().unwrap_or("-"));
        let leaf = if leaf.chars().count() > 20 {
            format!("{}…", leaf.chars().take(19).collect::<String>())
        } else {
            leaf.into_owned()
        };
        writeln!(
            out,
            "{:<width$}  {:>7}  {:<24}  {:<20}  {}",
            s.id,
            s.entries,
            format_iso8601_seconds(s.updated_ms),
            leaf,
            escape_controls(s.name.as_deref().unwrap_or(""))
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
        || (std::fs::symlink_metadata(path).is_err()
            && text
                .rsplit_once('#')
                .is_some_and(|(dir, _)| Path::new(dir).is_dir()))
}

/// The lines of the session `path` names when it is a store address with a
/// session (`sqlite:PATH#SESSION`, `postgres://…#SESSION`, `DIR#SESSION`), as
/// transcript bytes, with what the store found wrong with its rows; `None`
/// for a plain file path.
///
/// Every stored line keeps its place: a line that is not UTF-8 is written as
/// its bytes where it was, so `check` reports it at its own line number (and
/// the lines after it keep theirs).
pub fn read_session(path: &Path) -> Result<Option<StoreRead>, CliError> {
    if !is_store_address(path) {
        return Ok(None);
    }
    let text = path.to_string_lossy();
    let address = StoreAddress::resolve(&text).map_err(store_error)?;
    let Some(session) = address.session.clone() else {
        return Err(CliError::Usage(format!(
            "{}: a store address needs #SESSION to name a session",
            crate::output::shown(path)
        )));
    };
    let loaded = block_on(async {
        let store = AnyStore::open_existing(&address.backend).await?;
        store.load(&session, Cursor::START).await
    })?
    .map_err(store_error)?;
    for torn in &loaded.torn {
        crate::output::note!(
            "agentmsg: {}: a line torn by a crash ({} bytes) is kept aside in {}",
            crate::output::shown(path),
            torn.raw.len(),
            crate::output::shown(&torn.kept_in)
        );
    }
    // The lines in store order: the entries, and the bytes of the lines that
    // are no text in their places.
    let mut not_text: Vec<(u64, &[u8])> = Vec::new();
    let mut diagnostics = Vec::new();
    for problem in &loaded.problems {
        let line = usize::try_from(problem.position + 1).unwrap_or(usize::MAX);
        match &problem.problem {
            EntryProblem::NotUtf8(bytes) => not_text.push((problem.position, bytes)),
            EntryProblem::ColumnDisagrees { .. } => diagnostics.push(Diagnostic::error(
                line,
                "store-row",
                format!(
                    "the store's row disagrees with its line: {}",
                    problem.problem
                ),
            )),
            // What a line's own keys say, `check` finds again in the line.
            _ => {}
        }
    }
    not_text.sort_by_key(|(position, _)| *position);
    let mut bytes = Vec::with_capacity(loaded.entries.iter().map(|e| e.line().len() + 1).sum());
    let mut not_text = not_text.into_iter().peekable();
    let mut position = loaded.first;
    let mut entries = loaded.entries.iter();
    loop {
        if let Some((_, raw)) = not_text.next_if(|(at, _)| *at <= position) {
            bytes.extend_from_slice(raw);
        } else if let Some(entry) = entries.next() {
            bytes.extend_from_slice(entry.line().as_bytes());
        } else if let Some((_, raw)) = not_text.next() {
            bytes.extend_from_slice(raw);
        } else {
            break;
        }
        bytes.push(b'\n');
        position += 1;
    }
    Ok(Some((bytes, diagnostics)))
}

/// A store session's lines as transcript bytes, with what the store found
/// wrong with its rows.
pub type StoreRead = (Vec<u8>, Vec<Diagnostic>);

fn store_error(e: StoreError) -> CliError {
    match e {
        StoreError::Io { path, source } => CliError::Read { path, source },
        other => CliError::Usage(escape_controls(&other.to_string()).into_owned()),
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
