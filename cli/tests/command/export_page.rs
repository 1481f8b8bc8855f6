//! The page of `agentmsg export --html` read as a person reads it, in
//! headless Chromium with real layout, on the pi sessions, Claude Code logs
//! and Codex rollouts of the conformance data and on a generated session of
//! 100,000 entries: it fits a 400 px screen, follows the color scheme,
//! draws edits as diffs and highlights reads, shows no tool's text as
//! escaped JSON, folds app-only lines, reaches every entry by its `#id`,
//! finds text on an abandoned branch, and fetches nothing.

use crate::browser;
use crate::common;

use std::path::{Path, PathBuf};

use browser::{chromium_or_skip, Browser};
use common::agentmsg_in;
use serde_json::Value;

/// Every session file of one agent under `dir`, sorted.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

/// Exports a copy of `file` (the shared data is never opened in place) into
/// `dir` as `name.html`; the page's URL, or `None` (said) when the file is
/// not a session agentmsg reads (a fixture cut down until its tree is
/// broken).
fn export_copy(dir: &Path, file: &Path, name: &str) -> Option<String> {
    let copy = dir.join(format!("{name}.jsonl"));
    std::fs::copy(file, &copy).unwrap();
    let page = dir.join(format!("{name}.html"));
    let run = agentmsg_in(
        dir,
        &[
            "export",
            copy.to_str().unwrap(),
            "--html",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    if run.code == 2 && run.stderr.contains(copy.to_str().unwrap()) {
        eprintln!(
            "{}: not read, so not checked: {}",
            file.display(),
            run.stderr.trim()
        );
        return None;
    }
    assert_eq!(run.code, 0, "{}: {run:?}", file.display());
    Some(format!("file://{}", page.display()))
}

/// What one page of the path shows, checked in the page: its width, app
/// lines side by side, escaped newlines in a tool's text (JSON written as
/// one line per key, a string's lines escaped: what the page showed
/// before), diffs, highlighted reads, and entries without their DOM
/// contract.
const PAGE_CHECKS: &str = r#"(() => {
  const main = document.getElementById('am-main');
  const r = { width: document.documentElement.scrollWidth, quietPairs: 0, escaped: [], diffs: 0, addBg: '', ctxBg: '',
    highlighted: 0, readLangs: 0, noContract: 0, callsNoTool: 0, entries: 0, runs: 0, folds: 0, badFolds: [] };
  const kids = Array.from(main.children);
  for (let k = 1; k < kids.length; k++)
    if (kids[k].classList.contains('quiet') && kids[k - 1].classList.contains('quiet')) r.quietPairs++;
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let t; (t = walker.nextNode());) {
    const v = t.nodeValue, p = t.parentElement;
    if (!p.closest('.call') || p.closest('pre.raw')) continue;
    // A JSON string written with its newlines escaped: a line that is a
    // key and a string value, or an object, holding three or more `\n`.
    for (const line of v.split('\n'))
      if (/^\s*(\{\s*)?"[^"]*"\s*:\s*"/.test(line) && (line.match(/\\n/g) || []).length >= 3) r.escaped.push(line.slice(0, 160));
  }
  const add = main.querySelector('pre.diff span.add'), ctx = main.querySelector('pre.diff span.ctx');
  r.diffs = main.querySelectorAll('pre.diff span.del').length + main.querySelectorAll('pre.diff span.add').length;
  if (add) r.addBg = getComputedStyle(add).backgroundColor;
  if (ctx) r.ctxBg = getComputedStyle(ctx).backgroundColor;
  r.highlighted = main.querySelectorAll('.call .slot code.hl span.hl-kw').length;
  r.readLangs = main.querySelectorAll('.call[data-tool=read] .slot code[data-lang], .call[data-tool=Read] .slot code[data-lang]').length;
  r.noContract = main.querySelectorAll('article.entry:not([data-entry-id]), article.entry:not([data-kind])').length;
  r.callsNoTool = main.querySelectorAll('.call:not([data-tool])').length;
  r.entries = main.querySelectorAll('article.entry').length;
  // Runs of app lines folded into one row, and long outputs folded under
  // "N more lines".
  r.runs = main.querySelectorAll('details.run').length;
  for (const s of main.querySelectorAll('details.more > summary'))
    if (/^[0-9]+ more lines?$/.test(s.textContent)) r.folds++; else r.badFolds.push(s.textContent);
  return r;
})()"#;

/// Opens every `#id` of the session in turn: the entry shown, marked, and
/// laid out (not hidden in a fold).
const REACH_ALL: &str = r#"(() => {
  const t = JSON.parse(document.getElementById('am-tree').textContent);
  const seen = new Set(), bad = [];
  const errors = [];
  window.addEventListener('error', e => errors.push(e.message + ' at ' + e.lineno + ':' + e.colno));
  for (let i = 0; i < t.ids.length; i++) {
    const id = t.ids[i];
    if (seen.has(id)) continue;
    seen.add(id);
    history.replaceState(null, '', '#' + encodeURIComponent(id));
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    const a = document.querySelector('article.hit');
    if (!a) bad.push(id + ': no entry marked');
    else if (a.getAttribute('data-entry-id') !== id) bad.push(id + ': ' + a.getAttribute('data-entry-id') + ' marked');
    else if (a.getClientRects().length === 0) bad.push(id + ': not laid out');
  }
  return { ids: seen.size, bad: bad.slice(0, 10), unreached: bad.length, errors: errors.slice(0, 5) };
})()"#;

/// A message off the chosen leaf's path with text, and a piece of its text
/// to search for (null when every message is on the path), in the page
/// whose chunks' texts (`page_entries::chunk_texts`) are `TEXTS`.
const OFF_PATH_TEXT: &str = r#"(() => {
  const t = JSON.parse(document.getElementById('am-tree').textContent);
  const on = new Set();
  for (let at = t.leaf; at >= 0; at = t.pd[at] === 0 ? -1 : at - t.pd[at]) on.add(at);
  const chunks = TEXTS;
  for (let i = 0; i < t.ids.length; i++) {
    const kind = t.kn[t.k[i]];
    if (on.has(i) || (kind !== 'user' && kind !== 'assistant')) continue;
    const part = chunks[Math.floor(i / t.chunk)].split('<article ')[i % t.chunk + 1];
    const tpl = document.createElement('template');
    tpl.innerHTML = '<article ' + part;
    const md = tpl.content.querySelector('.md');
    const text = md ? md.textContent.replace(/\s+/g, ' ').trim() : '';
    if (text.length >= 12) return { i: i, id: t.ids[i], q: text.slice(0, 40) };
  }
  return null;
})()"#;

/// Searches for `q` with the page's own search; whether entry `i` is among
/// the hits listed, and the entry the hit list's link for it opens.
fn search_finds(b: &mut Browser, q: &str, i: u64) -> (bool, Value) {
    let q = serde_json::to_string(q).unwrap();
    b.eval(&format!(
        "document.getElementById('am-q').value = {q}; document.getElementById('am-find').click()"
    ));
    let listed = b.eval(&format!(
        "document.querySelector('#am-hits a[data-i=\"{i}\"]') !== null"
    ));
    let opened = b.eval(&format!(
        "(() => {{ const a = document.querySelector('#am-hits a[data-i=\"{i}\"]'); if (!a) return null; \
         history.replaceState(null, '', a.getAttribute('href')); window.dispatchEvent(new HashChangeEvent('hashchange')); \
         const hit = document.querySelector('article.hit'); return hit && hit.getClientRects().length ? hit.getAttribute('data-entry-id') : null; }})()"
    ));
    (listed == Value::Bool(true), opened)
}

/// The luminance (0 to 1) of a computed `rgb(…)` color.
fn luminance(color: &str) -> f64 {
    let parts: Vec<f64> = color
        .trim_start_matches("rgba(")
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    assert!(parts.len() >= 3, "{color}");
    (0.2126 * parts[0] + 0.7152 * parts[1] + 0.0722 * parts[2]) / 255.0
}

/// What was found over all the files of one agent.
#[derive(Default, Debug)]
struct Found {
    files: usize,
    diffs: u64,
    highlighted: u64,
    read_langs: u64,
    off_path_searches: usize,
    runs: u64,
    folds: u64,
}

/// Checks the page of `file` at 400 px in `b`, page by page along the path.
fn check_file(b: &mut Browser, dir: &Path, file: &Path, name: &str, found: &mut Found) {
    let Some(url) = export_copy(dir, file, name) else {
        return;
    };
    b.color_scheme("light");
    b.open(&url);
    let what = file.display().to_string();
    let light = b.eval("getComputedStyle(document.body).backgroundColor");
    assert!(luminance(light.as_str().unwrap()) > 0.8, "{what}: {light}");
    b.color_scheme("dark");
    let dark = b.eval("getComputedStyle(document.body).backgroundColor");
    assert!(luminance(dark.as_str().unwrap()) < 0.2, "{what}: {dark}");
    // Every page of the chosen path, then with every fold opened.
    for turn in 0..200 {
        for opened in [false, true] {
            if opened {
                b.eval("document.getElementById('am-expand').click()");
            }
            let r = b.eval(PAGE_CHECKS);
            assert!(
                r["width"].as_u64().unwrap() <= 400,
                "{what} page {turn} (folds opened: {opened}): laid out {} px wide at 400 px",
                r["width"]
            );
            assert_eq!(r["quietPairs"], 0, "{what}: two app lines side by side");
            assert_eq!(
                r["escaped"],
                serde_json::json!([]),
                "{what}: escaped newlines"
            );
            assert_eq!(r["noContract"], 0, "{what}");
            assert_eq!(r["callsNoTool"], 0, "{what}");
            if !opened {
                found.diffs += r["diffs"].as_u64().unwrap();
                found.highlighted += r["highlighted"].as_u64().unwrap();
                found.read_langs += r["readLangs"].as_u64().unwrap();
                found.runs += r["runs"].as_u64().unwrap();
                found.folds += r["folds"].as_u64().unwrap();
                assert_eq!(r["badFolds"], serde_json::json!([]), "{what}");
                if r["diffs"].as_u64().unwrap() > 0 {
                    assert_ne!(r["addBg"], r["ctxBg"], "{what}: an added line is marked");
                }
            }
        }
        let more = b.eval(
            "(() => { const t = document.getElementById('am-pageno').textContent.match(/page (\\d+) of (\\d+)/); \
             if (+t[1] >= +t[2]) return false; document.getElementById('am-next').click(); return true; })()",
        );
        if more != Value::Bool(true) {
            break;
        }
    }
    // Every entry, whatever branch or compaction it sits behind.
    let reach = b.eval(REACH_ALL);
    assert_eq!(reach["unreached"], 0, "{what}: {reach}");
    // Text on an abandoned branch is found and opened.
    b.open(&url);
    let page = std::fs::read_to_string(url.trim_start_matches("file://")).unwrap();
    let texts = serde_json::to_string(&crate::page_entries::chunk_texts(&page)).unwrap();
    if let Some(off) = b
        .eval(&OFF_PATH_TEXT.replace("TEXTS", &texts))
        .as_object()
        .cloned()
    {
        let i = off["i"].as_u64().unwrap();
        let (listed, opened) = search_finds(b, off["q"].as_str().unwrap(), i);
        assert!(listed, "{what}: {off:?} not among the hits");
        assert_eq!(opened, off["id"], "{what}");
        found.off_path_searches += 1;
    }
    assert_eq!(b.requests_beyond_the_file(), Vec::<String>::new(), "{what}");
    found.files += 1;
}

#[test]
fn every_agent_s_sessions_read_well_in_the_browser() {
    let Some(chromium) = chromium_or_skip("export --html on the conformance data") else {
        return;
    };
    let Some(conformance) = common::conformance_or_skip(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut b = Browser::start(&chromium, 400, 800);
    for agent in ["pi", "claude-code", "codex"] {
        let mut files = Vec::new();
        files_under(&conformance.join("transcripts").join(agent), &mut files);
        assert!(!files.is_empty(), "no {agent} files");
        let mut found = Found::default();
        for (n, file) in files.iter().enumerate() {
            check_file(
                &mut b,
                dir.path(),
                file,
                &format!("{agent}-{n}"),
                &mut found,
            );
        }
        eprintln!("{agent}: {found:?}");
        assert!(
            found.files * 2 > files.len(),
            "{agent}: only {} of {} files read",
            found.files,
            files.len()
        );
        assert!(found.diffs > 0, "{agent}: no edit drawn as a diff");
        // Each agent's files have app lines side by side (so "no two in a
        // row" checks something).
        assert!(found.runs > 0, "{agent}: no run of app lines folded");
        if agent != "codex" {
            // Codex's reads are shell commands.
            assert!(found.read_langs > 0, "{agent}: no read with its language");
            // Codex's outputs here are short.
            assert!(found.folds > 0, "{agent}: no long output folded");
        }
        if agent == "pi" {
            assert!(found.highlighted > 0, "pi: no read highlighted");
        }
    }
}

/// A pi session (version 3) of about `n` entries shaped as
/// `benches/gen_pi_session.py` makes them (a third each user turns, replies
/// with thinking and a read, and the read's result: about 600 bytes an
/// entry), with an abandoned try (a user message left for another) every
/// `every` entries.
fn generated(n: usize, every: usize) -> String {
    let mut out = String::with_capacity(n * 640);
    out.push_str(r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#);
    out.push('\n');
    let mut parent = "null".to_owned();
    let result = "fn main() { println!(\\\"hello\\\"); }\\n".repeat(12);
    for i in 0..n {
        let id = format!("e{i}");
        let message = match i % 3 {
            0 => format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"{}"}}],"timestamp":{i}}}"#,
                format!("please read file {i} and tell me what it does ").repeat(3)
            ),
            1 => format!(
                r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"{}","thinkingSignature":"sig"}},{{"type":"toolCall","id":"call_{i}","name":"read","arguments":{{"path":"src/f{i}.rs","offset":0,"limit":200}}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":1200,"output":80,"cacheRead":900,"cacheWrite":0,"totalTokens":2180,"cost":{{"input":0.0036,"output":0.0012,"cacheRead":0.00027,"cacheWrite":0,"total":0.00507}}}},"stopReason":"toolUse","timestamp":{i}}}"#,
                "I should read it. ".repeat(8)
            ),
            _ => format!(
                r#"{{"role":"toolResult","toolCallId":"call_{}","toolName":"read","content":[{{"type":"text","text":"{result}"}}],"isError":false,"timestamp":{i}}}"#,
                i - 1
            ),
        };
        out.push_str(&format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:00.000Z","message":{message}}}"#
        ));
        out.push('\n');
        if i % every == every - 1 && i % 3 == 2 {
            // A user turn after this result, left for the one that follows.
            out.push_str(&format!(
                r#"{{"type":"message","id":"x{i}","parentId":"{id}","timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"user","content":[{{"type":"text","text":"abandoned try {i}"}}],"timestamp":{i}}}}}"#
            ));
            out.push('\n');
        }
        parent = format!("\"{id}\"");
    }
    out
}

#[test]
fn a_pi_session_of_100k_entries_opens_and_its_search_reaches_every_branch() {
    let Some(chromium) = chromium_or_skip("export --html of 100,000 entries") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let text = generated(100_000, 999);
    std::fs::write(dir.path().join("big.jsonl"), &text).unwrap();
    let url = crate::export_html::export(dir.path(), "big.jsonl", &[]);
    let page = std::fs::metadata(dir.path().join("page.html"))
        .unwrap()
        .len();
    assert!(
        page <= text.len() as u64,
        "the page ({page} bytes) is larger than the session ({} bytes)",
        text.len()
    );
    let mut b = Browser::start(&chromium, 1000, 900);
    b.open(&url);
    assert_eq!(
        b.eval("document.querySelectorAll('article.entry').length"),
        500
    );
    let total = b.eval("JSON.parse(document.getElementById('am-tree').textContent).pd.length");
    assert!(total.as_u64().unwrap() >= 100_000, "{total}");
    // An abandoned try far down the session: listed, and opened on its branch.
    let i =
        b.eval("JSON.parse(document.getElementById('am-tree').textContent).ids.indexOf('x50948')");
    let (listed, opened) = search_finds(&mut b, "abandoned try 50948", i.as_u64().unwrap());
    assert!(listed);
    assert_eq!(opened, "x50948");
    let hits = b.eval("document.getElementById('am-hits').querySelector('p').textContent");
    assert!(
        hits.as_str().unwrap().starts_with("1 entry holds"),
        "{hits}"
    );
    // Every abandoned try is found at once.
    b.eval("document.getElementById('am-q').value = 'abandoned try'; document.getElementById('am-find').click()");
    let hits = b.eval("document.getElementById('am-hits').querySelector('p').textContent");
    let tries = text.matches("abandoned try").count();
    assert!(tries > 90, "{tries}");
    assert!(
        hits.as_str()
            .unwrap()
            .starts_with(&format!("{tries} entries hold")),
        "{hits}"
    );
    assert!(b.requests_beyond_the_file().is_empty());
}
