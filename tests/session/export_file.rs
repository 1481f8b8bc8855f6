//! The page of a session file written without holding the session
//! (`export::FileExport`, what `agentmsg export --html` runs) is the page
//! `export::html` makes of the same file opened whole, byte for byte: every
//! entry, the tree, the totals, the labels and what the model saw at each
//! leaf; and the file's warnings and errors are the session's.

use std::path::{Path, PathBuf};

use agentmsg::export::{self, ExportError, FileExport, HtmlOptions};
use agentmsg::{Message, Session};

/// The page of the file at `path`, both ways, at `leaf`, compared; and the
/// file's warnings, format and entries. Returns the page.
fn same_page(path: &Path, leaf: Option<&str>, options: &HtmlOptions) -> String {
    let session = Session::open(path).unwrap();
    let whole = export::html(&session, leaf, options).unwrap();
    let file = FileExport::open(path).unwrap();
    assert_eq!(file.warnings(), session.warnings(), "{}", path.display());
    assert_eq!(file.format(), session.format());
    assert_eq!(file.entry_count(), session.entries().len());
    let mut streamed = Vec::new();
    file.write_html(leaf, options, &mut streamed).unwrap();
    let streamed = String::from_utf8(streamed).unwrap();
    if streamed != whole {
        let at = streamed
            .bytes()
            .zip(whole.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(streamed.len().min(whole.len()));
        panic!(
            "{} at {leaf:?}: the pages differ at byte {at}:\nstreamed: {}\nwhole:    {}",
            path.display(),
            &streamed[at.saturating_sub(80)..(at + 200).min(streamed.len())],
            &whole[at.saturating_sub(80)..(at + 200).min(whole.len())],
        );
    }
    whole
}

/// [`same_page`] at the session's leaf and at every leaf with an id.
fn same_pages(path: &Path) {
    // Deflated chunks as the page carries them, then plain ones, whose
    // differences a failure can show.
    same_page(path, None, &HtmlOptions::default());
    let options = HtmlOptions::default().with_compression(false);
    same_page(path, None, &options);
    let session = Session::open(path).unwrap();
    for leaf in session.leaves() {
        if let Some(id) = leaf.id() {
            same_page(path, Some(id.as_str()), &options);
        }
    }
    // Small chunks and pages: the chunk boundaries fall between entries.
    let mut small = options.with_page_size(2);
    small.chunk_size = 3;
    same_page(path, None, &small);
}

fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const BRANCHED: &str = concat!(
    r#"{"role":"user","content":"Find the needle please","timestamp":1765233665000,"id":"u1","parentId":null}"#,
    "\n",
    r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Let me think about **haystacks**."},{"type":"text","text":"Looking with `grep`:\n\n```sh\ngrep -r needle\n```"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":"grep -r needle"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120,"cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}},"stopReason":"toolUse","timestamp":1765233667000,"id":"a1","parentId":"u1"}"#,
    "\n",
    r#"{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"grep: permission denied"}],"isError":true,"timestamp":1765233668000,"id":"r1","parentId":"a1"}"#,
    "\n",
    r#"{"role":"assistant","content":[{"type":"text","text":"It failed."}],"api":"openai-responses","provider":"mystery","model":"unpriced-model-x","usage":{"input":50,"output":5,"cacheRead":10,"cacheWrite":0,"totalTokens":65},"stopReason":"stop","timestamp":1765233669000,"id":"a2","parentId":"r1"}"#,
    "\n",
    r#"{"role":"user","content":"Try another way","timestamp":1765233670000,"id":"u2","parentId":"a2"}"#,
    "\n",
    r#"{"role":"extension","kind":"label","data":{"targetId":"u1","label":"the start"},"id":"l1","parentId":"u2"}"#,
    "\n",
    r#"{"role":"user","content":"Give up instead","timestamp":1765233672000,"id":"u3","parentId":"a2"}"#,
    "\n",
    r#"{"role":"compactionSummary","summary":"We looked for a needle.","tokensBefore":500,"firstKeptId":"a2","timestamp":1765233673000,"id":"k1","parentId":"u3"}"#,
    "\n",
    r#"{"role":"notice","text":"a note for people","id":"n1","parentId":"k1"}"#,
    "\n",
    r#"{"role":"extension","kind":"label","data":{"targetId":"u1","label":null},"id":"l2","parentId":"n1"}"#,
    "\n",
    r#"{"role":"assistant","content":[{"type":"text","text":"Given up."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12},"stopReason":"stop","timestamp":1765233674000,"id":"a4","parentId":"l2"}"#,
    "\n",
);

const PI_V3: &str = concat!(
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1735689601000}}"#,
    "\n",
    r#"{"type":"model_change","id":"a0000002","parentId":"a0000001","timestamp":"2025-01-01T00:00:02.000Z","provider":"anthropic","modelId":"claude-opus-4-5"}"#,
    "\n",
    r#"{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":3,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":4},"stopReason":"stop","timestamp":1735689603000}}"#,
    "\n",
    r#"{"type":"compaction","id":"a0000004","parentId":"a0000003","timestamp":"2025-01-01T00:00:04.000Z","summary":"said hi","firstKeptEntryId":"a0000003","tokensBefore":10}"#,
    "\n",
    r#"{"type":"branch_summary","id":"a0000005","parentId":"a0000001","timestamp":"2025-01-01T00:00:05.000Z","fromId":"a0000004","summary":"went elsewhere"}"#,
    "\n",
    r#"{"type":"custom_message","id":"a0000006","parentId":"a0000005","timestamp":"2025-01-01T00:00:06.000Z","customType":"ext","content":"an extension speaks","display":true}"#,
    "\n",
    r#"{"type":"label","id":"a0000007","parentId":"a0000006","timestamp":"2025-01-01T00:00:07.000Z","targetId":"a0000001","label":"first"}"#,
    "\n",
    r#"{"type":"session_info","id":"a0000008","parentId":"a0000007","timestamp":"2025-01-01T00:00:08.000Z","name":"A <named> session"}"#,
    "\n",
    "not json at all\n",
    r#"{"type":"message","id":"a0000009","parentId":"a0000008","timestamp":"2025-01-01T00:00:09.000Z","message":{"role":"compactionSummary","summary":"sent as user text in pi","tokensBefore":1,"timestamp":1735689609000}}"#,
    "\n",
);

use crate::import_logs::{CLAUDE, CODEX};

#[test]
fn a_file_s_page_is_the_page_of_the_session_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let user = |text: &str, id: &str, parent: &str| {
        format!(
            r#"{{"role":"user","content":"{text}","timestamp":1,"id":"{id}","parentId":{parent}}}"#
        )
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("branched.jsonl", BRANCHED.into()),
        ("pi-v3.jsonl", PI_V3.into()),
        ("claude.jsonl", CLAUDE.into()),
        ("codex.jsonl", CODEX.into()),
        ("empty.jsonl", Vec::new()),
        // A byte-order mark, CRLF endings, blank lines, no final newline.
        (
            "crlf.jsonl",
            format!(
                "\u{feff}{}\r\n\r\n  \n{}\r\n{}",
                user("one", "a", "null"),
                user("two", "b", "\"a\""),
                user("three", "c", "\"a\"")
            )
            .into(),
        ),
        // Two objects on one line, and lines without ids or parents.
        (
            "glued.jsonl",
            format!(
                "{}{}\n{{\"role\":\"user\",\"content\":\"no id\",\"timestamp\":3}}\n",
                user("one", "a", "null"),
                user("two", "b", "\"a\"")
            )
            .into(),
        ),
        // A parent after its child, and a parent nobody has.
        (
            "forward.jsonl",
            format!(
                "{}\n{}\n{}\n",
                user("child", "c", "\"p\""),
                user("parent", "p", "null"),
                user("orphan", "o", "\"nobody\"")
            )
            .into(),
        ),
        // A line that is not UTF-8, one no type reads, a lone surrogate, a
        // compaction keeping from an entry nobody has.
        (
            "odd.jsonl",
            [
                b"{\"role\":\"user\",\"content\":\"caf\xe9\",\"timestamp\":1}\n".as_slice(),
                b"{\"role\":\"mystery\",\"x\":1}\n",
                b"{\"role\":\"user\",\"content\":\"half \\ud800 a pair\",\"timestamp\":2}\n",
                b"{\"role\":\"compactionSummary\",\"summary\":\"s\",\"tokensBefore\":1,\"firstKeptId\":\"gone\",\"timestamp\":3}\n",
                b"{\"role\":\"user\",\"content\":\"a torn li",
            ]
            .concat(),
        ),
    ];
    for (name, text) in cases {
        let path = write(d, name, &text);
        same_pages(&path);
    }
}

#[test]
fn pi_s_own_session_files_give_the_same_pages() {
    let Some(dir) = crate::common::conformance_or_skip(Some("transcripts/pi")) else {
        return;
    };
    for name in ["before-compaction.jsonl", "large-session.jsonl"] {
        let path = dir.join("transcripts/pi").join(name);
        let page = same_page(&path, None, &HtmlOptions::default());
        assert!(page.contains("am-chunk"));
    }
}

/// Random trees made through the session's own API: branches, compactions,
/// branch summaries and labels, saved and exported both ways.
#[test]
fn random_trees_give_the_same_pages() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for round in 0..12 {
        let mut session = Session::new();
        let mut ids = Vec::new();
        for step in 0..40 {
            match next(10) {
                0 if !ids.is_empty() => {
                    let at: &agentmsg::MessageId = &ids[next(ids.len())];
                    session.branch(at.as_str()).unwrap();
                }
                1 if !ids.is_empty() => {
                    let at: &agentmsg::MessageId = &ids[next(ids.len())];
                    let at = at.clone();
                    ids.push(
                        session
                            .branch_with_summary(at.as_str(), format!("left {step}"))
                            .unwrap(),
                    );
                }
                2 if !ids.is_empty() => {
                    let kept = ids[next(ids.len())].clone();
                    if session
                        .path(None)
                        .unwrap()
                        .iter()
                        .any(|e| e.id() == Some(&kept))
                    {
                        ids.push(
                            session
                                .compact(format!("summary {step}"), kept.as_str(), 100)
                                .unwrap(),
                        );
                    }
                }
                3 if !ids.is_empty() => {
                    let target = ids[next(ids.len())].clone();
                    session
                        .label(target.as_str(), Some(&format!("label {step}")))
                        .unwrap();
                }
                4 => {
                    let reply = agentmsg::AssistantMessage::new([agentmsg::TextContent::new(
                        format!("reply {step}"),
                    )])
                    .with_usage(agentmsg::Usage::new(10 + step, 2));
                    ids.push(session.append(Message::Assistant(reply).into()).unwrap());
                }
                _ => ids.push(
                    session
                        .append(Message::user(format!("message {step} of {round}")).into())
                        .unwrap(),
                ),
            }
        }
        let path = dir.path().join(format!("tree-{round}.jsonl"));
        session.save(&path).unwrap();
        same_pages(&path);
    }
}

#[test]
fn a_file_that_does_not_open_fails_as_the_session_does() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "duplicate.jsonl",
            "{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1,\"id\":\"x\"}\n{\"role\":\"user\",\"content\":\"b\",\"timestamp\":1,\"id\":\"x\"}\n",
        ),
        (
            "cycle.jsonl",
            "{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1,\"id\":\"a\",\"parentId\":\"b\"}\n{\"role\":\"user\",\"content\":\"b\",\"timestamp\":1,\"id\":\"b\",\"parentId\":\"a\"}\n",
        ),
    ] {
        let path = write(dir.path(), name, text.as_bytes());
        let whole = Session::open(&path).unwrap_err();
        let file = FileExport::open(&path).unwrap_err();
        assert_eq!(file.to_string(), whole.to_string());
    }
    let missing = FileExport::open(dir.path().join("none.jsonl")).unwrap_err();
    assert_eq!(
        missing.to_string(),
        Session::open(dir.path().join("none.jsonl"))
            .unwrap_err()
            .to_string()
    );
    // A leaf nobody has fails before anything is written.
    let path = write(dir.path(), "s.jsonl", BRANCHED.as_bytes());
    let file = FileExport::open(&path).unwrap();
    assert!(!file.has_entry("nobody"));
    let mut out = Vec::new();
    let e = file
        .write_html(Some("nobody"), &HtmlOptions::default(), &mut out)
        .unwrap_err();
    assert!(matches!(e, ExportError::Session(_)), "{e}");
    assert!(out.is_empty());
}

#[test]
fn a_file_rewritten_between_the_two_readings_is_refused_and_a_line_appended_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.jsonl", BRANCHED.as_bytes());
    let before = export::html(
        &Session::open(&path).unwrap(),
        None,
        &HtmlOptions::default(),
    )
    .unwrap();
    let file = FileExport::open(&path).unwrap();
    // An agent appends a line: the page is the one of what was read first.
    let mut grown = BRANCHED.to_owned();
    grown.push_str(
        r#"{"role":"user","content":"later","timestamp":1765233675000,"id":"z1","parentId":"a4"}"#,
    );
    grown.push('\n');
    std::fs::write(&path, &grown).unwrap();
    let mut page = Vec::new();
    file.write_html(None, &HtmlOptions::default(), &mut page)
        .unwrap();
    assert_eq!(String::from_utf8(page).unwrap(), before);
    // Rewritten shorter: refused.
    let half: String = BRANCHED.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, half).unwrap();
    let e = file
        .write_html(None, &HtmlOptions::default(), std::io::sink())
        .unwrap_err();
    assert!(matches!(e, ExportError::Changed), "{e}");
}
