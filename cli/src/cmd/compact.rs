//! `agentmsg compact`: a session's compaction plan, or the session with a
//! compaction applied from a given summary. The policy, the plan and the
//! summary's assembly are the library's
//! ([`CompactionPolicy`](agentmsg_runtime::session::CompactionPolicy)); this
//! reads, prints and writes.

use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::session::CompactionPolicy;

use crate::error::CliError;
use crate::Outcome;

/// The arguments of `agentmsg compact`.
#[derive(Debug, clap::Args)]
pub struct CompactArgs {
    /// A session: a transcript, a pi session file, a Claude Code log or a
    /// Codex rollout (`-` reads standard input), or a store's session.
    pub file: PathBuf,
    /// Print the plan instead of writing: what would be summarised and kept,
    /// and the summariser's prompts.
    #[arg(long, conflicts_with_all = ["summary", "output"])]
    pub plan: bool,
    /// Keep about this many tokens of the most recent messages (pi's
    /// `keepRecentTokens`).
    #[arg(long, default_value_t = 20_000)]
    pub keep_tokens: u64,
    /// How to cut: `pi` (pi 0.73.1's rule, the default) or `agentmsg` (cut
    /// back to whole tool calls, one summary request).
    #[arg(long, default_value = "pi", value_parser = ["pi", "agentmsg"])]
    pub policy: String,
    /// Compact at this entry (the session's leaf when absent).
    #[arg(long)]
    pub leaf: Option<String>,
    /// With --plan: print the plan as one JSON object (`null` when there is
    /// nothing to compact).
    #[arg(long, requires = "plan")]
    pub json: bool,
    /// The summary of the history, used instead of asking a model.
    #[arg(long, requires = "output")]
    pub summary: Option<String>,
    /// The summary of a split turn's start (pi's second request), when the
    /// plan splits a turn.
    #[arg(long, requires = "summary")]
    pub turn_prefix_summary: Option<String>,
    /// Where to write the compacted session (a file; not the input).
    #[arg(short = 'o', long, requires = "summary")]
    pub output: Option<PathBuf>,
}

/// Runs `agentmsg compact`.
pub fn run(args: &CompactArgs) -> Result<Outcome, CliError> {
    let policy = CompactionPolicy::from_name(&args.policy)
        .ok_or_else(|| CliError::Usage(format!("unknown policy {:?}", args.policy)))?;
    if !args.plan && args.output.is_none() {
        return Err(CliError::Usage(
            "give --plan, or --summary TEXT -o OUT to write the compacted session".into(),
        ));
    }
    let file = crate::output::shown(&args.file);
    let same = args
        .output
        .as_ref()
        .and_then(|o| std::fs::canonicalize(o).ok())
        .is_some_and(|o| std::fs::canonicalize(&args.file).is_ok_and(|i| i == o));
    if same {
        return Err(CliError::Usage(format!(
            "{file}: -o names the input; write the compacted session elsewhere"
        )));
    }
    // The plan needs the leaf's path only; writing, the whole session.
    let opened = match args.plan {
        true => match crate::input::open_leaf(&args.file, args.leaf.as_deref())? {
            Some(opened) => opened,
            None => crate::input::open(&args.file)?,
        },
        false => crate::input::open(&args.file)?,
    };
    opened.report(&file);
    let mut session = opened.session;
    let plan = policy
        .plan(&session, args.leaf.as_deref(), args.keep_tokens)
        .map_err(|e| CliError::Session(format!("{file}: {e}")))?;
    if args.plan {
        let mut out = crate::output::stdout();
        match (&plan, args.json) {
            (_, true) => {
                let value = plan.as_ref().map(|p| p.to_json());
                serde_json::to_writer(&mut out, &value)?;
                writeln!(out)?;
            }
            (None, false) => writeln!(out, "nothing to compact")?,
            (Some(plan), false) => {
                writeln!(
                    out,
                    "keep from {} ({} tokens before, policy {})",
                    plan.first_kept,
                    plan.tokens_before,
                    policy.name()
                )?;
                writeln!(out, "summarise {} entries", plan.summarise.len())?;
                if plan.split_turn {
                    writeln!(
                        out,
                        "split turn: its first {} entries summarised on their own",
                        plan.turn_prefix.len()
                    )?;
                }
                writeln!(out, "read files: {}", plan.files.read_files.join(", "))?;
                writeln!(
                    out,
                    "modified files: {}",
                    plan.files.modified_files.join(", ")
                )?;
            }
        }
        out.flush()?;
        return Ok(Outcome::Ok);
    }
    let Some(plan) = plan else {
        crate::output::note!("{file}: nothing to compact; nothing written");
        return Ok(Outcome::Problems);
    };
    let (Some(summary), Some(output)) = (&args.summary, &args.output) else {
        return Err(CliError::Usage("-o OUT needs --summary TEXT".into()));
    };
    // Without a model the given texts are the answers: the history's to the
    // history request; when only a split turn's start is summarised, the
    // summary is that start's unless --turn-prefix-summary gives it.
    // `plan.prompt()` is `None` exactly when nothing is summarised before a
    // split turn; asking it would write out the whole prompt to drop it.
    let (history, prefix) = if plan.summarized > 0 {
        (Some(summary.as_str()), args.turn_prefix_summary.as_deref())
    } else {
        (
            None,
            Some(args.turn_prefix_summary.as_deref().unwrap_or(summary)),
        )
    };
    let text = plan.summary_text(history, prefix);
    if let Some(leaf) = &args.leaf {
        session
            .branch(leaf)
            .map_err(|e| CliError::Session(format!("{file}: {e}")))?;
    }
    let id = session
        .apply_compaction(&plan, text)
        .map_err(|e| CliError::Session(format!("{file}: {e}")))?;
    let mut out =
        crate::output::create_like(output, &args.file).map_err(|source| CliError::Write {
            path: output.clone(),
            source,
        })?;
    out.write_all(&session.to_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| CliError::Write {
            path: output.clone(),
            source,
        })?;
    crate::output::note!(
        "{file}: compacted at {id}, keeping from {} ({} entries summarised{})",
        plan.first_kept,
        plan.summarise.len() + plan.turn_prefix.len(),
        if plan.split_turn {
            ", a turn split"
        } else {
            ""
        }
    );
    Ok(Outcome::Ok)
}
