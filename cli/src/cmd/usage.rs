//! `agentmsg usage`: what a person's agents used, by day, week, month or
//! session, over their logs ([`agentmsg_runtime::usage_report`] does the
//! work; this reads the arguments and prints).

use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::store::StoreAddress;
use agentmsg_runtime::usage_report::{self, logs, stores, Grouping, Options, Report};

use crate::error::CliError;
use crate::Outcome;

/// The arguments of `agentmsg usage`.
#[derive(Debug, clap::Args)]
pub struct UsageArgs {
    /// Logs, folders searched for logs of any agent agentmsg reads, or
    /// stores (`sqlite:PATH`, `postgres://USER@HOST/DB`, `dir:DIR`; every
    /// session, or the one `#SESSION` names); when none, where the agents
    /// keep them (`CLAUDE_CONFIG_DIR` or `~/.claude/projects`, `CODEX_HOME`
    /// or `~/.codex/sessions`, `~/.pi/agent/sessions`).
    pub paths: Vec<PathBuf>,
    /// A row per day (the default).
    #[arg(long, group = "view")]
    pub daily: bool,
    /// A row per week (from Sunday).
    #[arg(long, group = "view")]
    pub weekly: bool,
    /// A row per month.
    #[arg(long, group = "view")]
    pub monthly: bool,
    /// A row per session (a subagent's log counts in its session).
    #[arg(long, group = "view")]
    pub session: bool,
    /// The first day counted (YYYY-MM-DD).
    #[arg(long)]
    pub since: Option<String>,
    /// The last day counted (YYYY-MM-DD).
    #[arg(long)]
    pub until: Option<String>,
    /// The time zone days are told in (`UTC`, `Europe/Paris`; the system's
    /// by default).
    #[arg(long)]
    pub timezone: Option<String>,
    /// Print ccusage's JSON for the same view instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentmsg usage`.
pub fn run(args: &UsageArgs) -> Result<Outcome, CliError> {
    let grouping = if args.weekly {
        Grouping::Weekly
    } else if args.monthly {
        Grouping::Monthly
    } else if args.session {
        Grouping::Session
    } else {
        Grouping::Daily
    };
    let usage_error = |e: usage_report::ReportError| CliError::Usage(e.to_string());
    let date = |day: &Option<String>| {
        day.as_deref()
            .map(usage_report::parse_date)
            .transpose()
            .map_err(usage_error)
    };
    let mut options = Options::new(grouping);
    options.since = date(&args.since)?;
    options.until = date(&args.until)?;
    if let Some(name) = &args.timezone {
        options.timezone = usage_report::time_zone(name).map_err(usage_error)?;
    }
    let roots = if args.paths.is_empty() {
        logs::default_roots()
    } else {
        args.paths.clone()
    };
    let report_error = |e| match e {
        usage_report::ReportError::Read { path, source } => CliError::Read { path, source },
        // A store's error names the store (its password left out).
        usage_report::ReportError::Store {
            source: source @ agentmsg_runtime::store::StoreError::Io { .. },
            ..
        } => crate::input::store_error(source),
        store @ usage_report::ReportError::Store { .. } => {
            CliError::Usage(crate::output::escape_controls(&store.to_string()).into_owned())
        }
        other => CliError::Usage(other.to_string()),
    };
    let mut files = Vec::new();
    let mut stored = Vec::new();
    for root in &roots {
        if crate::input::is_store_address(root) {
            let address = StoreAddress::resolve(&root.to_string_lossy())
                .map_err(crate::input::store_error)?;
            stored.extend(
                crate::input::block_on(stores::read_store(&address))?.map_err(report_error)?,
            );
            continue;
        }
        files.extend(logs::find_logs(root).map_err(|source| CliError::Read {
            path: root.clone(),
            source,
        })?);
    }
    let report = Report::build_with(&files, stored, &options).map_err(report_error)?;
    let mut out = crate::output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report.to_json())?;
        writeln!(out)?;
    } else {
        out.write_all(report.to_text().as_bytes())?;
    }
    Ok(Outcome::Ok)
}
