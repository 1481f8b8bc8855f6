//! The `agentmsg` command as a library: [`run`] is the whole command, so an
//! application builds its own `agentmsg` with its custom kinds linked in.
//!
//! Custom kinds are registered at link time (`#[derive(AgentMessage)]`), so the
//! shipped `agentmsg` calls every line of an application's own kinds
//! `unknown-kind`, and `context` leaves them out. A binary of the application's
//! that links its kinds and calls [`run`] knows them, in three lines:
//!
//! ```no_run
//! // src/bin/agentmsg.rs of the application (`my_app` holds its kinds).
//! use my_app as _;
//! fn main() -> std::process::ExitCode { agentmsg_cli::run() }
//! # mod my_app {}
//! ```
//!
//! Exit codes: 0 when all went well, 1 when problems were found (`check` found
//! errors, `project` could not encode, `import` met lines it could not read),
//! 2 on a usage or I/O error.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod diag;
mod error;
mod input;
mod load;
mod output;

use cmd::{
    check, compact, context, decode, export, import, project, repair, sessions, stats, tree, usage,
};

const EXIT_CODES: &str = "\
Exit codes:
  0  all went well
  1  problems were found (check: errors in a transcript; project: the body could not
     be encoded; import: lines that are not pi entries; decode: the response could
     not be decoded)
  2  usage error, or a file could not be read or written";

/// Check, inspect, repair, convert and project agentmsg transcripts.
///
/// A transcript is JSON Lines (one message object per line, tagged by "role"), or
/// one JSON array of the same objects.
#[derive(Debug, Parser)]
#[command(name = "agentmsg", version, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Report every problem of transcripts, with its line number.
    ///
    /// Errors: lines that are not JSON objects with a "role", known kinds whose
    /// body does not decode, a torn last line (a crash mid-write), and what a
    /// provider would refuse: tool calls without a result, results without a
    /// call, second results, misplaced results, duplicate or empty tool-call ids,
    /// empty signatures, empty messages. Warnings: kinds this build does not know
    /// (kept as they are), newer versions of a kind, failed turns (error/aborted)
    /// and the results of their calls, and keys of a decoded line that its type
    /// does not have (kept in the file, but dropped by a program that decodes the
    /// message and writes it back). Exits 1 when a file has errors.
    #[command(after_help = EXIT_CODES)]
    Check(check::CheckArgs),
    /// Count messages by kind, tool calls, tokens, cost and cache hits, by model.
    #[command(after_help = EXIT_CODES)]
    Stats(stats::StatsArgs),
    /// Sum the tokens and cost of every agent's logs by day, week, month or
    /// session (Claude Code, Codex, pi, agentmsg transcripts), as ccusage
    /// does, with tool calls, tool errors and cache hits beside.
    ///
    /// With --json it writes ccusage's JSON field names for the same view;
    /// totalCost is null when a reply has no known price.
    #[command(after_help = EXIT_CODES)]
    Usage(usage::UsageArgs),
    /// Print the request body a provider would get for a transcript.
    ///
    /// The transcript is projected (custom messages as they declare, unknown
    /// lines never), prepared for the target (reasoning replayed only to the
    /// model that wrote it, failed turns skipped, calls and results paired,
    /// tool-call ids mapped) and encoded. The body goes to standard output, every
    /// change made on the way to standard error, by transcript line.
    #[command(after_help = EXIT_CODES)]
    Project(project::ProjectArgs),
    /// Write a copy of a transcript with its tool calls and results paired.
    ///
    /// Adds a synthetic error result ("No result provided") for each call that
    /// has none, after the results its turn has; drops results that answer no
    /// call and second results; keeps what a crash cut off (a torn last line,
    /// a fragment) in an `agentmsg.fragment` extension line. Changes nothing else: thinking and signatures, tool-call ids, failed
    /// turns, misplaced results and images stay as they are, since what a model
    /// may see of them depends on the target and is decided at projection time.
    /// Every line kept is written byte for byte (custom, unknown and undecodable
    /// lines included, with blank lines and a byte-order mark), and a line that
    /// does not decode still counts for the calls and results its JSON names.
    /// The copy replaces the output atomically, keeping its mode; in place, under
    /// the file's lock, so no concurrent append is lost. Prints each change.
    #[command(after_help = EXIT_CODES)]
    Repair(repair::RepairArgs),
    /// Convert a pi session file, a Claude Code log or a Codex rollout into a
    /// transcript (a file, or a store's new session with `-o ADDR#SESSION`),
    /// keeping its tree (`parentId`).
    ///
    /// pi: messages are kept as they are (with the entry's id), compaction entries
    /// become compactionSummary lines, branch summaries branchSummary lines, and
    /// every other entry an "extension" line of kind "pi.TYPE" holding the
    /// entry, so nothing is lost. Claude Code: uuid/parentUuid as the tree, one
    /// message per response, tool_use/tool_result as toolCall/toolResult.
    /// Codex: response items as messages, function calls and outputs as
    /// toolCall/toolResult, reasoning kept for replay. Anything else exits 1.
    #[command(after_help = EXIT_CODES)]
    Import(import::ImportArgs),
    /// Print, as JSON Lines, the messages the model sees of a session at a leaf.
    ///
    /// The session is a transcript (with `parentId`), a pi session file, a
    /// Claude Code log or a Codex rollout, or a store's session
    /// (`sqlite:PATH#SESSION`, `postgres://USER@HOST/DB#SESSION`, `DIR#SESSION`). The context follows the session's
    /// rules (the last compaction's summary, what it kept, what follows;
    /// branch summaries in place) and is projected as the model sees it
    /// (summaries as user text, pi's bash runs and custom messages as pi sends
    /// them), before any target's preparation.
    #[command(after_help = EXIT_CODES)]
    Context(context::ContextArgs),
    /// Plan a compaction of a session (--plan), or write the session with one
    /// applied from a given summary (--summary TEXT -o OUT).
    ///
    /// The plan keeps about --keep-tokens of the most recent messages and
    /// summarises the rest, by pi 0.73.1's rule (--policy pi: the cut moves
    /// forward to a turn boundary; a split turn's start is summarised by a
    /// second request) or agentmsg's (--policy agentmsg: the cut moves back
    /// to whole tool calls). --plan --json prints it as one object
    /// (firstKeptEntryId, splitTurn, tokensBefore, summarise, turnPrefix,
    /// prompt, turnPrefixPrompt, readFiles, modifiedFiles), or null. Written,
    /// the compaction carries pi's details (the files read and modified) and
    /// lists them after the summary, as pi does. Exits 1 when there is
    /// nothing to compact.
    #[command(after_help = EXIT_CODES)]
    Compact(compact::CompactArgs),
    /// Print the tree of a session: branch points, labels, the leaf, and
    /// compactions with what they kept.
    #[command(after_help = EXIT_CODES)]
    Tree(tree::TreeArgs),
    /// Write a session as one self-contained HTML page (--html): the tree
    /// with its branches, what the model saw at a leaf, tokens and cost,
    /// search. Nothing in it fetches anything.
    #[command(after_help = EXIT_CODES)]
    Export(export::ExportArgs),
    /// Decode a provider's response body or recorded stream into one
    /// transcript line.
    ///
    /// With --stream the file is server-sent events, a streamed JSON array or
    /// one event per line; with --events the stream's events are printed as
    /// JSON Lines instead. What was skipped goes to standard error. Exits 1 when
    /// the file cannot be decoded, naming the event.
    #[command(after_help = EXIT_CODES)]
    Decode(decode::DecodeArgs),
    /// Print the JSON Schema (draft 2020-12) of one transcript line.
    #[command(after_help = EXIT_CODES)]
    Schema,
    /// List the sessions of a store (id, entries, last update, leaf, name), or
    /// copy them to another store (`sessions copy FROM TO`).
    ///
    /// Commands that take a transcript file also take a store's session:
    /// `sqlite:PATH#SESSION`, `postgres://USER@HOST/DB#SESSION` or
    /// `DIR#SESSION`; `import -o` writes one.
    #[command(after_help = EXIT_CODES)]
    Sessions(sessions::SessionsArgs),
}

/// How a command ended, when it could run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// All went well.
    Ok,
    /// Problems were found and reported.
    Problems,
    /// An I/O error was met and already reported (check goes on to the next file).
    Failed,
}

fn dispatch(cli: &Cli) -> Result<Outcome, error::CliError> {
    match &cli.command {
        Command::Check(args) => check::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Usage(args) => usage::run(args),
        Command::Project(args) => project::run(args),
        Command::Repair(args) => repair::run(args),
        Command::Import(args) => import::run(args),
        Command::Context(args) => context::run(args),
        Command::Tree(args) => tree::run(args),
        Command::Compact(args) => compact::run(args),
        Command::Export(args) => export::run(args),
        Command::Sessions(args) => sessions::run(args),
        Command::Decode(args) => decode::run(args),
        Command::Schema => {
            let mut out = crate::output::stdout();
            serde_json::to_writer_pretty(
                &mut out,
                &agentmsg_runtime::transcript::transcript_line_schema(),
            )?;
            writeln!(out)?;
            Ok(Outcome::Ok)
        }
    }
}

/// Runs the `agentmsg` command on the process's arguments, and says how it
/// ended as the process's exit code.
pub fn run() -> ExitCode {
    run_from(std::env::args_os())
}

/// Runs the `agentmsg` command on `args` (the first is the program's name),
/// writing to standard output and standard error as the command does.
pub fn run_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // `--help` and `--version` (exit 0) or a usage error (exit 2).
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match dispatch(&cli) {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Problems) => ExitCode::from(1),
        Ok(Outcome::Failed) => ExitCode::from(2),
        // A closed pipe (`agentmsg schema | head`) is not worth a message.
        Err(error::CliError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            crate::output::note!("agentmsg: error: {e}");
            ExitCode::from(2)
        }
    }
}
