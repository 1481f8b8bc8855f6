//! `agentmsg export --html`: a session as one self-contained HTML page.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use agentmsg_runtime::export::{write_html, ExportError, HtmlOptions};

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
    /// How many entries the page shows at a time.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub page_size: usize,
}

/// Runs `agentmsg export`.
pub fn run(args: &ExportArgs) -> Result<Outcome, CliError> {
    if !args.html {
        return Err(CliError::Usage(
            "export needs a format: --html (one self-contained page)".to_owned(),
        ));
    }
    let opened = crate::input::open(&args.file)?;
    let file = crate::output::shown(&args.file);
    opened.report(&file);
    let session = &opened.session;
    if let Some(leaf) = &args.leaf {
        if session.entry(leaf).is_none() {
            return Err(CliError::Usage(format!(
                "{file}: no entry has the id {}",
                crate::output::escape_controls(leaf)
            )));
        }
    }
    let options = HtmlOptions::default().with_page_size(args.page_size);
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
        other => CliError::Usage(other.to_string()),
    };
    match &args.output {
        None => {
            let out = crate::output::stdout();
            write_html(session, leaf, &options, BufWriter::new(out))
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
            write_html(session, leaf, &options, &mut out).map_err(|e| written(e, Some(path)))?;
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
                session.entries().len(),
                crate::output::shown(path)
            );
        }
    }
    Ok(Outcome::Ok)
}
