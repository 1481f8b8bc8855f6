//! A session as one self-contained HTML page (feature `html`).
//!
//! [`html`] returns the page as a string, for an application that serves it
//! from its own web UI; [`write_html`] streams it to a writer, holding one
//! entry's markup at a time. [`FileExport`] writes the page of a session
//! file without holding the session (the `agentmsg export --html` command):
//! it reads the file twice, first for the tree and the totals, then for each
//! entry as it is written, so its memory is a small skeleton per entry and
//! the longest line, whatever the file's size.
//!
//! The page needs no network: its CSS and script are inline, allowed by the
//! hashes of a strict Content-Security-Policy (`default-src 'none'`, images
//! only as `data:` URLs). Each entry is rendered here, in Rust: Markdown by
//! pulldown-cmark with raw HTML shown as text, every string escaped, links
//! kept only for `http:`, `https:` and `mailto:`, and images inlined only
//! when their bytes are an image format (the `mimeType` a transcript
//! declares is never written into the page). The rendered entries travel as
//! the text of `<script type="text/x-agentmsg-entries">` elements, which a
//! browser never runs, in chunks, deflated and in base64 (which has no `<`,
//! so nothing in it can close the element) unless
//! [`HtmlOptions::compress`] is off (then every `<` of the transcript is
//! escaped); what is the same for every entry (its id, kind name, time,
//! permalink, a reply's numbers) is written once, in the tree the script
//! reads, so the page is a fraction of the session it shows (about a third
//! of a pi session or a Claude Code log of a few hundred kB). The script shows the chosen
//! branch as one scroll, rendering a window of it
//! ([`HtmlOptions::page_size`] entries around the entry opened) that grows
//! by a fifth of that as the reader nears either end and is cut at the far
//! end past three times that, the view kept in place, so the page holds a
//! bounded number of entries and a session of 100,000 entries stays usable;
//! a permalink, a search hit, the outline, the keys and the next-error
//! button centre the window on their entry, and the status says which
//! entries are in view.
//!
//! What the page shows: the messages of the path to a leaf (thinking folded,
//! each tool call with its result beside it, errors marked, custom messages
//! with their kind), the branch points with the other branches one click
//! away (named by their first message), labels, compactions with their
//! summary and what they kept, a toggle dimming whatever the model did not
//! see at the leaf (the messages of [`Session::context`]), the tokens and
//! cost of each reply as a chart, totals, models and time spent, search over
//! every branch with a list of hits, an outline (starts, branches,
//! compactions, labels), filters (user messages, tools, errors), collapse
//! and expand all (both holding for entries rendered later, as the filters
//! do), keys (j/k the next and previous entry, [ ] a hundred entries back
//! and on, / search, e the next error, o the outline), a jump to the next
//! tool error,
//! and a permalink (`#ID`) for every entry, whatever branch it is on. Tools
//! are drawn as what they are: a shell command with its output, exit code
//! and time; a read as its path and content highlighted by the file's
//! extension (by a small tokenizer in the page); a write as the file; an
//! edit (pi's `edit`, Claude Code's `Edit` and `MultiEdit`, Codex's
//! `apply_patch`) as a diff; a search as its query; any other tool's
//! arguments as keys and values. App-only lines (Claude Code's progress and
//! hook lines, Codex's events, any `extension` line) are one quiet line each,
//! and a run of them folds into one row. Dark mode follows
//! `prefers-color-scheme`, and the page fits a 400 px screen.
//!
//! The DOM is a contract for styling, scripts and tests: each entry is an
//! `article.entry` with `data-entry-id` and `data-kind` (`user`,
//! `assistant`, `toolResult`, `system`, `compaction`, `branchSummary`, or
//! the app's kind), each tool call a `.call` with `data-tool` and
//! `data-call`; app-only lines carry the class `quiet`, a run of them sits in
//! one `details.run` (one row, whatever the window's edges); `#am-where`
//! carries the window (`data-lo` to `data-hi`, the path positions it
//! holds, the second excluded) and the path's length (`data-n`). `docs/export.md` sets the page beside pi's export,
//! claude-code-transcripts and claude-code-log.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! # use agentmsg::{export, Message, Session};
//! let mut session = Session::new();
//! session.append(Message::user("What is <b>2+2</b>?").into()).unwrap();
//! let page = export::html(&session, None, &export::HtmlOptions::default()).unwrap();
//! assert!(page.starts_with("<!DOCTYPE html>"));
//! assert!(page.contains("Content-Security-Policy"));
//! assert!(!page.contains("<b>2+2</b>"));
//! ```

mod escape;
mod file;
mod numbers;
mod page;
mod render;
mod tool;

pub use file::FileExport;

use std::io::{self, Write};

use crate::session::SessionError;
use crate::Session;

/// How [`html`] and [`write_html`] lay a page out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HtmlOptions {
    /// The page's title (the session's name, else "agentmsg session").
    pub title: Option<String>,
    /// How many entries the page renders around the entry it opens (at
    /// least 1; 500 by default): its window of the path grows by a fifth of
    /// this many as the reader nears either end and is cut past three times
    /// this many.
    pub page_size: usize,
    /// How many entries each embedded chunk holds (at least 1; 1000 by
    /// default). The page parses a chunk when it shows or searches it.
    pub chunk_size: usize,
    /// Whether the entries' markup is deflated (true by default): the page
    /// is then a fraction of the session's size, and opens in any browser
    /// with `DecompressionStream` (Chromium 80, Firefox 113, Safari 16.4).
    /// Without it the markup is plain text in the page, for a reader that
    /// greps the file, at about three to five times the size.
    pub compress: bool,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        Self {
            title: None,
            page_size: 500,
            chunk_size: 1000,
            compress: true,
        }
    }
}

impl HtmlOptions {
    /// The same options with this title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same options with the entries' markup deflated or not (see
    /// [`HtmlOptions::compress`]).
    #[must_use]
    pub fn with_compression(mut self, compress: bool) -> Self {
        self.compress = compress;
        self
    }

    /// The same options rendering `entries` entries at a time (see
    /// [`page_size`](Self::page_size)).
    #[must_use]
    pub fn with_page_size(mut self, entries: usize) -> Self {
        self.page_size = entries.max(1);
        self
    }
}

/// Why [`write_html`] or [`FileExport::write_html`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The leaf asked for is not an entry of the session.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Writing the page failed.
    #[error("cannot write the page: {0}")]
    Io(#[from] io::Error),
    /// The file read by [`FileExport`] no longer holds the entries its
    /// first reading found (it was rewritten in between).
    #[error("the session file changed while its page was written")]
    Changed,
}

/// The page of `session` with `leaf` chosen (the session's leaf when
/// `None`).
///
/// # Errors
///
/// When `leaf` names no entry of the session.
pub fn html(
    session: &Session,
    leaf: Option<&str>,
    options: &HtmlOptions,
) -> Result<String, SessionError> {
    let mut out = Vec::new();
    match write_html(session, leaf, options, &mut out) {
        Ok(()) => {}
        Err(ExportError::Session(e)) => return Err(e),
        // Writing to a `Vec` does not fail, and a session's entries do not
        // change while they are written.
        Err(ExportError::Io(_) | ExportError::Changed) => {}
    }
    // Everything written is built from `str`s and escapes.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Writes the page of `session` with `leaf` chosen (the session's leaf when
/// `None`) to `out`, one entry at a time. Wrap a file in a
/// [`BufWriter`](std::io::BufWriter).
///
/// # Errors
///
/// When `leaf` names no entry of the session (before anything is written),
/// or when writing fails.
pub fn write_html<W: Write>(
    session: &Session,
    leaf: Option<&str>,
    options: &HtmlOptions,
    out: W,
) -> Result<(), ExportError> {
    let outline = page::Outline {
        path: session.path_indexes(leaf)?,
        nodes: session.entries(),
        format: session.format(),
        gathered: &page::Gathered::of(session),
    };
    page::write(&outline, &mut &*session, options, out)
}
