//! The page: head with its Content-Security-Policy, the numbers, the
//! rendered entries as inert JSON chunks, the tree, and the script.

use std::fmt::Write as _;
use std::io::Write;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::escape::{html, inert_json};
use super::numbers::{reply_numbers, Totals, CHART, MAX_BARS};
use super::{render, ExportError, HtmlOptions};
use crate::session::EntryKind;
use crate::Session;

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// Bits of an entry's flags in the tree the script reads.
const COMPACTION: u8 = 1;
const ERROR: u8 = 2;
const IN_TREE: u8 = 4;

fn csp_hash(text: &str) -> String {
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
    )
}

/// The tree as the script reads it: one value per entry.
#[derive(serde::Serialize)]
struct Tree<'a> {
    /// The chosen leaf's index (-1 when the session is empty).
    leaf: i64,
    page: usize,
    chunk: usize,
    /// Parent indexes (-1 for a root).
    p: Vec<i64>,
    /// How many messages each entry gives a context it lies in.
    s: Vec<u32>,
    /// Flags ([`COMPACTION`], [`ERROR`], [`IN_TREE`]).
    f: Vec<u8>,
    /// Ids (what a permalink names).
    ids: Vec<String>,
    /// Kinds.
    kinds: Vec<&'a str>,
    /// A compaction's first kept id, by entry index.
    fk: std::collections::BTreeMap<usize, &'a str>,
    /// A short text of each entry that has siblings, for the branch buttons.
    heads: std::collections::BTreeMap<usize, String>,
    /// Each reply's tokens and cost, by entry index, for the chart.
    u: std::collections::BTreeMap<usize, (u64, u64, u64, u64, Option<f64>)>,
    /// At most this many bars in the chart.
    mb: usize,
}

pub(super) fn write<W: Write>(
    session: &Session,
    leaf: Option<&str>,
    options: &HtmlOptions,
    out: W,
) -> Result<(), ExportError> {
    let path = session.path_indexes(leaf)?;
    let mut out = out;
    let entries = session.entries();
    let labels = session.labels();
    let title = options
        .title
        .clone()
        .or_else(|| {
            entries.iter().rev().find_map(|e| match e.kind() {
                EntryKind::SessionInfo { name } => name.clone(),
                _ => None,
            })
        })
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
    Totals::of(session).write_html(&mut head);
    head.push_str(CHART);
    head.push_str(
        "<nav class=\"controls\">\
<label><input type=\"checkbox\" id=\"am-ctx\"> what the model saw at the leaf</label> \
<span id=\"am-ctxcount\"></span> \
<input type=\"search\" id=\"am-q\" placeholder=\"search this branch\"> <button id=\"am-find\">find next</button> \
<button id=\"am-err\">next tool error</button> \
<button id=\"am-prev\">◀</button> <span id=\"am-pageno\"></span> <button id=\"am-next\">▶</button> \
<span id=\"am-status\" role=\"status\"></span></nav>\
<p id=\"am-leafinfo\" class=\"note\"></p></div>\
<main id=\"am-main\"><noscript>This page shows the session with its script, which your browser does not run.</noscript></main>\n",
    );
    out.write_all(head.as_bytes())?;
    drop(head);

    let chunk = options.chunk_size.max(1);
    let mut tree = Tree {
        leaf: path.last().map_or(-1, |&l| l as i64),
        page: options.page_size.max(1),
        chunk,
        p: Vec::with_capacity(entries.len()),
        s: Vec::with_capacity(entries.len()),
        f: Vec::with_capacity(entries.len()),
        ids: Vec::with_capacity(entries.len()),
        kinds: Vec::with_capacity(entries.len()),
        fk: Default::default(),
        heads: Default::default(),
        u: Default::default(),
        mb: MAX_BARS,
    };
    let mut children = vec![0_u32; entries.len()];
    for e in entries {
        if let Some(slot) = e.parent_index().and_then(|p| children.get_mut(p)) {
            *slot = slot.saturating_add(1);
        }
    }
    let mut buf = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        if i % chunk == 0 {
            if i > 0 {
                out.write_all(b"]</script>\n")?;
            }
            out.write_all(b"<script type=\"application/json\" class=\"am-chunk\">[")?;
        } else {
            out.write_all(b",")?;
        }
        let label = entry.id().and_then(|id| labels.get(id.as_str()).copied());
        let rendered = render::entry(session, i, label);
        buf.clear();
        let json = serde_json::to_string(&rendered.html).unwrap_or_default();
        inert_json(&json, &mut buf);
        out.write_all(&buf)?;

        let sent = session
            .entry_sends(i)
            .map_or(0, |m| crate::to_llm(std::slice::from_ref(&m)).len());
        let mut flags = 0;
        if session.acts_as_compaction(i) {
            flags |= COMPACTION;
            if let Some(first) = entry.as_compaction().and_then(|c| c.first_kept_id.as_ref()) {
                tree.fk.insert(i, first.as_str());
            }
        }
        if rendered.error {
            flags |= ERROR;
        }
        if entry.in_tree() {
            flags |= IN_TREE;
        }
        if let Some(crate::Message::Assistant(a)) = entry.message().and_then(|m| m.as_llm()) {
            tree.u.insert(i, reply_numbers(a));
        }
        tree.p.push(entry.parent_index().map_or(-1, |p| p as i64));
        tree.s.push(u32::try_from(sent).unwrap_or(u32::MAX));
        tree.f.push(flags);
        tree.ids.push(render::anchor(entry));
        tree.kinds.push(entry.kind().name());
        let sibling = entry
            .parent_index()
            .and_then(|p| children.get(p))
            .is_some_and(|&n| n > 1);
        if sibling {
            tree.heads.insert(i, short_text(session, i));
        }
    }
    if !entries.is_empty() {
        out.write_all(b"]</script>\n")?;
    }
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

/// The first words of an entry, for a branch button.
fn short_text(session: &Session, i: usize) -> String {
    let entry = &session.entries()[i];
    let text = match entry.kind() {
        EntryKind::Message(m) => match m.as_llm() {
            Some(crate::Message::User(u)) => u.text(),
            Some(crate::Message::Assistant(a)) => {
                let text = a.text_content();
                if text.is_empty() {
                    a.tool_calls()
                        .map(|c| c.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                } else {
                    text
                }
            }
            Some(crate::Message::ToolResult(r)) => format!("{}: {}", r.tool_name, r.text()),
            Some(crate::Message::System(s)) => s.text(),
            None => String::new(),
        },
        EntryKind::Compaction(c) => c.summary.clone(),
        EntryKind::BranchSummary(b) => b.summary.clone(),
        _ => String::new(),
    };
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = one_line.chars().take(60).collect();
    if one_line.chars().count() > 60 {
        short.push('…');
    }
    format!("{} {short}", entry.kind().name())
}
