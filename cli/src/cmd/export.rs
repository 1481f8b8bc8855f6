//! `agentmsg export --html`: a session as one self-contained HTML page. A
//! session file is read twice and never held ([`FileExport`]): the memory is
//! a skeleton of its tree and the longest line, whatever its size.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use agentmsg_runtime::export::{write_html, ExportError, FileExport, HtmlOptions};

use crate::diag::warning_diagnostic;
use crate::error::CliError;
use crate::Outcome;

/// The arguments of `agentmsg export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// A session: a transcript, a pi session file, a Claude Code log, a
    /// Codex rollout (`-` reads standard input), or a store's session
    /// (`DIR#ID`, `sqlite:PATH#ID`, `postgres://…#ID`).
    pub file: PathBuf,
    /// Write one self-contained HTML page (the only format so far).
    #[arg(long)]
    pub html: bool,
    /// Where to write the page (standard output when absent).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The leaf the page opens at (the session's leaf when absent).
    #[arg(long, value_name = "ID")]
    pub leaf: Option<String>,
    /// How many entries the page renders around the entry it opens (it
    /// grows by a fifth of that as the reader scrolls, and holds at most
    /// three times as many).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub page_size: usize,
    /// Write the entries' markup as plain text in the page (for grep; three
    /// to five times larger) instead of deflated.
    #[arg(long)]
    pub no_compress: bool,
}

/// What the page is written from: a regular file, read twice and never
/// held ([`FileExport`]), or a session read whole (standard input, a
/// store's session).
enum Source {
    File(Box<FileExport>),
    Whole(agentmsg_runtime::Session),
}

impl Source {
    fn has_entry(&self, id: &str) -> bool {
        match self {
            Self::File(file) => file.has_entry(id),
            Self::Whole(session) => session.entry(id).is_some(),
        }
    }

    fn entry_count(&self) -> usize {
        match self {
            Self::File(file) => file.entry_count(),
            Self::Whole(session) => session.entries().len(),
        }
    }

    fn write(
        &self,
        leaf: Option<&str>,
        options: &HtmlOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        match self {
            Self::File(file) => file.write_html(leaf, options, out),
            Self::Whole(session) => write_html(session, leaf, options, out),
        }
    }
}

/// Runs `agentmsg export`.
pub fn run(args: &ExportArgs) -> Result<Outcome, CliError> {
    if !args.html {
        return Err(CliError::Usage(
            "export needs a format: --html (one self-contained page)".to_owned(),
        ));
    }
    let file = crate::output::shown(&args.file);
    // A file is read twice, its entries written as they are read again;
    // the rest is read whole.
    let source = if crate::input::is_regular_file(&args.file)
        && !crate::input::is_store_address(&args.file)
    {
        let opened =
            FileExport::open(&args.file).map_err(|e| CliError::Session(format!("{file}: {e}")))?;
        for w in opened.warnings() {
            crate::output::note!("{}", warning_diagnostic(w).render(&file));
        }
        Source::File(Box::new(opened))
    } else {
        let opened = crate::input::open(&args.file)?;
        opened.report(&file);
        Source::Whole(opened.session)
    };
    if let Some(leaf) = &args.leaf {
        if !source.has_entry(leaf) {
            return Err(CliError::Usage(format!(
                "{file}: no entry has the id {}",
                crate::output::escape_controls(leaf)
            )));
        }
    }
    let options = HtmlOptions::default()
        .with_page_size(args.page_size)
        .with_compression(!args.no_compress);
    let leaf = args.leaf.as_deref();
    let written = |e: ExportError, path: Option<&PathBuf>| match e {
        ExportError::Session(e) => CliError::Session(format!("{file}: {e}")),
        ExportError::Io(source) => match path {
            Some(path) => CliError::Write {
                path: path.clone(),
                source,
            },
            None => CliError::Output(source),
        },
        other => CliError::Session(format!("{file}: {other}")),
    };
    match &args.output {
        None => {
            let mut out = BufWriter::new(crate::output::stdout());
            source
                .write(leaf, &options, &mut out)
                .map_err(|e| written(e, None))?;
        }
        Some(path) => {
            // Written beside the target and renamed over it: a reader never
            // sees half a page.
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
                _ => PathBuf::from("."),
            };
            let write_error = |source| CliError::Write {
                path: path.clone(),
                source,
            };
            let temp = tempfile::NamedTempFile::new_in(&dir).map_err(write_error)?;
            let mut out = BufWriter::new(temp);
            source
                .write(leaf, &options, &mut out)
                .map_err(|e| written(e, Some(path)))?;
            out.flush().map_err(write_error)?;
            let temp = out.into_inner().map_err(|e| write_error(e.into_error()))?;
            // The page holds the transcript, secrets included: it keeps the
            // mode of the file it replaces or of the input (a 0600 session
            // gives a 0600 page), and stays private (the temporary file's
            // 0600) for standard input or a store's session.
            if let Some(like) = crate::output::permissions_like(path, &args.file) {
                std::fs::set_permissions(temp.path(), like).map_err(write_error)?;
            }
            temp.persist(path).map_err(|e| write_error(e.error))?;
            crate::output::note!(
                "{file}: {} entries written to {}",
                source.entry_count(),
                crate::output::shown(path)
            );
        }
    }
    Ok(Outcome::Ok)
}
