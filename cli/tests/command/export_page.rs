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

/// What the window of the path shows, checked in the page: its width, app
/// lines side by side, escaped newlines in a tool's text (JSON written as
/// one line per key, a string's lines escaped: what the page showed
/// before), diffs, highlighted reads, and entries without their DOM
/// contract.
const PAGE_CHECKS: &str = r#"(() => {
  const main = document.getElementById('am-main');
  const r = { width: document.documentElement.scrollWidth, quietPairs: 0, escaped: [], diffs: 0, addBg: '', ctxBg: '',
    highlighted: 0, readLangs: 0, noContract: 0, callsNoTool: 0, entries: 0, runs: 0, folds: 0, badFolds: [] };
  // App lines side by side: two quiet lines, a line and a run, two runs.
  const kids = Array.from(main.children);
  const app = e => e.classList.contains('quiet') || e.classList.contains('run');
  for (let k = 1; k < kids.length; k++)
    if (app(kids[k]) && app(kids[k - 1])) r.quietPairs++;
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

/// The window of the path the page holds: its first and last path
/// positions (`lo..hi`), the path's length, and how many entries are in
/// the page.
fn window(b: &mut Browser) -> (u64, u64, u64, u64) {
    let w = b.eval(
        "(() => { const w = document.getElementById('am-where'); \
         return [+w.getAttribute('data-lo'), +w.getAttribute('data-hi'), +w.getAttribute('data-n'), \
         document.querySelectorAll('#am-main article.entry').length]; })()",
    );
    let n = |k: usize| w[k].as_u64().unwrap();
    (n(0), n(1), n(2), n(3))
}

/// The exceptions the page's script threw so far.
fn script_errors(b: &mut Browser) -> Vec<String> {
    b.eval("1");
    b.events
        .iter()
        .filter(|e| e["method"] == "Runtime.exceptionThrown")
        .map(|e| e["params"]["exceptionDetails"]["exception"]["description"].to_string())
        .collect()
}

/// Waits (10 s at most) until `expression` is true in the page.
fn wait_for(b: &mut Browser, expression: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while b.eval(expression) != Value::Bool(true) {
        assert!(
            std::time::Instant::now() < deadline,
            "not so after 10 s: {expression}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Scrolls the page to the end of the path (`down`) or to its start as a
/// reader does, calling `each` with the window (`lo..hi`) before the first
/// scroll and after each step the window grows; panics when it stops
/// growing before the end.
fn scroll_through(b: &mut Browser, down: bool, mut each: impl FnMut(&mut Browser, String)) {
    for _ in 0..10_000 {
        let (lo, hi, n, _) = window(b);
        each(b, format!("{lo}..{hi} of {n}"));
        if (down && hi >= n) || (!down && lo == 0) {
            return;
        }
        let (to, moved) = if down {
            ("document.documentElement.scrollHeight", "data-hi")
        } else {
            ("0", "data-lo")
        };
        let was = if down { hi } else { lo };
        assert_eq!(script_errors(b), Vec::<String>::new());
        b.eval(&format!("window.scrollTo(0, {to})"));
        wait_for(
            b,
            &format!("document.getElementById('am-where').getAttribute('{moved}') !== '{was}'"),
        );
    }
    panic!("the window never reached the end of the path");
}

/// Checks the page of `file` at 400 px in `b`, along the path.
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
    // The chosen path scrolled through, then again with every fold opened.
    for opened in [false, true] {
        if opened {
            b.open(&url);
            b.eval("document.getElementById('am-expand').click()");
        }
        scroll_through(b, true, |b, at| {
            let r = b.eval(PAGE_CHECKS);
            assert!(
                r["width"].as_u64().unwrap() <= 400,
                "{what} at {at} (folds opened: {opened}): laid out {} px wide at 400 px",
                r["width"]
            );
            assert_eq!(
                r["quietPairs"], 0,
                "{what} at {at}: two app lines side by side"
            );
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
        });
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
    // The first step of the window, no more.
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

/// The entry at the top of the view: its id and where its top is.
const AT_TOP: &str = r#"(() => {
  for (const a of document.querySelectorAll('#am-main > article.entry')) {
    const r = a.getBoundingClientRect();
    if (r.bottom > 0) return [a.getAttribute('data-entry-id'), Math.round(r.top)];
  }
  return null;
})()"#;

/// Each fork shown has its branch buttons once, right after it, and no
/// buttons are shown without their fork.
const FORKS_WHOLE: &str = r#"(() => {
  if (!window.__forks) {
    const t = JSON.parse(document.getElementById('am-tree').textContent);
    const n = new Map();
    t.pd.forEach((d, i) => { if (d) n.set(i - d, (n.get(i - d) || 0) + 1); });
    window.__forks = new Set(Array.from(n).filter(([, c]) => c > 1).map(([p]) => p));
  }
  const bad = [];
  const navs = Array.from(document.querySelectorAll('#am-main > .branches'));
  const at = new Map(navs.map(b => [b.getAttribute('data-k'), b]));
  if (at.size !== navs.length) bad.push('two buttons rows for one fork');
  for (const a of document.querySelectorAll('#am-main article.entry')) {
    const fork = window.__forks.has(+a.getAttribute('data-i')), nav = at.get(a.getAttribute('data-k'));
    if (fork !== !!nav) bad.push(a.getAttribute('data-entry-id') + (fork ? ' without its buttons' : ' with buttons'));
    if (nav && nav.previousElementSibling !== a.closest('#am-main > *')) bad.push(a.getAttribute('data-entry-id') + ': buttons elsewhere');
    at.delete(a.getAttribute('data-k'));
  }
  at.forEach((b, k) => bad.push('buttons without their fork at ' + k));
  return bad;
})()"#;

#[test]
fn a_long_path_scrolls_as_one_page_holding_a_bounded_window() {
    let Some(chromium) = chromium_or_skip("export --html of 10,000 entries") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let text = generated(10_000, 999);
    std::fs::write(dir.path().join("long.jsonl"), &text).unwrap();
    let url = crate::export_html::export(dir.path(), "long.jsonl", &[]);
    let mut b = Browser::start(&chromium, 1000, 900);
    b.open(&url);
    let (lo, hi, n, shown) = window(&mut b);
    assert_eq!((lo, hi, n, shown), (0, 500, 10_000, 500));
    assert!(b
        .eval("document.getElementById('am-where').textContent")
        .as_str()
        .unwrap()
        .ends_with(" of 10000"));
    // Down to the end of the path: the entries past the first window are
    // shown, the page never holds more than 1,500 (three steps), and the
    // entry at the top of the view stays where it is as the window is cut
    // above it.
    let mut most = 0;
    let mut cuts = 0;
    scroll_through(&mut b, true, |b, at| {
        let (lo, _, _, shown) = window(b);
        most = most.max(shown);
        assert!(shown <= 1500, "{shown} entries in the page at {at}");
        assert_eq!(b.eval(FORKS_WHOLE), serde_json::json!([]), "at {at}");
        if lo > 0 {
            cuts += 1;
        }
    });
    assert!(most >= 1000, "{most}");
    assert!(cuts > 0, "the window was never cut");
    assert_eq!(
        b.eval("document.querySelector('#am-main > article.entry:last-of-type').getAttribute('data-entry-id')"),
        "e9999"
    );
    b.eval("window.scrollTo(0, document.documentElement.scrollHeight)");
    wait_for(
        &mut b,
        "document.getElementById('am-where').textContent.endsWith('–10000 of 10000')",
    );
    // Up again, to the first entry.
    scroll_through(&mut b, false, |b, at| {
        let (_, _, _, shown) = window(b);
        assert!(shown <= 1500, "{shown} entries in the page at {at}");
        assert_eq!(b.eval(FORKS_WHOLE), serde_json::json!([]), "at {at}");
    });
    assert_eq!(
        b.eval("document.querySelector('#am-main > article.entry').getAttribute('data-entry-id')"),
        "e0"
    );
    // The view does not jump when the window grows below it and is cut
    // above it, nor when it grows above it and is cut below it.
    b.open(&format!("{url}#e5000"));
    for (to, moved) in [
        (
            "document.documentElement.scrollHeight - 2.5 * innerHeight",
            "data-hi",
        ),
        (
            "document.getElementById('am-main').offsetTop + 1.5 * innerHeight",
            "data-lo",
        ),
    ] {
        for _ in 0..3 {
            let before = window(&mut b);
            let top = b.eval(&format!("window.scrollTo(0, {to}); {AT_TOP}"));
            let was = if moved == "data-lo" {
                before.0
            } else {
                before.1
            };
            wait_for(
                &mut b,
                &format!("document.getElementById('am-where').getAttribute('{moved}') !== '{was}'"),
            );
            let after = b.eval(AT_TOP);
            let grown = window(&mut b);
            assert_eq!(
                b.eval(&format!(
                    "(() => {{ const a = document.querySelector('article.entry[data-entry-id={}]'); return a ? Math.round(a.getBoundingClientRect().top) : 'cut'; }})()",
                    top[0].as_str().unwrap()
                )),
                top[1],
                "the entry at the top moved: {top} then {after}; window {before:?} then {grown:?}"
            );
        }
    }
    // A permalink deep in the path, and one to an abandoned try far down.
    for id in ["e9000", "x8990", "e4"] {
        b.open(&format!("{url}#{id}"));
        assert_eq!(
            b.eval("(() => { const a = document.querySelector('article.hit'); return a && a.getClientRects().length ? a.getAttribute('data-entry-id') : null; })()"),
            id
        );
        let (_, _, _, shown) = window(&mut b);
        assert!(shown <= 1500, "{shown}");
    }
    // Collapse all and a filter hold for the entries rendered later.
    b.open(&url);
    b.eval("document.getElementById('am-collapse').click()");
    b.eval("(() => { const f = document.getElementById('am-filter'); f.value = 'user'; f.dispatchEvent(new Event('change')); })()");
    scroll_through(&mut b, true, |b, at| {
        let (_, _, _, shown) = window(b);
        assert!(shown <= 1500, "{shown} entries in the page at {at}");
        assert_eq!(
            b.eval("document.querySelectorAll('#am-main article.entry:not([data-kind=user]), #am-main article.entry:not(.collapsed)').length"),
            0,
            "at {at}"
        );
    });
    assert_eq!(
        b.eval("document.querySelector('#am-main > article.entry:last-of-type').getAttribute('data-entry-id')"),
        "e9999"
    );
    // ] and [ move a hundred entries on and back (to the box at the top of
    // the entry: its call, for a tool's result), with no filter (the page
    // loaded afresh).
    b.call("Page.navigate", serde_json::json!({"url": "about:blank"}));
    b.open(&format!("{url}#e3000"));
    let at = |b: &mut Browser| {
        let t = b.eval("document.getElementById('am-where').textContent");
        t.as_str().unwrap().to_owned()
    };
    let first = |t: &str| -> u64 {
        t["entries ".len()..]
            .split('–')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let from = at(&mut b);
    b.eval("document.body.dispatchEvent(new KeyboardEvent('keydown', {key: ']', bubbles: true}))");
    let on = at(&mut b);
    b.eval("document.body.dispatchEvent(new KeyboardEvent('keydown', {key: '[', bubbles: true}))");
    let back = at(&mut b);
    assert!(
        (99..=101).contains(&(first(&on) - first(&from)))
            && (99..=101).contains(&(first(&on) - first(&back))),
        "{from}, then {on}, then {back}"
    );
    assert!(b.requests_beyond_the_file().is_empty());
}

/// A session with runs of app-only lines of every length from 1 to 11
/// between user messages, and a fork at every fourth message.
fn with_runs() -> Vec<String> {
    let mut lines = Vec::new();
    let mut parent = "null".to_owned();
    let mut n = 0;
    for run in 0..60 {
        let id = format!("u{run}");
        lines.push(format!(
            r#"{{"role":"user","content":"message {run}","timestamp":1765233665000,"id":"{id}","parentId":{parent}}}"#
        ));
        if run % 4 == 0 {
            // A try left for the line that follows: a fork at the message.
            lines.push(format!(
                r#"{{"role":"extension","kind":"progress","data":{{"left":{run}}},"id":"left{run}","parentId":"{id}"}}"#
            ));
        }
        parent = format!("\"{id}\"");
        for k in 0..(run % 11 + 1) {
            let id = format!("p{n}");
            n += 1;
            lines.push(format!(
                r#"{{"role":"extension","kind":"progress","data":{{"step":{k}}},"id":"{id}","parentId":{parent}}}"#
            ));
            parent = format!("\"{id}\"");
        }
    }
    lines
}

/// Every run of app lines the window holds is one row (never two rows, or
/// a line beside a row), holding the lines it says.
const RUNS_WHOLE: &str = r#"(() => {
  const kids = Array.from(document.getElementById('am-main').children);
  const app = e => e.classList.contains('quiet') || e.classList.contains('run');
  const bad = [];
  for (let k = 1; k < kids.length; k++)
    if (app(kids[k]) && app(kids[k - 1])) bad.push('side by side at ' + k);
  for (const r of document.querySelectorAll('#am-main details.run')) {
    const lines = r.querySelectorAll(':scope > article').length;
    if (!r.querySelector('summary').textContent.startsWith(lines + ' app lines')) bad.push(r.querySelector('summary').textContent + ' holds ' + lines);
  }
  return bad;
})()"#;

#[test]
fn a_run_of_app_lines_cut_by_the_window_stays_one_row() {
    let Some(chromium) = chromium_or_skip("export --html in a browser") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let lines = with_runs();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    common::write_lines(dir.path(), "runs.jsonl", &lines);
    // Steps of 7 entries, so the window's edges fall inside runs.
    let url = crate::export_html::export(dir.path(), "runs.jsonl", &["--page-size", "7"]);
    let mut b = Browser::start(&chromium, 1000, 300);
    b.open(&url);
    let mut steps = 0;
    for down in [true, false, true] {
        scroll_through(&mut b, down, |b, at| {
            assert_eq!(b.eval(RUNS_WHOLE), serde_json::json!([]), "at {at}");
            assert_eq!(b.eval(FORKS_WHOLE), serde_json::json!([]), "at {at}");
            steps += 1;
        });
    }
    assert!(steps > 20, "{steps}");
    // The window was cut: it does not hold the whole path.
    let (_, _, n, shown) = window(&mut b);
    assert!(shown < n, "{shown} of {n}");
    // Centred on a line inside a run, then grown both ways.
    b.open(&format!("{url}#p200"));
    assert_eq!(b.eval(RUNS_WHOLE), serde_json::json!([]));
    assert_eq!(
        b.eval("document.querySelector('article.hit').closest('details.run').open"),
        true
    );
    for down in [true, false] {
        scroll_through(&mut b, down, |b, at| {
            assert_eq!(b.eval(RUNS_WHOLE), serde_json::json!([]), "at {at}");
        });
    }
}
