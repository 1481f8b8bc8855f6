//! Reads of files in the languages the page's tokenizer knows, highlighted
//! in headless Chromium: each read's code has its keywords, strings and
//! comments marked, by the file's extension.

use crate::browser::{chromium_or_skip, Browser};

/// A pi session whose assistant reads each `(path, content)` in turn.
fn session(files: &[(&str, &str)]) -> String {
    let mut out = String::from(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#,
    );
    out.push('\n');
    let mut parent = "null".to_owned();
    for (n, (path, content)) in files.iter().enumerate() {
        let call = serde_json::json!({
            "role": "assistant",
            "content": [{"type": "toolCall", "id": format!("c{n}"), "name": "read", "arguments": {"path": path}}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "m",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "toolUse", "timestamp": n
        });
        let result = serde_json::json!({
            "role": "toolResult", "toolCallId": format!("c{n}"), "toolName": "read",
            "content": [{"type": "text", "text": content}], "isError": false, "timestamp": n
        });
        for (k, message) in [call, result].into_iter().enumerate() {
            let id = format!("e{n}-{k}");
            let line = serde_json::json!({
                "type": "message", "id": id,
                "parentId": serde_json::from_str::<serde_json::Value>(&parent).unwrap(),
                "timestamp": "2025-01-01T00:00:00.000Z", "message": message
            });
            out.push_str(&line.to_string());
            out.push('\n');
            parent = format!("\"{id}\"");
        }
    }
    out
}

/// What a read's code must hold: (token class, token text).
type Marks = &'static [(&'static str, &'static str)];

#[test]
fn reads_in_markup_lisp_elixir_ocaml_and_powershell_are_highlighted() {
    let Some(chromium) = chromium_or_skip("export --html highlighting") else {
        return;
    };
    // Each file, and what the page must mark in it: (class, text).
    let cases: &[(&str, &str, Marks)] = &[
        (
            "index.html",
            "<!-- top -->\n<div class=\"a\">text</div>\n",
            &[
                ("cm", "<!-- top -->"),
                ("kw", "<div"),
                ("st", "\"a\""),
                ("kw", "</div"),
            ],
        ),
        (
            "core.clj",
            "(defn f [x] ; why\n  (if x \"s\" 2))\n",
            &[
                ("kw", "defn"),
                ("cm", "; why"),
                ("st", "\"s\""),
                ("nu", "2"),
            ],
        ),
        (
            "a.ex",
            "defmodule A do # note\n  def f, do: 1\nend\n",
            &[("kw", "defmodule"), ("cm", "# note"), ("kw", "end")],
        ),
        (
            "m.ml",
            "let rec f x = (* c *) if x then 1 else 2\n",
            &[("kw", "let"), ("cm", "(* c *)"), ("kw", "then")],
        ),
        (
            "s.ps1",
            "function F { param($x) # c\n  return 1 }\n",
            &[("kw", "function"), ("kw", "param"), ("cm", "# c")],
        ),
    ];
    let files: Vec<(&str, &str)> = cases.iter().map(|(p, c, _)| (*p, *c)).collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.jsonl"), session(&files)).unwrap();
    let url = crate::export_html::export(dir.path(), "s.jsonl", &[]);
    let mut b = Browser::start(&chromium, 1000, 900);
    b.open(&url);
    for (path, _, marks) in cases {
        let found = b.eval(&format!(
            "Array.from(document.querySelectorAll('code.hl')).filter(c => c.textContent.includes({:?}))\
             .flatMap(c => Array.from(c.querySelectorAll('span')).map(s => s.className + ' ' + s.textContent))",
            files.iter().find(|f| f.0 == *path).unwrap().1.lines().next().unwrap()
        ));
        let found: Vec<String> = serde_json::from_value(found).unwrap();
        for (class, text) in *marks {
            let want = format!("hl-{class} {text}");
            assert!(found.contains(&want), "{path}: {want:?} not in {found:?}");
        }
    }
    assert!(b.requests_beyond_the_file().is_empty());
}
