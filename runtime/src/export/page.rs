//! The page: head with its Content-Security-Policy, the numbers, the
//! rendered entries in inert chunks (deflated), the tree, and the script.

use std::fmt::Write as _;
use std::io::Write;

use base64::Engine as _;
use hmac_sha256::Hash as Sha256;

use std::collections::{BTreeMap, HashMap};

use super::escape::{html, inert_json};
use super::numbers::{reply_cost, reply_numbers, ReplyCost, Totals, CHART, MAX_BARS};
use super::{render, ExportError, HtmlOptions};
use crate::session::{acts_as_compaction, entry_sends, Entry, EntryKind, Node, SessionFormat};
use crate::Session;

// `page.css` and `page.js` without comments and needless whitespace
// (`build.rs`, by the `minifier` crate).
const STYLE: &str = include_str!(concat!(env!("OUT_DIR"), "/page.min.css"));
const SCRIPT: &str = include_str!(concat!(env!("OUT_DIR"), "/page.min.js"));

/// Bits of an entry's flags in the tree the script reads.
const COMPACTION: u8 = 1;
const ERROR: u8 = 2;
const IN_TREE: u8 = 4;
/// An app-only line (drawn quiet, folded in runs).
const QUIET: u8 = 8;
/// A reply that calls a tool (what the "tools" filter shows).
const CALLS: u8 = 16;
/// A reply one of whose calls failed (what the "errors" filter shows, with
/// the failed result inside it).
const CALL_FAILED: u8 = 32;
/// Past this many calls without a result, the oldest are forgotten.
const MAX_OPEN_CALLS: usize = 10_000;

fn csp_hash(text: &str) -> String {
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(Sha256::hash(text.as_bytes()))
    )
}

/// What the page needs of a session before its entries are written: the
/// tree, and what is gathered from every entry (title, totals, labels).
pub(super) struct Outline<'s, N> {
    /// Each entry's place in the tree: the session's entries, or a
    /// skeleton of them (id, parent, line number, a compaction's first kept
    /// entry: what the page's tree holds).
    pub nodes: &'s [N],
    /// The path from the root to the chosen leaf.
    pub path: Vec<usize>,
    /// The session's format.
    pub format: SessionFormat,
    /// What was gathered from every entry.
    pub gathered: &'s Gathered,
}

/// What is gathered from every entry, in file order, before the page is
/// written.
#[derive(Default)]
pub(super) struct Gathered {
    /// The name the last `session_info` entry gave.
    title: Option<String>,
    totals: Totals,
    /// Every entry's label (the last one set for it), by the entry's id.
    labels: HashMap<String, String>,
    /// Each reply's cost, by the entry's place in file order: a reply
    /// without one is priced from the catalog once, here, not again when
    /// the page is written.
    costs: Vec<Option<ReplyCost>>,
}

impl Gathered {
    /// Gathers `entry`, the next in file order.
    pub fn add(&mut self, entry: &Entry) {
        let cost = self.totals.add(entry);
        self.costs.push(cost);
        if let EntryKind::SessionInfo { name: Some(name) } = entry.kind() {
            self.title = Some(name.clone());
        }
        if let Some((target, text)) = entry.label() {
            match text {
                Some(text) => self
                    .labels
                    .insert(target.as_str().to_owned(), text.to_owned()),
                None => self.labels.remove(target.as_str()),
            };
        }
    }

    /// What `session`'s entries give.
    pub fn of(session: &Session) -> Self {
        let mut gathered = Self::default();
        for entry in session.entries() {
            gathered.add(entry);
        }
        gathered
    }
}

/// What is given each entry and its line's bytes, in file order.
pub(super) type EachEntry<'e> = dyn FnMut(&Entry, &[u8]) -> Result<(), ExportError> + 'e;

/// The entries of a session, in file order, each with its line's bytes:
/// the session's own, or a file's read again.
pub(super) trait Entries {
    /// Calls `each` with every entry and its line, in file order, until it
    /// fails.
    fn each(&mut self, each: &mut EachEntry<'_>) -> Result<(), ExportError>;
}

impl Entries for &Session {
    fn each(&mut self, each: &mut EachEntry<'_>) -> Result<(), ExportError> {
        for entry in self.entries() {
            each(entry, self.line_bytes(entry))?;
        }
        Ok(())
    }
}

/// What the page keeps of each entry as it is written, for the tree the
/// script reads (written after the entries).
struct Facts {
    /// How many messages each entry gives a context it lies in.
    s: Vec<u32>,
    /// Flags ([`COMPACTION`], [`ERROR`], [`IN_TREE`], [`QUIET`],
    /// [`CALLS`], [`CALL_FAILED`]).
    f: Vec<u8>,
    /// The entry making each call whose result has not come yet, by call
    /// id (for [`CALL_FAILED`]).
    callers: HashMap<String, usize>,
    /// Each entry's kind, as an index into `names`.
    kinds: Vec<u32>,
    names: Vec<String>,
    named: HashMap<String, u32>,
    /// Each reply's tokens and cost, by entry index, for the chart.
    u: BTreeMap<usize, (u64, u64, u64, u64, Option<f64>)>,
    /// Each labelled entry's label, by entry index, for the outline.
    lb: BTreeMap<usize, String>,
    /// Each entry's time in whole seconds since the entry before's (the
    /// first's since 1970), `None` when unknown.
    t: Vec<Option<i64>>,
    /// The last known time, in seconds.
    last_t: i64,
}

impl Facts {
    fn kind(&mut self, name: &str) -> u32 {
        if let Some(&k) = self.named.get(name) {
            return k;
        }
        let k = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.to_owned());
        self.named.insert(name.to_owned(), k);
        k
    }
}

/// The tree as the script reads it: one value per entry.
#[derive(serde::Serialize)]
struct Tree<'a> {
    /// The chosen leaf's index (-1 when the session is empty).
    leaf: i64,
    /// How many entries the page renders around the entry it opens (a
    /// fifth of that at a time as the reader scrolls; it holds at most three
    /// times as many).
    step: usize,
    chunk: usize,
    /// How many messages each entry gives a context it lies in.
    s: &'a [u32],
    /// Flags ([`COMPACTION`], [`ERROR`], [`IN_TREE`], [`QUIET`],
    /// [`CALLS`], [`CALL_FAILED`]).
    f: &'a [u8],
    /// Ids (what a permalink names).
    ids: Seq<'a, String>,
    /// Each entry's kind, as an index into `kn`.
    k: &'a [u32],
    /// The kinds' names.
    kn: &'a [String],
    /// A compaction's first kept id, by entry index.
    fk: BTreeMap<usize, &'a str>,
    /// Each reply's tokens and cost, by entry index, for the chart.
    u: &'a BTreeMap<usize, (u64, u64, u64, u64, Option<f64>)>,
    /// At most this many bars in the chart.
    mb: usize,
    /// Each labelled entry's label, by entry index, for the outline.
    lb: &'a BTreeMap<usize, String>,
    /// Each entry's time: seconds since the last known time before it (the
    /// first since 1970), null when unknown.
    t: &'a [Option<i64>],
    /// Parents as the distance back to them (`i - parent`; 0 for a root):
    /// mostly 1, so short (negative for a parent written after its child).
    pd: Seq<'a, i64>,
}

/// A sequence written as it is made, one value per entry.
struct Seq<'a, T> {
    len: usize,
    value: &'a dyn Fn(usize) -> T,
}

impl<T: serde::Serialize> serde::Serialize for Seq<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((0..self.len).map(self.value))
    }
}

pub(super) fn write<N: Node, W: Write>(
    outline: &Outline<'_, N>,
    entries: &mut dyn Entries,
    options: &HtmlOptions,
    out: W,
) -> Result<(), ExportError> {
    let path = &outline.path;
    let mut out = out;
    let nodes = outline.nodes;
    let count = nodes.len();
    let title = options
        .title
        .clone()
        .or_else(|| outline.gathered.title.clone())
        .unwrap_or_else(|| "agentmsg session".to_owned());

    let mut head = String::with_capacity(STYLE.len() + 4096);
    let _ = write!(
        head,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<meta name=\"referrer\" content=\"no-referrer\"><title>",
        csp_hash(SCRIPT),
        csp_hash(STYLE)
    );
    html(&mut head, &title);
    head.push_str("</title><style>");
    head.push_str(STYLE);
    head.push_str("</style></head><body><div class=\"top\"><h1>");
    html(&mut head, &title);
    head.push_str("</h1>");
    outline.gathered.totals.write_html(&mut head);
    head.push_str(CHART);
    head.push_str(
        "<nav class=\"controls\">\
<label><input type=\"checkbox\" id=\"am-ctx\"> what the model saw at the leaf</label> \
<span id=\"am-ctxcount\"></span> \
<input type=\"search\" id=\"am-q\" placeholder=\"search every branch\" aria-label=\"search every branch\"> <button id=\"am-find\" title=\"next hit (Enter)\">find next</button> \
<button id=\"am-err\" title=\"e\">next tool error</button> \
<select id=\"am-filter\" aria-label=\"show\"><option value=\"\">all entries</option><option value=\"user\">user messages</option><option value=\"tools\">tools</option><option value=\"errors\">errors</option></select> \
<button id=\"am-collapse\">collapse all</button> <button id=\"am-expand\">expand all</button> \
<button id=\"am-prev\" title=\"100 entries back ([)\">◀</button> <span id=\"am-where\"></span> <button id=\"am-next\" title=\"100 entries on (])\">▶</button> \
<span id=\"am-status\" role=\"status\"></span></nav>\
<div id=\"am-hits\" hidden></div>\
<details id=\"am-outline\"><summary>outline: starts, branches, compactions, labels</summary><ol></ol></details>\
<p id=\"am-leafinfo\" class=\"note\"></p>\
<p class=\"note keys\">keys: j/k next/previous entry, [ ] 100 entries back/on, / search, e next error, o outline</p></div>\
<main id=\"am-main\"><noscript>This page shows the session with its script, which your browser does not run.</noscript></main>\n",
    );
    out.write_all(head.as_bytes())?;
    drop(head);

    let chunk = options.chunk_size.max(1);
    let mut facts = Facts {
        s: Vec::with_capacity(count),
        f: Vec::with_capacity(count),
        callers: HashMap::new(),
        kinds: Vec::with_capacity(count),
        names: Vec::new(),
        named: HashMap::new(),
        u: BTreeMap::new(),
        lb: BTreeMap::new(),
        t: Vec::with_capacity(count),
        last_t: 0,
    };
    let mut buf = Vec::new();
    let mut chunks = Chunks {
        out: Some(&mut out),
        deflating: None,
        compress: options.compress,
    };
    let mut calls = render::Calls::new();
    let mut i = 0;
    let format = outline.format;
    entries.each(&mut |entry, line| {
        if i >= count {
            return Err(ExportError::Changed);
        }
        if i % chunk == 0 {
            if i > 0 {
                chunks.end()?;
            }
            chunks.start()?;
        }
        let label = entry
            .id()
            .and_then(|id| outline.gathered.labels.get(id.as_str()))
            .map(String::as_str);
        if let Some(label) = label {
            facts.lb.insert(i, label.to_owned());
        }
        let cost = outline.gathered.costs.get(i).copied().flatten();
        let rendered = render::entry(entry, line, label, cost, &mut calls);
        chunks.write(inert_markup(&rendered.html).as_bytes())?;

        let sent =
            entry_sends(format, entry).map_or(0, |m| crate::to_llm(std::slice::from_ref(&m)).len());
        let mut flags = 0;
        if acts_as_compaction(format, entry) {
            flags |= COMPACTION;
        }
        if rendered.error {
            flags |= ERROR;
        }
        if entry.in_tree() {
            flags |= IN_TREE;
        }
        if rendered.quiet {
            flags |= QUIET;
        }
        match entry.message().and_then(|m| m.as_llm()) {
            Some(crate::Message::Assistant(a)) => {
                let cost = rendered.cost.unwrap_or_else(|| reply_cost(a));
                facts.u.insert(i, reply_numbers(a, cost));
                if facts.callers.len() > MAX_OPEN_CALLS {
                    facts.callers.clear();
                }
                for block in &a.content {
                    if let crate::AssistantContent::ToolCall(call) = block {
                        flags |= CALLS;
                        facts.callers.insert(call.id.clone(), i);
                    }
                }
            }
            Some(crate::Message::ToolResult(r)) => {
                if let Some(caller) = facts.callers.remove(&r.tool_call_id) {
                    if r.is_error {
                        if let Some(f) = facts.f.get_mut(caller) {
                            *f |= CALL_FAILED;
                        }
                    }
                }
            }
            _ => {}
        }
        let ts = entry.timestamp();
        if ts > 0 {
            let secs = i64::try_from(ts / 1000).unwrap_or(i64::MAX);
            facts.t.push(Some(secs.saturating_sub(facts.last_t)));
            facts.last_t = secs;
        } else {
            facts.t.push(None);
        }
        facts.s.push(u32::try_from(sent).unwrap_or(u32::MAX));
        facts.f.push(flags);
        let kind = facts.kind(entry.kind().name());
        facts.kinds.push(kind);
        i += 1;
        Ok(())
    })?;
    if i != count {
        return Err(ExportError::Changed);
    }
    if count > 0 {
        chunks.end()?;
    }
    drop(chunks);
    let fk = (0..count)
        .filter(|&i| facts.f[i] & COMPACTION != 0)
        .filter_map(|i| Some((i, nodes[i].first_kept()?.as_str())))
        .collect();
    let tree = Tree {
        leaf: path.last().map_or(-1, |&l| l as i64),
        step: options.page_size.max(1),
        chunk,
        s: &facts.s,
        f: &facts.f,
        ids: Seq {
            len: count,
            value: &|i| render::anchor(nodes[i].id(), nodes[i].line_no()),
        },
        k: &facts.kinds,
        kn: &facts.names,
        fk,
        u: &facts.u,
        mb: MAX_BARS,
        lb: &facts.lb,
        t: &facts.t,
        pd: Seq {
            len: count,
            value: &|i| nodes[i].parent().map_or(0, |p| i as i64 - p as i64),
        },
    };
    buf.clear();
    buf.extend_from_slice(b"<script type=\"application/json\" id=\"am-tree\">");
    let json = serde_json::to_string(&tree).unwrap_or_default();
    inert_json(&json, &mut buf);
    buf.extend_from_slice(b"</script>\n<script>");
    buf.extend_from_slice(SCRIPT.as_bytes());
    buf.extend_from_slice(b"</script></body></html>\n");
    out.write_all(&buf)?;
    out.flush()?;
    Ok(())
}

/// The entries' markup, written as `<script>` elements of one chunk each:
/// deflated (zlib) and in base64 as it is written when `compress`, which
/// the page's script inflates with the browser's `DecompressionStream`,
/// else as it is. Markup deflates to a fifth or less, so the page is a
/// fraction of the session it shows; base64 has no `<`, so nothing in it
/// can end the element; and the page is still written one entry at a time.
struct Chunks<'w, W: Write> {
    /// The page, when no chunk is being deflated into it.
    out: Option<&'w mut W>,
    deflating: Option<Deflating<'w, W>>,
    compress: bool,
}

type Deflating<'w, W> = flate2::write::ZlibEncoder<
    base64::write::EncoderWriter<'static, base64::engine::GeneralPurpose, &'w mut W>,
>;

impl<W: Write> Chunks<'_, W> {
    /// Opens a chunk's element.
    fn start(&mut self) -> std::io::Result<()> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        if self.compress {
            out.write_all(
                b"<script type=\"text/x-agentmsg-entries\" class=\"am-chunk\" data-deflate>",
            )?;
            self.deflating = Some(flate2::write::ZlibEncoder::new(
                base64::write::EncoderWriter::new(out, &base64::engine::general_purpose::STANDARD),
                flate2::Compression::new(DEFLATE_LEVEL),
            ));
        } else {
            out.write_all(b"<script type=\"text/x-agentmsg-entries\" class=\"am-chunk\">")?;
            self.out = Some(out);
        }
        Ok(())
    }

    /// Writes entries' markup into the open chunk.
    fn write(&mut self, markup: &[u8]) -> std::io::Result<()> {
        match (&mut self.deflating, &mut self.out) {
            (Some(z), _) => z.write_all(markup),
            (None, Some(out)) => out.write_all(markup),
            (None, None) => Ok(()),
        }
    }

    /// Closes the open chunk's element.
    fn end(&mut self) -> std::io::Result<()> {
        let out = match self.deflating.take() {
            Some(z) => z.finish()?.finish()?,
            None => match self.out.take() {
                Some(out) => out,
                None => return Ok(()),
            },
        };
        out.write_all(b"</script>\n")?;
        self.out = Some(out);
        Ok(())
    }
}

/// zlib's level for the page's chunks: 2 deflates a pi session's markup
/// to 0.19 at 180 MB/s, where 6 gives 0.16 at 100 MB/s and 1 0.24 at 240
/// (benches/README.md, "The page deflated").
const DEFLATE_LEVEL: u32 = 2;

/// An entry's markup as the text of a `<script>` element that is never run
/// (the page's script parses it when it shows the entry): nothing in it can
/// end the element, since every `<` of the transcript is escaped and the
/// markup opens no comment and no script. Should one appear all the same,
/// its `<` is written as `<\` (then shown as text, never closing the
/// element).
fn inert_markup(markup: &str) -> std::borrow::Cow<'_, str> {
    let opens = |tail: &[u8]| {
        let starts = |p: &[u8]| tail.len() >= p.len() && tail[..p.len()].eq_ignore_ascii_case(p);
        starts(b"</script") || starts(b"<!--") || starts(b"<script")
    };
    let bytes = markup.as_bytes();
    if !bytes
        .iter()
        .enumerate()
        .any(|(at, &b)| b == b'<' && opens(&bytes[at..]))
    {
        return std::borrow::Cow::Borrowed(markup);
    }
    let mut out = String::with_capacity(markup.len() + 16);
    let mut last = 0;
    for (at, _) in markup.match_indices('<') {
        if opens(&bytes[at..]) {
            out.push_str(&markup[last..at]);
            out.push_str("<\\");
            last = at + 1;
        }
    }
    out.push_str(&markup[last..]);
    std::borrow::Cow::Owned(out)
}
