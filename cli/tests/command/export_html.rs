//! `agentmsg export --html` in a real browser: headless Chromium, asserting
//! on the DOM. Without chromium the tests skip loudly; under `CI` they fail.

use crate::browser;
use crate::common;

use std::path::Path;

use browser::{chromium_or_skip, Browser};
use common::{agentmsg_in, agentmsg_stdin};

/// Two branches from `a2`: the first goes on to `a3` (and a label on `u1`),
/// the second, the session's leaf, is compacted keeping `a2` and has a
/// custom message no model sees.
const BRANCHED: &[&str] = &[
    r#"{"role":"user","content":"Find the needle-42 please","timestamp":1765233665000,"id":"u1","parentId":null}"#,
    r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Let me think about **haystacks**."},{"type":"text","text":"Looking with `grep`:\n\n```sh\ngrep -r needle\n```"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":"grep -r needle"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120,"cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}},"stopReason":"toolUse","timestamp":1765233667000,"id":"a1","parentId":"u1"}"#,
    r#"{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"grep: permission denied"}],"isError":true,"timestamp":1765233668000,"id":"r1","parentId":"a1"}"#,
    r#"{"role":"assistant","content":[{"type":"text","text":"It failed."}],"api":"openai-responses","provider":"mystery","model":"unpriced-model-x","usage":{"input":50,"output":5,"cacheRead":10,"cacheWrite":0,"totalTokens":65},"stopReason":"stop","timestamp":1765233669000,"id":"a2","parentId":"r1"}"#,
    r#"{"role":"user","content":"Try another way","timestamp":1765233670000,"id":"u2","parentId":"a2"}"#,
    r#"{"role":"assistant","content":[{"type":"text","text":"Second way."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":30,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":37},"stopReason":"stop","timestamp":1765233671000,"id":"a3","parentId":"u2"}"#,
    r#"{"role":"extension","kind":"label","data":{"targetId":"u1","label":"the start"},"id":"l1","parentId":"a3"}"#,
    r#"{"role":"user","content":"Give up instead","timestamp":1765233672000,"id":"u3","parentId":"a2"}"#,
    r#"{"role":"compactionSummary","summary":"We looked for a needle.","tokensBefore":500,"firstKeptId":"a2","timestamp":1765233673000,"id":"k1","parentId":"u3"}"#,
    r#"{"role":"notice","text":"a note for people","id":"n1","parentId":"k1"}"#,
    r#"{"role":"assistant","content":[{"type":"text","text":"Given up."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12},"stopReason":"stop","timestamp":1765233674000,"id":"a4","parentId":"n1"}"#,
];

/// Exports `file` in `dir` to `page.html` with `extra` arguments; its URL.
pub(crate) fn export(dir: &Path, file: &str, extra: &[&str]) -> String {
    let mut args = vec!["export", file, "--html", "-o", "page.html"];
    args.extend_from_slice(extra);
    let run = agentmsg_in(dir, &args);
    assert_eq!(run.code, 0, "{run:?}");
    format!("file://{}", dir.join("page.html").display())
}

/// How many messages `agentmsg context` prints at `leaf`.
fn context_len(dir: &Path, file: &str, leaf: Option<&str>) -> u64 {
    let mut args = vec!["context", file];
    if let Some(leaf) = leaf {
        args.extend(["--leaf", leaf]);
    }
    let run = agentmsg_in(dir, &args);
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout.lines().count() as u64
}

/// The messages the page shows as sent: the sum over the rendered entries
/// the model saw, and the page's own count.
fn rendered_context(b: &mut Browser) -> (u64, u64, String) {
    let rendered = b.eval(
        "Array.from(document.querySelectorAll('article.entry.ctx')).reduce((n, a) => n + Number(a.getAttribute('data-s')), 0)",
    );
    let counted =
        b.eval("Number(document.getElementById('am-ctxcount').getAttribute('data-count'))");
    let leaf = b.eval("document.getElementById('am-leafinfo').getAttribute('data-leaf')");
    (
        rendered.as_u64().unwrap(),
        counted.as_u64().unwrap(),
        leaf.as_str().unwrap().to_owned(),
    )
}

#[test]
fn the_page_shows_what_the_model_saw_and_switches_branches() {
    let Some(chromium) = chromium_or_skip("export --html in a browser") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(dir.path(), "s.jsonl", BRANCHED);
    let url = export(dir.path(), "s.jsonl", &[]);
    let mut b = Browser::start(&chromium, 1000, 900);
    b.open(&url);

    let (rendered, counted, leaf) = rendered_context(&mut b);
    assert_eq!(leaf, "a4");
    let expected = context_len(dir.path(), "s.jsonl", None);
    assert_eq!(expected, 4, "summary, a2, u3, a4");
    assert_eq!((rendered, counted), (expected, expected));
    // Everything on the path is rendered; what the model did not see is
    // marked so (and dimmed by the toggle).
    let on_path = b.eval("document.querySelectorAll('article.entry').length");
    assert_eq!(on_path, 8, "u1 a1 r1 a2 u3 k1 n1 a4");
    b.eval("document.getElementById('am-ctx').click()");
    let dimmed = b.eval("getComputedStyle(document.querySelector('article.entry.out')).opacity");
    assert!(
        dimmed.as_str().unwrap().parse::<f64>().unwrap() < 1.0,
        "{dimmed}"
    );
    // The tool result sits beside its call, marked as an error.
    let beside = b.eval(
        "document.querySelector('.call[data-call=\"c1\"] .slot article.entry.error') !== null",
    );
    assert_eq!(beside, true);
    // The shell call's result says how it ended and how long it took.
    assert_eq!(
        b.eval("document.querySelector('article.entry[data-entry-id=r1] .resulthead .outcome').textContent"),
        "failed · 1.0 s"
    );
    // The fork at a2 names each branch by its first message.
    assert_eq!(
        b.eval("Array.from(document.querySelectorAll('.branches button.branch')).map(b => b.textContent)"),
        serde_json::json!(["1. user: Try another way", "2. user: Give up instead"])
    );
    // An unpriced reply's cost is unknown, never zero.
    let unknown = b.eval("document.body.textContent.includes('cost unknown')");
    assert_eq!(unknown, true);
    // The chart: one bar per reply on the path (a1, a2, a4), a2 marked
    // unknown.
    let chart = "Array.from(document.querySelectorAll('#am-chart svg g title')).map(t => t.textContent).join(' | ')";
    let bars = b.eval(chart);
    let bars = bars.as_str().unwrap();
    assert_eq!(bars.matches("reply ").count(), 3, "{bars}");
    assert!(
        bars.contains("reply 2: 50 in, 5 out, 10 cache read, 0 cache write; cost unknown"),
        "{bars}"
    );
    assert!(bars.contains("reply 3: 10 in, 2 out"), "{bars}");
    assert_eq!(
        b.eval("document.querySelectorAll('#am-chart rect.t-unknown').length"),
        1
    );

    // The other branch at a2: its leaf, and what the model saw there.
    b.eval("document.querySelector('.branches button.branch:not(.on)').click()");
    let (rendered, counted, leaf) = rendered_context(&mut b);
    assert_eq!(leaf, "l1", "the last entry of the branch through u2");
    let expected = context_len(dir.path(), "s.jsonl", Some("l1"));
    assert_eq!(expected, 6, "u1 a1 r1 a2 u2 a3");
    assert_eq!((rendered, counted), (expected, expected));
    let texts = b.eval("document.getElementById('am-main').textContent");
    assert!(texts.as_str().unwrap().contains("Second way."));
    // The chart is redrawn for this branch: its third reply is a3.
    let bars = b.eval(chart);
    let bars = bars.as_str().unwrap();
    assert_eq!(bars.matches("reply ").count(), 3, "{bars}");
    assert!(bars.contains("reply 3: 30 in, 7 out"), "{bars}");
    assert!(!texts.as_str().unwrap().contains("Given up."));
    assert!(texts.as_str().unwrap().contains("the start"), "the label");

    // Thinking is folded, and opens.
    assert_eq!(
        b.eval("document.querySelector('details.thinking').open"),
        false
    );
    b.eval("document.querySelector('details.thinking > summary').click()");
    assert_eq!(
        b.eval("document.querySelector('details.thinking').open"),
        true
    );
    assert_eq!(
        b.eval("document.querySelector('details.thinking strong').textContent"),
        "haystacks",
        "thinking is Markdown too"
    );

    // Search finds a known string; the next tool error is r1.
    b.eval("document.getElementById('am-q').value = 'NEEDLE-42'; document.getElementById('am-find').click()");
    assert_eq!(
        b.eval("document.querySelector('article.hit').getAttribute('data-entry-id')"),
        "u1"
    );
    b.eval("document.getElementById('am-err').click()");
    assert_eq!(
        b.eval("document.querySelector('article.hit').getAttribute('data-entry-id')"),
        "r1"
    );

    // A permalink to an entry of the other branch opens that branch.
    b.open(&format!("{url}#k1"));
    assert_eq!(
        b.eval("document.querySelector('article.hit').getAttribute('data-entry-id')"),
        "k1"
    );
    assert_eq!(rendered_context(&mut b).2, "a4");
    // Search covers every branch: a reply on the branch left behind is
    // listed, marked as elsewhere, and opened on its branch.
    b.eval("document.getElementById('am-q').value = 'second way'; document.getElementById('am-find').click()");
    assert_eq!(
        b.eval("Array.from(document.querySelectorAll('#am-hits li.offpath a')).map(a => a.textContent)"),
        serde_json::json!(["assistant #a3"])
    );
    assert_eq!(
        b.eval("document.querySelector('article.hit').getAttribute('data-entry-id')"),
        "a3"
    );
    assert_eq!(rendered_context(&mut b).2, "l1");
    // Filters: only the user messages, then only what failed.
    b.eval("(() => { const f = document.getElementById('am-filter'); f.value = 'user'; f.dispatchEvent(new Event('change')); })()");
    let shown = "Array.from(document.querySelectorAll('#am-main article.entry')).filter(a => a.getClientRects().length).map(a => a.getAttribute('data-entry-id'))";
    assert_eq!(b.eval(shown), serde_json::json!(["u1", "u2"]));
    b.eval("(() => { const f = document.getElementById('am-filter'); f.value = 'errors'; f.dispatchEvent(new Event('change')); })()");
    assert_eq!(
        b.eval(shown),
        serde_json::json!(["a1", "r1"]),
        "r1 failed, inside a1's call"
    );
    b.eval("(() => { const f = document.getElementById('am-filter'); f.value = ''; f.dispatchEvent(new Event('change')); })()");
    // Collapse all leaves each entry's header; expand all opens every fold.
    b.eval("document.getElementById('am-collapse').click()");
    assert_eq!(
        b.eval("getComputedStyle(document.querySelector('article.entry[data-entry-id=u1] .md')).display"),
        "none"
    );
    // A permalink opens its entry out of a collapsed call.
    b.eval("history.replaceState(null, '', '#r1'); window.dispatchEvent(new HashChangeEvent('hashchange'))");
    assert_eq!(
        b.eval("(() => { const a = document.querySelector('article.hit'); return a.getClientRects().length ? a.getAttribute('data-entry-id') : null; })()"),
        "r1"
    );
    b.eval("document.getElementById('am-expand').click()");
    assert_eq!(
        b.eval("document.querySelector('details.thinking').open"),
        true
    );
    // Keys: j marks the next entry.
    b.eval("document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'j', bubbles: true})); document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'j', bubbles: true}))");
    assert_eq!(
        b.eval("document.querySelector('article.cursor').getAttribute('data-entry-id')"),
        "a1"
    );
    // The outline lists the branches by their first message, the label and
    // the compaction, each a link.
    b.eval("document.getElementById('am-outline').open = true; document.getElementById('am-outline').dispatchEvent(new Event('toggle'))");
    let outline = b.eval("Array.from(document.querySelectorAll('#am-outline li a')).map(a => a.textContent + ' ' + a.getAttribute('href'))");
    let outline = outline.to_string();
    for item in [
        "start: Find the needle-42 please #u1",
        "branch 1 of 2: Try another way #u2",
        "branch 2 of 2: Give up instead #u3",
        "compaction: We looked for a needle. #k1",
        "label: the start #u1",
    ] {
        assert!(outline.contains(item), "{item} not in {outline}");
    }
    assert!(b.requests_beyond_the_file().is_empty());
}

#[test]
fn a_long_session_is_one_scroll_that_search_moves_through() {
    let Some(chromium) = chromium_or_skip("export --html in a browser") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..2500)
        .map(|i| {
            let parent = if i == 0 { "null".to_owned() } else { format!("\"e{}\"", i - 1) };
            format!(r#"{{"role":"user","content":"message number {i}","timestamp":{},"id":"e{i}","parentId":{parent}}}"#, 1765233665000_u64 + i)
        })
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    common::write_lines(dir.path(), "long.jsonl", &lines);
    let url = export(dir.path(), "long.jsonl", &[]);
    let mut b = Browser::start(&chromium, 1000, 900);
    b.open(&url);
    // The first step of the window.
    assert_eq!(
        b.eval("document.querySelectorAll('article.entry').length"),
        500
    );
    let (_, counted, leaf) = rendered_context(&mut b);
    assert_eq!((counted, leaf.as_str()), (2500, "e2499"));
    let at = "document.getElementById('am-where').textContent";
    let first = b.eval(at);
    assert!(
        first.as_str().unwrap().starts_with("entries 1–")
            && first.as_str().unwrap().ends_with(" of 2500"),
        "{first}"
    );
    b.eval("document.getElementById('am-q').value = 'message number 2222'; document.getElementById('am-find').click()");
    assert_eq!(
        b.eval("document.querySelector('article.hit').getAttribute('data-entry-id')"),
        "e2222"
    );
    // The window is centred on the hit, which is in view.
    assert_eq!(
        b.eval("document.querySelectorAll('article.entry').length"),
        500
    );
    let shown = b.eval(at);
    let shown = shown.as_str().unwrap();
    let (from, to) = shown["entries ".len()..shown.len() - " of 2500".len()]
        .split_once('–')
        .unwrap();
    let (from, to): (u64, u64) = (from.parse().unwrap(), to.parse().unwrap());
    assert!(from <= 2223 && 2223 <= to, "{shown}");
    // The button moves a hundred entries on.
    b.eval("document.getElementById('am-next').click()");
    let on = b.eval(at);
    assert!(
        on.as_str()
            .unwrap()
            .starts_with(&format!("entries {} –", from + 100).replace(" –", "–")),
        "{on} after {shown}"
    );
}

/// A file is read twice and never held; standard input is read whole: the
/// page is the same, and so is what is said of the file.
#[test]
fn a_file_streamed_gives_the_page_of_the_session_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = BRANCHED.to_vec();
    lines.push("not json");
    common::write_lines(dir.path(), "s.jsonl", &lines);
    common::write_lines(dir.path(), "claude.jsonl", CLAUDE_LOG);
    common::write_lines(dir.path(), "codex.jsonl", CODEX_ROLLOUT);
    for (file, leaf) in [
        ("s.jsonl", None),
        ("s.jsonl", Some("l1")),
        ("claude.jsonl", None),
        ("codex.jsonl", None),
    ] {
        let mut args = vec!["export", file, "--html"];
        args.extend(leaf.iter().flat_map(|l| ["--leaf", *l]));
        let streamed = agentmsg_in(dir.path(), &args);
        assert_eq!(streamed.code, 0, "{streamed:?}");
        args[1] = "-";
        let bytes = std::fs::read(dir.path().join(file)).unwrap();
        let whole = agentmsg_stdin(dir.path(), &args, &bytes);
        assert_eq!(whole.code, 0, "{whole:?}");
        assert!(
            streamed.stdout == whole.stdout,
            "{file} at {leaf:?}: the pages differ"
        );
        assert_eq!(
            streamed.stderr.replace(file, "-"),
            whole.stderr.replace("<stdin>", "-"),
            "{file}"
        );
    }
    let run = agentmsg_in(
        dir.path(),
        &["export", "s.jsonl", "--html", "--leaf", "nobody"],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no entry has the id nobody"), "{run:?}");
}

/// Everything a transcript may hold to make a page run code or fetch.
fn xss_corpus() -> Vec<String> {
    use base64::Engine as _;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let png = b64(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\0\x05\0\x01\xff\x89\x99=\x1d\0\0\0\0IEND\xaeB`\x82");
    let html = b64(b"<html><script>window.__xss='data'</script></html>");
    let svg = b64(b"<svg xmlns='http://www.w3.org/2000/svg' onload='window.__xss=1'><script>window.__xss='svg'</script></svg>");
    let text = "<script>window.__xss='script'</script> <img src=x onerror=\"window.__xss='onerror'\"> \
<iframe src=\"https://example.com/\"></iframe> [click](javascript:window.__xss='link') \
[data](data:text/html,<script>window.__xss=1</script>) ![t](https://example.com/track.png) \
</script><script>window.__xss='close'</script> <!-- \u{2028}\u{2029} <a href=\"javascript:window.__xss=1\">a</a> \
<style>body{background:url(https://example.com/bg)}</style>";
    let user = serde_json::json!({
        "role": "user", "id": "\"><img src=x onerror=window.__xss='id'>", "parentId": null,
        "content": [
            {"type": "text", "text": text},
            {"type": "image", "data": png, "mimeType": "image/png\" onerror=\"window.__xss='mime'"},
            {"type": "image", "data": html, "mimeType": "image/png"},
            {"type": "image", "data": html, "mimeType": "text/html"},
            {"type": "image", "data": svg, "mimeType": "image/svg+xml"},
            {"type": "image", "url": "javascript:window.__xss='imgurl'"},
            {"type": "image", "url": "https://example.com/remote.png"},
            {"type": "document", "url": "javascript:window.__xss='doc'", "title": "<b onmouseover=window.__xss=1>t</b>"},
            {"type": "audio", "data": b64(b"ID3\x04"), "mimeType": "audio/mpeg\"><script>window.__xss='audio'</script>"}
        ],
        "timestamp": 1765233665000_u64
    });
    let assistant = serde_json::json!({
        "role": "assistant", "id": "javascript:window.__xss='perma'",
        "content": [
            {"type": "thinking", "thinking": "<script>window.__xss='thinking'</script>"},
            {"type": "text", "text": "ok", "citations": [{"type": "web_search_result_location", "url": "javascript:window.__xss='cite'", "title": "<img src=x onerror=window.__xss=1>", "cited_text": "</script>"}]},
            {"type": "toolCall", "id": "c1\"><script>window.__xss='callid'</script>", "name": "<svg onload=window.__xss='name'>", "arguments": {"x": "</script><script>window.__xss='args'</script>"}},
            {"type": "providerBlock", "api": "anthropic-messages", "block": {"type": "web_search_tool_result", "content": [{"url": "https://example.com/<script>", "title": "<script>window.__xss='provider'</script>"}]}}
        ],
        "api": "<script>", "provider": "<img src=x onerror=window.__xss='provider'>", "model": "</script>",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "error", "errorMessage": "<script>window.__xss='error'</script>",
        "timestamp": 1765233666000_u64
    });
    let result = serde_json::json!({
        "role": "toolResult", "toolCallId": "c1\"><script>window.__xss='callid'</script>", "toolName": "<b>",
        "content": [{"type": "text", "text": "</script><script>window.__xss='result'</script>"}],
        "isError": true, "details": {"html": "<script>window.__xss='details'</script>"},
        "timestamp": 1765233667000_u64
    });
    let custom = serde_json::json!({"role": "x<script>window.__xss='kind'</script>", "a": "</script><script>window.__xss='custom'</script>"});
    let label = serde_json::json!({"role": "extension", "kind": "label", "data": {"targetId": "javascript:window.__xss='perma'", "label": "<img src=x onerror=window.__xss='label'>"}});
    let compaction = serde_json::json!({"role": "compactionSummary", "summary": "<script>window.__xss='summary'</script>", "tokensBefore": 1, "firstKeptId": "\"><script>window.__xss='kept'</script>"});
    [user, assistant, result, custom, label, compaction]
        .iter()
        .map(|v| v.to_string())
        .collect()
}

#[test]
fn nothing_in_a_transcript_runs_or_fetches_in_the_page() {
    let Some(chromium) = chromium_or_skip("export --html in a browser") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let lines = xss_corpus();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    common::write_lines(dir.path(), "xss.jsonl", &lines);
    let url = export(dir.path(), "xss.jsonl", &[]);
    let mut b = Browser::start(&chromium, 1000, 900);
    b.open(&url);
    // Open every fold and hover nothing: what is there is all there is.
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true); document.querySelectorAll('.branches button').forEach(x => x.click())");
    assert_eq!(b.eval("typeof window.__xss"), "undefined");
    assert_eq!(b.requests_beyond_the_file(), Vec::<String>::new());
    // Our scripts only: the tree and the page's script (the entries' chunk
    // is let go once the script has read it).
    assert_eq!(b.eval("document.scripts.length"), 2);
    assert_eq!(
        b.eval("Array.from(document.querySelectorAll('*')).filter(e => Array.from(e.attributes).some(a => a.name.startsWith('on'))).length"),
        0
    );
    assert_eq!(
        b.eval("Array.from(document.querySelectorAll('[href],[src]')).map(e => e.getAttribute('href') || e.getAttribute('src')).filter(u => !/^(https?:|#|data:image\\/png;base64,)/.test(u))"),
        serde_json::json!([])
    );
    assert_eq!(
        b.eval("document.querySelectorAll('img').length"),
        1,
        "only the real PNG"
    );
    assert_eq!(b.eval("document.querySelectorAll('iframe,style:not(head style),object,embed,svg script').length"), 0);
    // The payloads are shown as text.
    let text = b.eval("document.body.textContent");
    let text = text.as_str().unwrap();
    for shown in [
        "<script>window.__xss='script'</script>",
        "</script><script>window.__xss='result'</script>",
        "x<script>window.__xss='kind'</script>",
    ] {
        assert!(text.contains(shown), "{shown} not shown as text");
    }
    // The permalink of an entry whose id is a payload goes nowhere.
    b.open(&format!("{url}#javascript%3Awindow.__xss%3D'perma'"));
    assert_eq!(b.eval("typeof window.__xss"), "undefined");
    assert_eq!(b.requests_beyond_the_file(), Vec::<String>::new());
}

const CLAUDE_LOG: &[&str] = &[
    r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"Add a `--verbose` flag to the CLI and test it."},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
    r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"thinking","thinking":"The flag belongs in `Cli`; clap derives it.","signature":"SIG"}],"stop_reason":null,"usage":{"input_tokens":1200,"cache_read_input_tokens":9000,"output_tokens":40}},"uuid":"a1","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"src/main.rs"}}],"stop_reason":"tool_use","usage":{"input_tokens":1200,"cache_read_input_tokens":9000,"output_tokens":80}},"uuid":"a2","timestamp":"2026-01-01T00:00:04.000Z"}"#,
    r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"use clap::Parser;\n\n#[derive(Parser)]\nstruct Cli {\n    path: String,\n}"}]},"uuid":"r1","toolUseResult":{"success":true},"sourceToolAssistantUUID":"a2","timestamp":"2026-01-01T00:00:05.000Z"}"#,
    r#"{"parentUuid":"r1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cargo test"}}],"stop_reason":"tool_use","usage":{"input_tokens":300,"cache_read_input_tokens":10200,"output_tokens":120}},"uuid":"a3","timestamp":"2026-01-01T00:00:09.000Z"}"#,
    r#"{"parentUuid":"a3","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t2","type":"tool_result","content":"error[E0425]: cannot find value `verbose`","is_error":true}]},"uuid":"r2","toolUseResult":{"success":false},"sourceToolAssistantUUID":"a3","timestamp":"2026-01-01T00:00:20.000Z"}"#,
    r#"{"parentUuid":"r2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"The test failed because the field was missing. Added it:\n\n```rust\n#[arg(long)]\nverbose: bool,\n```\n\nAll **12 tests** pass now."}],"stop_reason":"end_turn","usage":{"input_tokens":200,"cache_read_input_tokens":10500,"output_tokens":90}},"uuid":"a4","timestamp":"2026-01-01T00:00:31.000Z"}"#,
];

const CODEX_ROLLOUT: &[&str] = &[
    r#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"s","cwd":"/w","model_provider":"openai"}}"#,
    r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Which files are in this repository?"}]}}"#,
    r#"{"timestamp":"2026-01-01T00:00:01.500Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.3-codex"}}"#,
    r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Listing them."}],"phase":"commentary"}}"#,
    r#"{"timestamp":"2026-01-01T00:00:02.100Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"}}"#,
    r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"Cargo.toml\nREADME.md\nsrc"}}"#,
    r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Three entries: `Cargo.toml`, `README.md` and the `src` folder. I will add a line to the README."}],"phase":"commentary"}}"#,
    r#"{"timestamp":"2026-01-01T00:00:04.500Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Update File: README.md\n@@\n # demo\n-A demo.\n+A demo of the export.\n+\n+Run `cargo run`.\n*** End Patch","call_id":"call_2"}}"#,
    r#"{"timestamp":"2026-01-01T00:00:05.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_2","output":"Success. Updated the following files:\nM README.md"}}"#,
    r#"{"timestamp":"2026-01-01T00:00:06.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done: the README says how to run it."}],"phase":"final_answer"}}"#,
];

/// Takes screenshots of a real pi session and Claude Code log (a Codex
/// rollout made here: those of the conformance data are cut down to
/// placeholders), at 900 px and at 400 px; with
/// `AGENTMSG_UPDATE_SCREENSHOTS=1` writes them to `docs/`.
#[test]
fn screenshots_of_each_format() {
    let Some(chromium) = chromium_or_skip("export --html screenshots") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(dir.path(), "claude.jsonl", CLAUDE_LOG);
    common::write_lines(dir.path(), "codex.jsonl", CODEX_ROLLOUT);
    let mut files = vec![
        ("claude-code", dir.path().join("claude.jsonl")),
        ("codex", dir.path().join("codex.jsonl")),
    ];
    if let Some(conformance) = common::conformance_or_skip(Some("transcripts")) {
        let real = |path: &str, name: &str| {
            let copy = dir.path().join(name);
            std::fs::copy(conformance.join("transcripts").join(path), &copy).unwrap();
            copy
        };
        files[0].1 = real(
            "claude-code/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
            "claude-real.jsonl",
        );
        files.push(("pi", real("pi/before-compaction.jsonl", "pi.jsonl")));
    }
    for (width, suffix) in [(900, ""), (400, "-400")] {
        let mut b = Browser::start(&chromium, width, 1000);
        for (name, file) in &files {
            let page = dir.path().join(format!("{name}.html"));
            let run = agentmsg_in(
                dir.path(),
                &[
                    "export",
                    file.to_str().unwrap(),
                    "--html",
                    "-o",
                    page.to_str().unwrap(),
                ],
            );
            assert_eq!(run.code, 0, "{run:?}");
            b.open(&format!("file://{}", page.display()));
            let messages = b.eval("document.querySelectorAll('article.entry').length");
            assert!(messages.as_u64().unwrap() >= 5, "{name}: {messages}");
            assert!(b.requests_beyond_the_file().is_empty(), "{name}");
            // Past the totals and the chart, to the first tool call.
            b.eval("(() => { const c = document.querySelector('.call'); if (c) c.closest('article').scrollIntoView(); })()");
            let png = b.screenshot();
            assert!(png.starts_with(b"\x89PNG"), "{name}");
            if std::env::var_os("AGENTMSG_UPDATE_SCREENSHOTS").is_some() {
                let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
                std::fs::create_dir_all(&docs).unwrap();
                std::fs::write(docs.join(format!("export-{name}{suffix}.png")), png).unwrap();
            }
        }
    }
}

/// How usable the page of a big session is: run by
/// `benches/export_memory.sh --browser` on the page it exported
/// (`AGENTMSG_BIG_PAGE`). Prints the time the page takes to load and run its
/// script, the time of a jump of 100 entries (`]`), of the window rebuilt
/// far away and grown by a step as the reader scrolls, of a search that reads every entry of
/// the branch, of opening another branch by permalink, and the script's heap.
#[test]
#[ignore = "a measurement: benches/export_memory.sh --browser runs it on a big page"]
fn a_big_page_stays_usable() {
    let Some(page) = std::env::var_os("AGENTMSG_BIG_PAGE") else {
        eprintln!("AGENTMSG_BIG_PAGE names no page: nothing measured");
        return;
    };
    let Some(chromium) = chromium_or_skip("the big page's measurement") else {
        return;
    };
    let page = Path::new(&page);
    let mut b = Browser::start(&chromium, 1200, 900);
    let start = std::time::Instant::now();
    b.open(&format!("file://{}", page.display()));
    let ready = start.elapsed();
    let loaded = b.eval("Math.round(performance.getEntriesByType('navigation')[0].loadEventEnd)");
    let timed = |b: &mut Browser, action: &str| -> f64 {
        let ms = b.eval(&format!(
            "(() => {{ const t = performance.now(); {action}; void document.body.offsetHeight; return performance.now() - t; }})()"
        ));
        ms.as_f64().unwrap()
    };
    let turn = timed(&mut b, "document.getElementById('am-next').click()");
    // The window rebuilt around an entry half way down the path, and grown
    // by a step as the reader scrolls to its end (the time until the page
    // says it grew, frames and this test's polling included).
    let half = b.eval(
        "(() => { const t = JSON.parse(document.getElementById('am-tree').textContent); \
         return encodeURIComponent(t.ids[t.ids.length >> 1]); })()",
    );
    let far = timed(
        &mut b,
        &format!(
            "history.replaceState(null, '', '#{}'); window.dispatchEvent(new HashChangeEvent('hashchange'))",
            half.as_str().unwrap()
        ),
    );
    let mut grows = Vec::new();
    for _ in 0..5 {
        let hi = b.eval("document.getElementById('am-where').getAttribute('data-hi')");
        let start = std::time::Instant::now();
        b.eval("window.scrollTo(0, document.documentElement.scrollHeight)");
        while b.eval("document.getElementById('am-where').getAttribute('data-hi')") == hi {
            assert!(start.elapsed().as_secs() < 30, "the window did not grow");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        grows.push(start.elapsed().as_millis());
    }
    grows.sort_unstable();
    let search = timed(
        &mut b,
        "document.getElementById('am-q').value = 'no entry holds this'; document.getElementById('am-find').click()",
    );
    let branch = timed(
        &mut b,
        "const onPath = new Set(); { const t = JSON.parse(document.getElementById('am-tree').textContent); \
         let at = t.leaf; while (at >= 0) { onPath.add(at); at = t.pd[at] === 0 ? -1 : at - t.pd[at]; } \
         const off = t.ids.findIndex((id, i) => !onPath.has(i)); \
         if (off >= 0) { history.replaceState(null, '', '#' + encodeURIComponent(t.ids[off])); window.dispatchEvent(new HashChangeEvent('hashchange')); } }",
    );
    let shown = b.eval("document.querySelectorAll('article.entry').length");
    let heap = b
        .eval("Math.round((performance.memory ? performance.memory.usedJSHeapSize : 0) / 1048576)");
    let size = std::fs::metadata(page).map_or(0, |m| m.len()) / 1_048_576;
    println!(
        "page {size} MB: usable in {:.1} s (load event at {loaded} ms); 100 entries on {turn:.0} ms, \
         the window rebuilt half way down {far:.0} ms, grown by a step as the reader scrolls {} ms (median of 5), \
         search of the whole branch {search:.0} ms, another branch by permalink {branch:.0} ms; \
         {shown} entries shown; script heap {heap} MB",
        ready.as_secs_f64(),
        grows[2]
    );
    assert!(shown.as_u64().unwrap() > 0);
}
