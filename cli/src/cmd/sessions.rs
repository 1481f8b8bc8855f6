//! `agentmsg sessions`: the sessions of a store; and a session of a store read
//! where a command takes a transcript file (`sqlite:PATH#SESSION`,
//! `postgres://…#SESSION`, `DIR#SESSION`).

use std::io::Write;

use agentmsg_runtime::store::{
    AnyStore, Backend, PageRequest, SessionInfo, SessionStore, SkippedSession, StoreAddress,
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
