//! `agentmsg import`: a pi session file, a Claude Code log or a Codex rollout
//! as an agentmsg transcript ([`agentmsg_runtime::import`] converts it).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use agentmsg_runtime::import::{self, ImportError, Imported};
use agentmsg_runtime::store::{
    AnyStore, Expect, SessionStore, StoreAddress, StoreError, StoredEntry,
};

use crate::diag::Diagnostic;
use crate::error::CliError;
use crate::input::store_error;
use crate::Outcome;

/// The arguments of `agentmsg import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// A pi session file, a Claude Code log or a Codex rollout (`*.jsonl`;
    /// `-` reads standard input).
    pub file: PathBuf,
    /// Where to write the transcript: a file, or a store's new session
    /// (`sqlite:PATH#SESSION`, `postgres://…#SESSION`, `DIR#SESSION`).
    /// Standard output when absent.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// Runs `agentmsg import`.
pub fn run(args: &ImportArgs) -> Result<Outcome, CliError> {
    let file = crate::output::shown(&args.file);
    let read_error = |source| CliError::Read {
        path: args.file.clone(),
        source,
    };
    let store = args
        .output
        .as_deref()
        .filter(|o| crate::input::is_store_address(o));
    let converted = if let Some(address) = store {
        into_store(args, address)?
    } else if streams(args) {
        run_streamed(args)
    } else {
        let bytes = crate::input::read_input(&args.file)?;
        import::import(&bytes).and_then(|imported| {
            write_whole(args, &imported)?;
            Ok(imported)
        })
    };
    let imported = match converted {
        Ok(imported) => imported,
        Err(ImportError::Unrecognised { line, text }) => {
            crate::output::note!(
                "{file}:{line}: error[unrecognised]: not a pi, Claude Code or Codex log; the first line it could not place: {text}"
            );
            return Ok(Outcome::Problems);
        }
        Err(ImportError::Read(e)) => return Err(read_error(e)),
        Err(ImportError::Write(e)) => {
            return Err(match &args.output {
                Some(path) => CliError::Write {
                    path: path.clone(),
                    source: e,
                },
                None => CliError::Output(e),
            })
        }
        Err(ImportError::Json(e)) => return Err(CliError::Json(e)),
        Err(e) => return Err(CliError::Usage(format!("{file}: {e}"))),
    };
    if imported.lossy {
        crate::output::note!("{file}: warning: not UTF-8; invalid bytes were replaced by U+FFFD");
    }
    Ok(finish(args, &imported))
}

/// Whether the input is converted one line at a time: a regular file
/// (read more than once), not the output itself.
fn streams(args: &ImportArgs) -> bool {
    if !crate::input::is_regular_file(&args.file) {
        return false;
    }
    let same = args.output.as_ref().is_some_and(|output| {
        std::fs::canonicalize(output)
            .ok()
            .is_some_and(|o| std::fs::canonicalize(&args.file).ok() == Some(o))
    });
    !same
}

/// Writes a transcript converted whole.
fn write_whole(args: &ImportArgs, imported: &Imported) -> Result<(), ImportError> {
    match &args.output {
        Some(path) => crate::output::create_like(path, &args.file)
            .and_then(|mut file| file.write_all(&imported.text))
            .map_err(ImportError::Write),
        None => crate::output::stdout()
            .write_all(&imported.text)
            .map_err(ImportError::Write),
    }
}

/// Converts a regular file one line at a time ([`import::import_path`]).
fn run_streamed(args: &ImportArgs) -> Result<Imported, ImportError> {
    let path = &args.file;
    match &args.output {
        Some(output) => {
            let file = crate::output::create_like(output, path).map_err(ImportError::Write)?;
            let mut out = io::BufWriter::with_capacity(1 << 16, file);
            let imported = import::import_path(path, &mut out)?;
            out.flush().map_err(ImportError::Write)?;
            Ok(imported)
        }
        None => {
            let mut out = crate::output::stdout();
            let imported = import::import_path(path, &mut out)?;
            out.flush().map_err(ImportError::Write)?;
            Ok(imported)
        }
    }
}

/// Converts the log into a new session of the store `address` names,
/// appending its lines in batches as they are converted.
fn into_store(
    args: &ImportArgs,
    address: &Path,
) -> Result<Result<Imported, ImportError>, CliError> {
    let shown = crate::output::shown(address);
    let address = StoreAddress::resolve(&address.to_string_lossy()).map_err(store_error)?;
    let Some(session) = address.session.clone() else {
        return Err(CliError::Usage(format!(
            "{shown}: a store address needs #SESSION to name the session to write"
        )));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Output)?;
    let store = runtime
        .block_on(async {
            let store = AnyStore::open(&address.backend).await?;
            store.create(&session).await?;
            Ok::<_, StoreError>(store)
        })
        .map_err(store_error)?;
    let mut sink = StoreSink {
        runtime,
        store,
        session,
        leaf: None,
        batch: Vec::new(),
        partial: Vec::new(),
    };
    let converted = if crate::input::is_regular_file(&args.file) {
        import::import_path(&args.file, &mut sink)
    } else {
        let bytes = crate::input::read_input(&args.file)?;
        import::import(&bytes).and_then(|imported| {
            sink.write_all(&imported.text).map_err(ImportError::Write)?;
            Ok(imported)
        })
    };
    Ok(converted.and_then(|imported| {
        sink.flush().map_err(ImportError::Write)?;
        Ok(imported)
    }))
}

/// Lines written to it are appended to a store's session, 1000 at a time.
struct StoreSink {
    runtime: tokio::runtime::Runtime,
    store: AnyStore,
    session: String,
    /// The session's leaf, which the next append expects.
    leaf: Option<String>,
    batch: Vec<StoredEntry>,
    /// The start of a line whose end is not written yet.
    partial: Vec<u8>,
}

impl StoreSink {
    fn append(&mut self) -> io::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let entries = std::mem::take(&mut self.batch);
        let expect = Expect::leaf(self.leaf.as_deref());
        let appended = self
            .runtime
            .block_on(self.store.append(&self.session, &entries, expect))
            .map_err(io::Error::other)?;
        self.leaf = appended.leaf;
        Ok(())
    }
}

impl Write for StoreSink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.partial.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            let line =
                String::from_utf8(std::mem::take(&mut self.partial)).map_err(io::Error::other)?;
            self.batch.push(StoredEntry::from_line(line).0);
            if self.batch.len() >= 1000 {
                self.append()?;
            }
        }
        self.partial.extend_from_slice(rest);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.partial.is_empty() {
            let line =
                String::from_utf8(std::mem::take(&mut self.partial)).map_err(io::Error::other)?;
            self.batch.push(StoredEntry::from_line(line).0);
        }
        self.append()
    }
}

/// Reports an import and its outcome.
fn finish(args: &ImportArgs, imported: &Imported) -> Outcome {
    let file = crate::output::shown(&args.file);
    for w in &imported.warnings {
        crate::output::note!("{}", Diagnostic::from_import(w).render(&file));
    }
    crate::output::note!(
        "{file}: {} lines written: {} messages, {} summaries, {} extension lines",
        imported.lines,
        imported.messages,
        imported.summaries,
        imported.extensions
    );
    // A log with no message converts to nothing to continue: a failed import.
    if imported.has_problems() {
        Outcome::Problems
    } else {
        Outcome::Ok
    }
}
