//! `agentmsg repair`: a copy of a transcript with its tool calls and results
//! paired, changing nothing else.
//!
//! What is paired, dropped and added is the runtime's
//! ([`RepairPlan`](agentmsg_runtime::transcript::RepairPlan), documented
//! there): a call with no result gets a synthetic error result, a result of no
//! call and a second result are dropped, a session tree's pairing is left to
//! each branch, and a line kept undecoded counts as far as its JSON can be
//! read. The command adds what only a file has:
//!
//! - a line that holds several entries because a write lost its newline (whole
//!   objects back to back, or a fragment a crash cut off and then a whole line)
//!   is split into one line each, every byte kept;
//! - what a crash cut off (that fragment, a torn last line, and a line that
//!   stops inside a JSON value or a character, which an appender ended with a
//!   newline) goes in an `extension` line of kind `agentmsg.fragment`, its text
//!   whole in `data` (a JSON string; `{"base64": …}`, its exact bytes, when it
//!   is not UTF-8), which `check` accepts and no model is sent, so the copy
//!   checks clean and the next append starts on a line of its own;
//! - every line it keeps is written byte for byte, custom, unknown and even
//!   undecodable lines included, with the blank lines between them and a
//!   byte-order mark; only the synthetic results are new text.
//!
//! The copy is written to a new temporary file beside the output (created
//! exclusively, with the output's mode, or the input's for a new file), synced,
//! and renamed over the output, so a crash leaves either the old file or the new
//! one. Repairing a file in place (`-o` naming the input) holds the file's
//! advisory lock from the read to the rename, the lock that
//! [`JsonlWriter::append`](agentmsg_runtime::JsonlWriter::append) takes for each
//! write: an append waits, then goes to the new file, so none is lost.
//!
//! A JSON Lines file is read twice, one line at a time (the runtime's
//! [`RepairPlanner`] decides what to drop and add, then `Copy` writes the
//! copy), so memory holds a line and
//! the plan, never the file; standard input, a JSON array and one
//! pretty-printed message are read whole and go through the same plan.

use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use agentmsg_runtime::AgentMessage;

use crate::error::CliError;
use crate::input::read_input;
use crate::load::{load_bytes, stream_reader, Body, Format, Line, LineReader, Loaded, Sniff};
use crate::Outcome;

use agentmsg_runtime::transcript::{RepairPlan as Plan, RepairPlanner, SyntheticResult};

/// The arguments of `agentmsg repair`.
#[derive(Debug, clap::Args)]
pub struct RepairArgs {
    /// A transcript file (JSON Lines, or one JSON array; the copy is JSON Lines;
    /// `-` reads standard input).
    pub file: PathBuf,
    /// Where to write the repaired copy (may be FILE itself: it is replaced
    /// atomically, under the file's lock).
    #[arg(short, long, required_unless_present = "dry_run")]
    pub output: Option<PathBuf>,
    /// Print what would change, write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// One change repair makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// The line it concerns.
    pub line: usize,
    /// What was done.
    pub what: String,
}

/// The repaired text and what changed.
#[derive(Debug)]
pub struct Repaired {
    /// The new transcript, JSON Lines.
    pub text: Vec<u8>,
    /// What changed, in line order.
    pub fixes: Vec<Fix>,
    /// Whether the transcript is a session tree, whose pairing was left alone.
    pub tree: bool,
}

/// Repairs a loaded transcript (see the module documentation).
pub fn repair(loaded: &Loaded) -> Result<Repaired, CliError> {
    let mut planner = RepairPlanner::new();
    for (position, line) in loaded.lines.iter().enumerate() {
        planner.add(position, line.number, &line.raw, line.message());
    }
    let plan = planner.finish();
    let mut text = Vec::with_capacity(
        loaded
            .lines
            .iter()
            .map(|l| l.gap.len() + l.raw.len() + 1)
            .sum::<usize>()
            + loaded.trailing.len()
            + 3,
    );
    let mut copy = Copy::new(&plan, &mut text, loaded.bom)?;
    for (position, line) in loaded.lines.iter().enumerate() {
        copy.line(position, line)?;
    }
    let fixes = copy.end(&loaded.trailing)?;
    Ok(Repaired {
        text,
        fixes,
        tree: plan.tree,
    })
}

/// Writes the repaired copy line by line, as a [`Plan`] says.
struct Copy<'p, W> {
    plan: &'p Plan,
    out: W,
    fixes: Vec<Fix>,
}

impl<'p, W: Write> Copy<'p, W> {
    /// Starts the copy (with the byte-order mark the input had).
    fn new(plan: &'p Plan, mut out: W, bom: bool) -> Result<Self, CliError> {
        if bom {
            out.write_all(agentmsg_runtime::lines::BOM)?;
        }
        Ok(Self {
            plan,
            out,
            fixes: Vec::new(),
        })
    }

    /// Copies the line at `position` (or drops it), then what the plan adds
    /// after it.
    fn line(&mut self, position: usize, line: &Line) -> Result<(), CliError> {
        self.out.write_all(&line.gap)?;
        if let Some((0, count)) = line.part {
            self.fixes.push(Fix {
                line: line.number,
                what: format!(
                    "split the line into the {count} entries it holds (a write lost its newline), each kept byte for byte"
                ),
            });
        }
        if let Some(what) = self.plan.drop.get(&position) {
            self.fixes.push(Fix {
                line: line.number,
                what: what.clone(),
            });
        } else {
            if is_fragment(line) {
                let kept = fragment_line(&line.raw)?;
                let what = if matches!(line.body, Body::Torn) {
                    "the torn last line"
                } else {
                    "the fragment"
                };
                let how = if std::str::from_utf8(&line.raw).is_ok() {
                    "its text whole in `data`"
                } else {
                    "its exact bytes in `data.base64` (not UTF-8)"
                };
                self.fixes.push(Fix {
                    line: line.number,
                    what: format!(
                        "kept {what} a crash cut off ({} bytes) as an `extension` line of kind `{FRAGMENT_KIND}`, {how}",
                        line.raw.len()
                    ),
                });
                self.out.write_all(kept.as_bytes())?;
            } else {
                self.out.write_all(&line.raw)?;
            }
            self.out.write_all(b"\n")?;
        }
        for SyntheticResult { message, what, .. } in
            self.plan.inserts.get(&position).into_iter().flatten()
        {
            let mut text = Vec::new();
            AgentMessage::Llm(message.clone()).write_line(&mut text)?;
            text.push(b'\n');
            self.out.write_all(&text)?;
            self.fixes.push(Fix {
                line: line.number,
                what: what.clone(),
            });
        }
        Ok(())
    }

    /// Ends the copy with the blank lines after the last line; what changed.
    fn end(mut self, trailing: &[u8]) -> Result<Vec<Fix>, CliError> {
        self.out.write_all(trailing)?;
        self.out.flush()?;
        Ok(self.fixes)
    }
}

/// The kind of the `extension` line that keeps a fragment a crash cut off.
const FRAGMENT_KIND: &str = "agentmsg.fragment";

/// Whether `line` is what a crash cut off: the fragment before a whole line
/// that lost its newline (the first part of a split line, and no JSON), a
/// torn last line, or a line that stops inside a JSON value or a character
/// (a torn write that an appender then ended with a newline).
fn is_fragment(line: &Line) -> bool {
    match line.body {
        Body::Torn => true,
        Body::Undecodable => {
            (matches!(line.part, Some((0, _)))
                && serde_json::from_slice::<serde::de::IgnoredAny>(&line.raw).is_err())
                || agentmsg_runtime::transcript::is_torn_line(&line.raw)
        }
        Body::Message(_) => false,
    }
}

/// The `extension` line that keeps a fragment (a line `check` accepts, never
/// sent to a model): `{"role":"extension","kind":"agentmsg.fragment",
/// "data":"<the fragment>"}`, or `"data":{"base64":"<its bytes>"}` when it is
/// not UTF-8 (cut inside a character), so that no byte is lost.
fn fragment_line(raw: &[u8]) -> Result<String, CliError> {
    use base64::Engine as _;
    let data = match std::str::from_utf8(raw) {
        Ok(text) => serde_json::Value::from(text),
        Err(_) => serde_json::json!({
            "base64": base64::engine::general_purpose::STANDARD.encode(raw)
        }),
    };
    let message = agentmsg_runtime::custom::ExtensionMessage::new(FRAGMENT_KIND, &data)?;
    // When the fragment was written is unknown, and a repair reads no clock
    // (the same file repairs to the same bytes).
    let mut entry = agentmsg_runtime::custom::AppMessage::new(message);
    entry.timestamp = None;
    Ok(AgentMessage::Custom(entry).to_line()?)
}

/// The file a path names, following symbolic links (so a link stays a link and
/// its target is replaced); the path itself when it does not exist yet.
fn resolve(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// Writes to `path` atomically what `write` writes: a new temporary file in the same
/// directory (created exclusively, never through a link), given the mode and
/// owner of `like`, synced, then renamed over `path`, and the directory synced.
fn write_atomically<T>(
    path: &Path,
    like: Option<&std::fs::Metadata>,
    write: impl FnOnce(&mut dyn Write) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let fail = |source| CliError::Write {
        path: path.to_owned(),
        source,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".agentmsg-repair-")
        .tempfile_in(dir)
        .map_err(fail)?;
    if let Some(like) = like {
        tmp.as_file()
            .set_permissions(like.permissions())
            .map_err(fail)?;
        // The owner too, where this process may set it (root repairing a
        // user's transcript); otherwise the file is the caller's, as any copy.
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(like.uid()), Some(like.gid()));
        }
    }
    let written = {
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        let written = write(&mut out)?;
        out.flush().map_err(fail)?;
        written
    };
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    // The rename is durable once the directory is.
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(written)
}

/// Whether two paths name the same file.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    resolve(a) == resolve(b)
}

/// Runs `agentmsg repair`.
pub fn run(args: &RepairArgs) -> Result<Outcome, CliError> {
    let file_args;
    let args = match store_session_file(args)? {
        Some(mapped) => {
            file_args = mapped;
            &file_args
        }
        None => args,
    };
    let output = args.output.as_deref().filter(|_| !args.dry_run);
    let in_place = output.is_some_and(|o| args.file.as_os_str() != "-" && same_file(&args.file, o));
    if let Some(outcome) = run_streamed(args, output, in_place)? {
        return Ok(outcome);
    }
    // In place: hold the file's lock from the read to the rename, so that no
    // append lands in the file being replaced.
    let (locked, bytes) = if in_place {
        let read_fail = |source| CliError::Read {
            path: args.file.clone(),
            source,
        };
        let mut file = File::open(&args.file).map_err(read_fail)?;
        file.lock().map_err(read_fail)?;
        let mut bytes = Vec::new();
        agentmsg_runtime::lines::read_to_end(&mut file, &mut bytes).map_err(read_fail)?;
        (Some(file), bytes)
    } else {
        (None, read_input(&args.file)?)
    };
    let loaded = load_bytes(&bytes);
    let repaired = repair(&loaded)?;
    if let Some(output) = output {
        write_output(args, output, |out| Ok(out.write_all(&repaired.text)?))?;
    }
    drop(locked);
    let kept_broken = loaded
        .lines
        .iter()
        .filter(|l| matches!(l.body, Body::Undecodable) && !is_fragment(l))
        .count();
    report(
        args,
        output,
        &repaired.fixes,
        kept_broken,
        loaded.format != Format::Jsonl,
        repaired.tree,
    )?;
    Ok(Outcome::Ok)
}

/// Writes the copy to the file `output` names (through a link, to its
/// target), atomically, with the mode and owner of the file it replaces or,
/// for a new file, the input's.
fn write_output<T>(
    args: &RepairArgs,
    output: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let target = resolve(output);
    let like = std::fs::metadata(&target)
        .or_else(|_| std::fs::metadata(&args.file))
        .ok();
    write_atomically(&target, like.as_ref(), write)
}

/// The arguments with a `DIR#SESSION` address (as input or output) replaced
/// by the session's file in that directory, which repair rewrites under its
/// lock like any transcript; `None` when neither is a store address. A
/// session in an SQLite or PostgreSQL store is no file: that is an error
/// saying so.
fn store_session_file(args: &RepairArgs) -> Result<Option<RepairArgs>, CliError> {
    use agentmsg_runtime::store::{Backend, JsonlDir, StoreAddress};
    let map = |path: &Path| -> Result<Option<PathBuf>, CliError> {
        if !crate::input::is_store_address(path) {
            return Ok(None);
        }
        let shown = crate::output::shown(path);
        let address = StoreAddress::resolve(&path.to_string_lossy()).map_err(|e| {
            CliError::Usage(crate::output::escape_controls(&e.to_string()).into_owned())
        })?;
        let Some(session) = &address.session else {
            return Err(CliError::Usage(format!(
                "{shown}: a store address needs #SESSION to name a session"
            )));
        };
        match &address.backend {
            Backend::JsonlDir(dir) => {
                let store = JsonlDir::open_existing(dir)
                    .map_err(|e| CliError::Usage(format!("{shown}: {e}")))?;
                let file = store
                    .session_path(session)
                    .map_err(|e| CliError::Usage(format!("{shown}: {e}")))?;
                match std::fs::symlink_metadata(&file) {
                    Ok(m) if m.is_file() => Ok(Some(file)),
                    Ok(_) => Err(CliError::Usage(format!(
                        "{shown}: {} is not a regular file (a store never follows links)",
                        crate::output::shown(&file)
                    ))),
                    Err(_) => Err(CliError::Usage(format!(
                        "{shown}: the store has no session `{session}`"
                    ))),
                }
            }
            _ => Err(CliError::Usage(format!(
                "{shown}: repair rewrites transcript files, and a session in an SQLite or PostgreSQL store is rows, whose lines the store keeps whole (`agentmsg check` reports their problems)"
            ))),
        }
    };
    let file = map(&args.file)?;
    let output = match &args.output {
        Some(output) => map(output)?,
        None => None,
    };
    if file.is_none() && output.is_none() {
        return Ok(None);
    }
    Ok(Some(RepairArgs {
        file: file.unwrap_or_else(|| args.file.clone()),
        output: output.or_else(|| args.output.clone()),
        dry_run: args.dry_run,
    }))
}

/// Prints what repair changed, what it kept as it was, and where the copy went.
fn report(
    args: &RepairArgs,
    output: Option<&Path>,
    fixes: &[Fix],
    kept_broken: usize,
    not_jsonl: bool,
    tree: bool,
) -> Result<(), CliError> {
    let file = crate::output::shown(&args.file);
    let mut out = crate::output::stdout();
    for fix in fixes {
        writeln!(out, "{file}:{}: {}", fix.line, fix.what)?;
    }
    if kept_broken > 0 {
        writeln!(
            out,
            "{file}: note: {kept_broken} undecodable lines kept byte for byte (repair does not guess)"
        )?;
    }
    if tree {
        writeln!(
            out,
            "{file}: note: a session tree (lines name their parentId): its calls and results pair branch by branch and are left as they are; `agentmsg check` reports them per branch"
        )?;
    }
    if not_jsonl {
        writeln!(
            out,
            "{file}: note: JSON, not JSON Lines; the copy is JSON Lines, one message per line"
        )?;
    }
    match output {
        Some(output) => writeln!(
            out,
            "{file}: {} changes, written to {}",
            fixes.len(),
            crate::output::shown(output)
        )?,
        None => writeln!(
            out,
            "{file}: {} changes (dry run, nothing written)",
            fixes.len()
        )?,
    }
    Ok(())
}

/// `run` for a JSON Lines file, read twice one line at a time (the first pass
/// plans, the second writes the copy), so memory holds a line and the plan,
/// never the file. `None` for what is read whole: standard input, anything
/// that is not a regular file, a JSON array and one pretty-printed message.
fn run_streamed(
    args: &RepairArgs,
    output: Option<&Path>,
    in_place: bool,
) -> Result<Option<Outcome>, CliError> {
    if args.file.as_os_str() == "-" || !args.file.is_file() {
        return Ok(None);
    }
    let read_fail = |source| CliError::Read {
        path: args.file.clone(),
        source,
    };
    let file = File::open(&args.file).map_err(read_fail)?;
    // In place: hold the file's lock from the first read to the rename, so
    // that no append lands in the file being replaced.
    if in_place {
        file.lock().map_err(read_fail)?;
    }
    fn lines(mut file: &File) -> std::io::Result<Option<LineReader<BufReader<&File>>>> {
        file.seek(SeekFrom::Start(0))?;
        stream_reader(BufReader::with_capacity(1 << 20, file))
    }
    let Some(mut reader) = lines(&file).map_err(read_fail)? else {
        return Ok(None);
    };
    let mut planner = RepairPlanner::new();
    let mut sniff = Sniff::default();
    let mut read = Vec::new();
    let mut position = 0;
    while let Some(line) = reader.next_line(&mut read).map_err(read_fail)? {
        read.clear();
        sniff.add(&line);
        planner.add(position, line.number, &line.raw, line.message());
        position += 1;
    }
    if sniff.may_be_one_pretty_object() {
        return Ok(None);
    }
    let bom = reader.bom();
    let plan = planner.finish();
    let Some(mut reader) = lines(&file).map_err(read_fail)? else {
        return Ok(None);
    };
    let mut kept_broken = 0;
    let mut copy_to = |out: &mut dyn Write| -> Result<Vec<Fix>, CliError> {
        let mut copy = Copy::new(&plan, out, bom)?;
        let mut position = 0;
        while let Some(line) = reader.next_line(&mut read).map_err(read_fail)? {
            read.clear();
            if matches!(line.body, Body::Undecodable) && !is_fragment(&line) {
                kept_broken += 1;
            }
            copy.line(position, &line)?;
            position += 1;
        }
        copy.end(reader.trailing())
    };
    let fixes = match output {
        Some(output) => write_output(args, output, &mut copy_to)?,
        None => copy_to(&mut std::io::sink())?,
    };
    drop(file);
    let tree = plan.tree;
    report(args, output, &fixes, kept_broken, false, tree)?;
    Ok(Some(Outcome::Ok))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::check::structural_diagnostics;
    use crate::load::load_bytes;

    /// One line of a random transcript. Call ids are unique (`c0`, `c1`… in
    /// order): a reused id makes pairing ambiguous, which `check` reports as
    /// `duplicate-call-id` and repair leaves alone.
    #[derive(Debug, Clone)]
    enum Op {
        User,
        Assistant(usize, &'static str),
        Result(usize),
        Notice,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            Just(Op::User),
            (
                0..4usize,
                proptest::sample::select(&["toolUse", "stop", "error", "aborted"][..]),
            )
                .prop_map(|(calls, stop)| Op::Assistant(calls, stop)),
            (0..8usize).prop_map(Op::Result),
            (0..8usize).prop_map(Op::Result),
            Just(Op::Notice),
        ]
    }

    fn render(ops: &[Op]) -> String {
        let mut out = String::new();
        let mut next_call = 0;
        for (i, op) in ops.iter().enumerate() {
            let line = match op {
                Op::User => format!(r#"{{"role":"user","content":"u{i}","timestamp":{i}}}"#),
                Op::Assistant(calls, stop) => {
                    let blocks: Vec<String> = (0..*calls)
                        .map(|_| {
                            next_call += 1;
                            format!(
                                r#"{{"type":"toolCall","id":"c{}","name":"t","arguments":{{}}}}"#,
                                next_call - 1
                            )
                        })
                        .chain(std::iter::once(r#"{"type":"text","text":"x"}"#.to_owned()))
                        .collect();
                    format!(
                        r#"{{"role":"assistant","content":[{}],"stopReason":"{stop}","timestamp":{i},"id":"m{i}"}}"#,
                        blocks.join(",")
                    )
                }
                Op::Result(k) => format!(
                    r#"{{"role":"toolResult","toolCallId":"c{k}","toolName":"t","content":"r{i}","timestamp":{i}}}"#
                ),
                Op::Notice => format!(r#"{{"role":"notice","n": {i}}}"#),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// Whether a repaired copy ends where a line may be appended: on a
    /// newline, or on blank space the input ended with (kept byte for byte).
    fn ends_whole(text: &[u8]) -> bool {
        let tail = text.rsplit(|b| *b == b'\n').next().unwrap_or_default();
        tail.iter().all(u8::is_ascii_whitespace)
    }

    /// Blank space with no newline after it is kept as it was, not called
    /// torn, and a line appended after it still reads (found by proptest).
    #[test]
    fn trailing_blank_space_without_newline_is_kept() {
        for text in ["\t", "{\"role\":\"user\",\"content\":\"hi\"}\n \t"] {
            let repaired = repair(&load_bytes(text.as_bytes())).unwrap();
            assert_eq!(repaired.text, text.as_bytes());
            assert!(repaired.fixes.is_empty(), "{:?}", repaired.fixes);
            assert!(ends_whole(&repaired.text));
            let mut appended = repaired.text.clone();
            appended.extend_from_slice(b"{\"role\":\"user\",\"content\":\"more\"}\n");
            let read = agentmsg_runtime::transcript::read_transcript(&appended[..]).unwrap();
            assert_eq!(read.messages.len(), text.matches("role").count() + 1);
        }
    }

    #[test]
    fn two_calls_sharing_an_id_in_one_turn_get_two_results() {
        let text = concat!(
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"t","arguments":{}},{"type":"toolCall","id":"a","name":"u","arguments":{}}],"stopReason":"toolUse","id":"m0"}"#,
            "\n"
        );
        let repaired = repair(&load_bytes(text.as_bytes())).unwrap();
        let out = String::from_utf8(repaired.text).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[1].contains(r#""toolName":"t""#) && lines[1].ends_with(r#""id":"m0/a"}"#));
        assert!(lines[2].contains(r#""toolName":"u""#) && lines[2].ends_with(r#""id":"m0/a#2"}"#));
        let after = structural_diagnostics(&load_bytes(out.as_bytes()));
        assert!(
            after.iter().all(|d| !PAIRING.contains(&d.code)),
            "{after:?}"
        );
    }

    const PAIRING: [&str; 3] = ["missing-result", "result-without-call", "duplicate-result"];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// After repair no call lacks a result and no result lacks its call or
        /// repeats one; repairing again changes nothing; every line kept is the
        /// input's, in order.
        #[test]
        fn repair_pairs_every_call(ops in proptest::collection::vec(op(), 0..24)) {
            let text = render(&ops);
            let loaded = load_bytes(text.as_bytes());
            let repaired = repair(&loaded).unwrap();
            let again = load_bytes(&repaired.text);
            let left: Vec<String> = structural_diagnostics(&again)
                .into_iter()
                .filter(|d| PAIRING.contains(&d.code))
                .map(|d| d.render(&"repaired"))
                .collect();
            prop_assert!(left.is_empty(), "{text}\n=>\n{}\n{left:?}", String::from_utf8_lossy(&repaired.text));
            let twice = repair(&again).unwrap();
            prop_assert!(twice.fixes.is_empty(), "{:?}", twice.fixes);
            prop_assert_eq!(&twice.text, &repaired.text);
            let input: Vec<&str> = text.lines().collect();
            let mut next = 0;
            for line in std::str::from_utf8(&repaired.text).unwrap().lines() {
                if let Some(found) = input[next..].iter().position(|l| *l == line) {
                    next += found + 1;
                } else {
                    prop_assert!(line.contains("No result provided"), "{line}");
                }
            }
        }

        /// Lines of a real-looking transcript, damaged (a byte flipped, a line
        /// cut, bytes spliced in, a newline lost): every line repair does not
        /// report dropping is in the copy, byte for byte and in order (a
        /// crash's fragment whole in its extension line), and the copy reads
        /// back without error or torn line.
        #[test]
        fn repair_keeps_every_line_it_does_not_drop(
            ops in proptest::collection::vec(op(), 1..16),
            damage in proptest::collection::vec((0usize..16, 0usize..400, 0u8..4, any::<u8>()), 0..6),
        ) {
            let text = render(&ops);
            let mut lines: Vec<Vec<u8>> = text.lines().map(|l| l.as_bytes().to_vec()).collect();
            let mut lost_newline = vec![false; lines.len()];
            for (which, at, how, byte) in damage {
                let Some(line) = lines.get_mut(which % ops.len()) else { continue };
                let at = at % (line.len() + 1);
                match how {
                    0 if at < line.len() => line[at] = if byte == b'\n' { b' ' } else { byte },
                    1 => line.truncate(at),
                    2 => line.splice(at..at, [0xFF, b'{', b'"']).for_each(drop),
                    _ => lost_newline[which % ops.len()] = true,
                }
            }
            let mut bytes = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                bytes.extend_from_slice(line);
                if !lost_newline[i] || i + 1 == lines.len() {
                    bytes.push(b'\n');
                }
            }
            let loaded = load_bytes(&bytes);
            let repaired = repair(&loaded).unwrap();
            let dropped: Vec<usize> = repaired
                .fixes
                .iter()
                .filter(|f| f.what.starts_with("dropped"))
                .map(|f| f.line)
                .collect();
            let out = repaired.text.split(|b| *b == b'\n').collect::<Vec<_>>();
            let mut next = 0;
            for line in &loaded.lines {
                if dropped.contains(&line.number) {
                    continue;
                }
                // A crash's fragment is kept whole in an extension line.
                let kept = if is_fragment(line) {
                    fragment_line(&line.raw).unwrap().into_bytes()
                } else {
                    line.raw.clone()
                };
                let found = out[next..].iter().position(|l| *l == kept.as_slice());
                prop_assert!(found.is_some(), "line {} lost: {:?}", line.number, String::from_utf8_lossy(&line.raw));
                next += found.unwrap_or(0) + 1;
            }
            let good_in = loaded.lines.iter().filter(|l| matches!(&l.body, Body::Message(m) if !m.is_unknown())).count();
            let again = load_bytes(&repaired.text);
            let good_out = again.lines.iter().filter(|l| matches!(&l.body, Body::Message(m) if !m.is_unknown())).count();
            prop_assert!(good_out + dropped.len() >= good_in, "{good_out} + {} < {good_in}", dropped.len());
            let read = agentmsg_runtime::transcript::read_transcript(&repaired.text[..]);
            prop_assert!(read.as_ref().is_ok_and(|r| r.torn.is_none()), "{:?}", read.err());
        }

        /// Nothing panics, whatever the bytes.
        #[test]
        fn any_bytes_are_survived(lines in proptest::collection::vec(
            prop_oneof![
                ".*",
                Just(r#"{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"t","arguments":{}}],"stopReason":"toolUse"}"#.to_owned()),
                Just(r#"{"role":"toolResult","toolCallId":"a","toolName":"t","content":"x"}"#.to_owned()),
                Just(r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":1}"#.to_owned()),
                Just(r#"{"type":"message","message":{"role":"user","content":"hi"}}"#.to_owned()),
                r#"\{"role":"[a-z]{0,6}".{0,20}"#,
                r#"\[.{0,30}"#,
            ],
            0..12,
        ), newline_at_end in any::<bool>()) {
            let mut text = lines.join("\n");
            if newline_at_end {
                text.push('\n');
            }
            let loaded = load_bytes(text.as_bytes());
            let _ = crate::check::all_diagnostics(&loaded);
            let _ = crate::stats::compute(&loaded);
            let repaired = repair(&loaded).unwrap();
            prop_assert!(ends_whole(&repaired.text), "{:?}", String::from_utf8_lossy(&repaired.text));
            let _ = agentmsg_runtime::import::import(text.as_bytes());
            let _ = crate::project::project_lines(loaded.messages());
        }
    }
}
