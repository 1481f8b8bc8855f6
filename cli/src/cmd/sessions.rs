//! `agentmsg sessions`: the sessions of a store; and a session of a store read
//! where a command takes a transcript file (`sqlite:PATH#SESSION`,
//! `postgres://…#SESSION`, `DIR#SESSION`).

use std::io::Write;

use agentmsg_runtime::store::{
    copy_session, AnyStore, Backend, PageRequest, SessionInfo, SessionStore, SkippedSession,
    StoreAddress,
};
use agentmsg_runtime::time::format_iso8601_seconds;

use crate::error::CliError;
use crate::input::{block_on, store_error};
use crate::output::escape_controls;
use crate::Outcome;

/// The store `sessions` lists when neither `--store` nor `AGENTMSG_STORE` names
/// one.
const DEFAULT_STORE: &str = ".agentmsg/sessions";

/// The arguments of `agentmsg sessions`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SessionsArgs {
    /// What to do besides listing.
    #[command(subcommand)]
    pub action: Option<SessionsAction>,
    /// The store: a directory of session files (`DIR` or `dir:DIR`),
    /// `sqlite:PATH` or `postgres://USER@HOST/DB`; `#SESSION` after it shows
    /// that session only. Default: $AGENTMSG_STORE, else .agentmsg/sessions.
    #[arg(value_name = "ADDR", conflicts_with = "store")]
    pub address: Option<String>,
    /// The store, as ADDR (the older spelling).
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

/// What `agentmsg sessions` does besides listing.
#[derive(Debug, clap::Subcommand)]
pub enum SessionsAction {
    /// Copy every session of one store into another (a directory of session
    /// files to PostgreSQL, say), or one session with FROM#SESSION.
    ///
    /// Idempotent and resumable: a session the target lacks is created, one
    /// it holds in part (a copy that stopped) gets only the entries it lacks,
    /// one it holds whole is left as it is. A target session whose entries
    /// are not the start of the source's is refused, and nothing of it
    /// written. At the end each session's entries are counted in both stores;
    /// exits 1 when a count differs or a session could not be copied.
    Copy {
        /// The store to copy from (`DIR`, `sqlite:PATH`, `postgres://…`,
        /// with `#SESSION` for one session).
        #[arg(value_name = "FROM")]
        from: String,
        /// The store to copy into (created when it is a directory or an
        /// SQLite file that does not exist).
        #[arg(value_name = "TO")]
        to: String,
    },
}

/// Runs `agentmsg sessions`.
pub fn run(args: &SessionsArgs) -> Result<Outcome, CliError> {
    if let Some(SessionsAction::Copy { from, to }) = &args.action {
        return copy(from, to);
    }
    let address = match args.address.as_ref().or(args.store.as_ref()) {
        Some(address) => address.clone(),
        None => std::env::var("AGENTMSG_STORE").unwrap_or_else(|_| DEFAULT_STORE.to_owned()),
    };
    let address = StoreAddress::resolve(&address).map_err(store_error)?;
    if let Backend::JsonlDir(dir) = &address.backend {
        if !dir.exists() {
            return Err(CliError::Usage(format!(
                "no session store at {} (pass ADDR or set AGENTMSG_STORE)",
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
        crate::output::note!("agentmsg: warning: skipped `{}`: {}", s.id, s.reason);
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

/// `agentmsg sessions copy FROM TO`.
fn copy(from: &str, to: &str) -> Result<Outcome, CliError> {
    let from = StoreAddress::resolve(from).map_err(store_error)?;
    let to_address = StoreAddress::resolve(to).map_err(store_error)?;
    if to_address.session.is_some() {
        return Err(CliError::Usage(format!(
            "{to}: the target of a copy is a store, without #SESSION"
        )));
    }
    let mut problems = 0usize;
    let copied = block_on(async {
        let source = AnyStore::open_existing(&from.backend).await?;
        let target = AnyStore::open(&to_address.backend).await?;
        let ids = match &from.session {
            Some(session) => vec![session.clone()],
            None => {
                let mut ids = Vec::new();
                let mut request = PageRequest {
                    after: None,
                    limit: 500,
                };
                loop {
                    let page = source.list(&request).await?;
                    for s in &page.skipped {
                        crate::output::note!("agentmsg: warning: skipped `{}`: {}", s.id, s.reason);
                    }
                    ids.extend(page.sessions.into_iter().map(|s| s.id));
                    match page.next {
                        Some(next) => request.after = Some(next),
                        None => break,
                    }
                }
                ids
            }
        };
        let mut done = Vec::with_capacity(ids.len());
        for id in ids {
            done.push((id.clone(), copy_session(&source, &target, &id).await));
        }
        Ok::<_, agentmsg_runtime::store::StoreError>(done)
    })?
    .map_err(store_error)?;
    let mut out = crate::output::stdout();
    let (mut sessions, mut entries) = (0usize, 0u64);
    for (id, result) in copied {
        match result {
            Ok(c) => {
                sessions += 1;
                entries += c.copied;
                if c.not_copied > 0 {
                    crate::output::note!(
                        "agentmsg: warning: session `{id}`: {} rows of the source are no entry (not UTF-8, or torn by a crash) and were not copied",
                        c.not_copied
                    );
                }
                if !c.complete() {
                    problems += 1;
                    crate::output::note!(
                        "agentmsg: error: session `{id}`: the source holds {} entries, the target {}",
                        c.source_entries,
                        c.target_entries
                    );
                }
                writeln!(
                    out,
                    "{id}: {} entries copied, {} there already, {} in both stores",
                    c.copied, c.already, c.target_entries
                )?;
            }
            Err(e) => {
                problems += 1;
                crate::output::note!("agentmsg: error: session `{id}`: {e}");
            }
        }
    }
    crate::output::note!(
        "agentmsg: {sessions} sessions copied ({entries} entries appended), {problems} problems"
    );
    Ok(if problems > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}
