//! A tool call and its result drawn as what the tool does: a shell command
//! with its output, a file read or written as the file, an edit as a diff, a
//! search as its query and results; any other tool's arguments as a tree of
//! keys and values (a string that spans lines shown as its lines, never as
//! one escaped line).

use std::fmt::Write as _;

use serde_json::Value;

use super::escape::{html_string, text as html};

/// A diff's block: the page marks its lines as removed, added, context or
/// header by their first character.
const DIFF_OPEN: &str = "<pre class=\"diff\"><code data-lang=\"diff\">";

/// A patch's block: as a diff's, and a line beginning `***`, `@@`, `+++ `,
/// `--- ` or `diff ` is a header.
const PATCH_OPEN: &str = "<pre class=\"diff\"><code data-lang=\"patch\">";

/// How many lines of a block are shown before the rest folds.
const SHOWN_LINES: usize = 30;
/// Past these many lines times lines, an edit's diff is not searched for
/// common lines (what was removed is shown, then what was added).
const DIFF_CELLS: usize = 4_000_000;

/// What a tool does, known by its name (pi's, Claude Code's, Codex's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ToolKind {
    Shell,
    Read,
    Write,
    Edit,
    Patch,
    Search,
    Other,
}

impl ToolKind {
    /// The kind of the tool called `name`.
    pub fn of(name: &str) -> Self {
        match name {
            "bash" | "Bash" | "shell" | "exec_command" | "shell_command" | "local_shell"
            | "container.exec" => Self::Shell,
            "read" | "Read" | "read_file" | "view" => Self::Read,
            "write" | "Write" | "write_file" | "create_file" => Self::Write,
            "edit" | "Edit" | "MultiEdit" | "str_replace_editor" | "str_replace" => Self::Edit,
            "apply_patch" => Self::Patch,
            "grep" | "Grep" | "find" | "Glob" | "glob" | "ls" | "LS" | "list_dir" | "rg"
            | "search" | "WebSearch" | "web_search" | "ToolSearch" | "file_search" => Self::Search,
            _ => Self::Other,
        }
    }
}

/// What a result needs of its call: the tool's kind, the language of the
/// file it names, and when it was made.
#[derive(Debug, Clone)]
pub(super) struct Called {
    pub kind: ToolKind,
    pub lang: Option<String>,
    pub at: u64,
}

// The argument names each agent's tools give the same thing (pi's,
// Claude Code's, Codex's): what a known tool draws, and so leaves out of
// the keys and values shown after it.
const PATH: &[&str] = &["path", "file_path", "filePath", "notebook_path"];
const CONTENT: &[&str] = &["content", "file_text", "contents"];
const OLD: &[&str] = &["oldText", "old_string", "old_str"];
const NEW: &[&str] = &["newText", "new_string", "new_str"];
const EDITS: &[&str] = &["edits"];
const PATCH: &[&str] = &["input", "patch"];
const COMMAND: &[&str] = &["command", "cmd", "script", "action"];
const QUERY: &[&str] = &["pattern", "query", "glob", "q", "search_query"];
const PLACE: &[&str] = &["path", "cwd", "dir", "directory", "url"];

fn text<'v>(args: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// The language of a path, by its extension (or its name: `Makefile`,
/// `Dockerfile`), as the page's highlighter names it.
pub(super) fn lang_of(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let ext = match name.rsplit_once('.') {
        Some((_, ext)) if !ext.is_empty() => ext,
        _ => name,
    };
    let ext = ext.to_ascii_lowercase();
    (ext.len() <= 12 && ext.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(ext)
}

/// The command a shell tool runs: `command` (a string, or a list whose
/// `bash -lc SCRIPT` form shows as the script), `cmd`, or a local shell
/// call's `action.command`.
fn command(args: &Value) -> Option<String> {
    let list = |v: &Value| -> Option<String> {
        let words: Vec<&str> = v.as_array()?.iter().filter_map(Value::as_str).collect();
        if words.len() == 3
            && matches!(words[0], "bash" | "sh" | "zsh")
            && words[1].starts_with('-')
        {
            return Some(words[2].to_owned());
        }
        Some(
            words
                .iter()
                .map(|w| {
                    if w.is_empty()
                        || w.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c))
                    {
                        format!("'{}'", w.replace('\'', "'\\''"))
                    } else {
                        (*w).to_owned()
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
        )
    };
    match args.get("command") {
        Some(Value::String(s)) => return Some(s.clone()),
        Some(v @ Value::Array(_)) => return list(v),
        _ => {}
    }
    if let Some(cmd) = text(args, &["cmd", "script"]) {
        return Some(cmd.to_owned());
    }
    args.get("action")
        .and_then(|a| a.get("command"))
        .and_then(list)
}

/// The call `name` with `args`, drawn; what its result will need.
pub(super) fn call(out: &mut String, name: &str, args: &Value, at: u64) -> Called {
    let mut kind = ToolKind::of(name);
    // A tool named otherwise that carries a patch is drawn as one.
    if kind == ToolKind::Other && text(args, PATCH).is_some_and(is_patch) {
        kind = ToolKind::Patch;
    }
    let mut lang = text(args, PATH).and_then(lang_of);
    // The arguments drawn as what the tool does, or `None` when the call
    // lacks what its kind needs (then drawn as another tool's).
    let shown: Option<&[&[&str]]> = match kind {
        ToolKind::Shell => command(args).map(|cmd| {
            out.push_str("<pre class=\"cmd\"><code data-lang=\"sh\">");
            html(out, &cmd);
            out.push_str("</code></pre>");
            lang = None;
            &[COMMAND][..]
        }),
        ToolKind::Read => text(args, PATH).map(|p| {
            file_head(out, p);
            &[PATH][..]
        }),
        ToolKind::Write => match (text(args, PATH), text(args, CONTENT)) {
            (Some(p), Some(content)) => {
                file_head(out, p);
                block(out, content, "file", lang.as_deref());
                Some(&[PATH, CONTENT][..])
            }
            _ => None,
        },
        ToolKind::Edit => {
            let edits = edits(args);
            match text(args, PATH) {
                Some(p) if !edits.is_empty() => {
                    file_head(out, p);
                    for (old, new) in &edits {
                        diff(out, old, new);
                    }
                    Some(&[PATH, OLD, NEW, EDITS][..])
                }
                _ => None,
            }
        }
        ToolKind::Patch => text(args, PATCH).map(|patch| {
            patch_block(out, patch);
            &[PATCH][..]
        }),
        ToolKind::Search => {
            let query = text(args, QUERY);
            let place = text(args, PLACE);
            (query.is_some() || place.is_some()).then(|| {
                out.push_str("<p class=\"query\">");
                if let Some(q) = query {
                    let _ = write!(out, "<code class=\"q\">{}</code>", html_string(q));
                }
                if let Some(p) = place {
                    let _ = write!(
                        out,
                        "{}<code class=\"path\">{}</code>",
                        if query.is_some() { " in " } else { "" },
                        html_string(p)
                    );
                }
                out.push_str("</p>");
                lang = None;
                &[QUERY, PLACE][..]
            })
        }
        ToolKind::Other => None,
    };
    let shown = shown.unwrap_or_else(|| {
        kind = ToolKind::Other;
        &[]
    });
    // Whatever else the call holds (all of it for another tool).
    let rest: Vec<(&String, &Value)> = match args {
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| !shown.iter().any(|keys| keys.contains(&k.as_str())))
            .collect(),
        _ => Vec::new(),
    };
    // A known tool's other numbers and flags (a read's offset and limit, a
    // command's timeout) in one line.
    let (scalars, rest): (Vec<_>, Vec<_>) = rest.into_iter().partition(|(_, v)| {
        kind != ToolKind::Other && matches!(v, Value::Number(_) | Value::Bool(_) | Value::Null)
    });
    if !scalars.is_empty() {
        out.push_str("<p class=\"note\">");
        for (n, (k, v)) in scalars.into_iter().enumerate() {
            let _ = write!(
                out,
                "{}{} <code>{}</code>",
                if n > 0 { ", " } else { "" },
                html_string(k),
                html_string(&v.to_string())
            );
        }
        out.push_str("</p>");
    }
    if !rest.is_empty() {
        out.push_str("<dl class=\"kv\">");
        for (k, v) in rest {
            let _ = write!(out, "<dt>{}</dt><dd>", html_string(k));
            value(out, v, 0);
            out.push_str("</dd>");
        }
        out.push_str("</dl>");
    } else if !matches!(args, Value::Object(_)) {
        value(out, args, 0);
    }
    Called { kind, lang, at }
}

fn file_head(out: &mut String, path: &str) {
    let _ = write!(
        out,
        "<p class=\"file\"><code>{}</code></p>",
        html_string(path)
    );
}

fn is_patch(text: &str) -> bool {
    text.trim_start().starts_with("*** Begin Patch")
        || text.starts_with("--- ")
        || text.starts_with("diff --git")
}

/// The edits of an edit tool as (old, new) pairs.
fn edits(args: &Value) -> Vec<(String, String)> {
    let pair = |v: &Value| -> Option<(String, String)> {
        // An item of `edits` may name them `old` and `new`.
        let old = text(v, OLD).or_else(|| text(v, &["old"]))?;
        let new = text(v, NEW).or_else(|| text(v, &["new"])).unwrap_or("");
        Some((old.to_owned(), new.to_owned()))
    };
    if let Some(list) = args.get("edits").and_then(Value::as_array) {
        return list.iter().filter_map(pair).collect();
    }
    pair(args).into_iter().collect()
}

/// A value as a tree: a string as its text (its lines when it has more than
/// one), a scalar as itself, a list or an object item by item.
fn value(out: &mut String, v: &Value, depth: usize) {
    match v {
        Value::String(s) if s.contains('\n') => block(out, s, "text", None),
        Value::String(s) => {
            out.push_str("<span class=\"str\">");
            html(out, s);
            out.push_str("</span>");
        }
        Value::Array(list) if depth < 8 && !list.is_empty() => {
            out.push_str("<ol class=\"kv\">");
            for item in list {
                out.push_str("<li>");
                value(out, item, depth + 1);
                out.push_str("</li>");
            }
            out.push_str("</ol>");
        }
        Value::Object(map) if depth < 8 && !map.is_empty() => {
            out.push_str("<dl class=\"kv\">");
            for (k, v) in map {
                let _ = write!(out, "<dt>{}</dt><dd>", html_string(k));
                value(out, v, depth + 1);
                out.push_str("</dd>");
            }
            out.push_str("</dl>");
        }
        other => {
            let pretty = serde_json::to_string_pretty(other).unwrap_or_default();
            if pretty.contains('\n') {
                block(out, &pretty, "json", Some("json"));
            } else {
                out.push_str("<code>");
                html(out, &pretty);
                out.push_str("</code>");
            }
        }
    }
}

/// `text` as a block of lines (highlighted as `lang` by the page), its
/// lines past [`SHOWN_LINES`] folded under "N more lines".
pub(super) fn block(out: &mut String, text: &str, class: &str, lang: Option<&str>) {
    let open = |out: &mut String| {
        let _ = write!(out, "<pre class=\"{class}\"><code");
        if let Some(lang) = lang {
            let _ = write!(out, " data-lang=\"{}\"", html_string(lang));
        }
        out.push('>');
    };
    let cut = text
        .match_indices('\n')
        .nth(SHOWN_LINES - 1)
        .map(|(at, _)| at);
    open(out);
    match cut {
        Some(at) if text[at + 1..].contains(|c: char| !c.is_whitespace()) => {
            html(out, &text[..at]);
            out.push_str("</code></pre>");
            let rest = &text[at + 1..];
            let more = rest.trim_end_matches('\n').lines().count();
            let _ = write!(
                out,
                "<details class=\"more\"><summary>{more} more line{}</summary>",
                if more == 1 { "" } else { "s" }
            );
            open(out);
            html(out, rest);
            out.push_str("</code></pre></details>");
        }
        _ => {
            html(out, text);
            out.push_str("</code></pre>");
        }
    }
}

/// One line of a diff: its mark (`-`, `+`, ` `; none for a line written
/// with its own), then the line. The page marks each line by its first
/// character.
fn diff_line(out: &mut String, mark: Option<char>, line: &str) {
    if let Some(mark) = mark {
        out.push(mark);
    }
    html(out, line.trim_end_matches(['\n', '\r']));
    out.push('\n');
}

/// An edit, `old` replaced by `new`, as a line diff.
pub(super) fn diff(out: &mut String, old: &str, new: &str) {
    out.push_str(DIFF_OPEN);
    let lines = old.lines().count().max(1) * new.lines().count().max(1);
    if lines <= DIFF_CELLS {
        let d = similar::TextDiff::from_lines(old, new);
        for change in d.iter_all_changes() {
            let mark = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            diff_line(out, Some(mark), change.value());
        }
    } else {
        old.lines().for_each(|l| diff_line(out, Some('-'), l));
        new.lines().for_each(|l| diff_line(out, Some('+'), l));
    }
    out.push_str("</code></pre>");
}

/// A diff as it was written: its lines kept, each already marked by its
/// first character (`+`, `-`, ` `) or, in a patch, a header (`***`, `@@`,
/// `diff `); any other line is context.
fn written_diff(out: &mut String, open: &str, text: &str, headers: &[&str]) {
    out.push_str(open);
    for line in text.lines() {
        let marked =
            line.starts_with(['+', '-', ' ']) || headers.iter().any(|h| line.starts_with(h));
        diff_line(out, (!marked).then_some(' '), line);
    }
    out.push_str("</code></pre>");
}

/// A patch (Codex's `*** Begin Patch` or a unified diff), its lines marked.
pub(super) fn patch_block(out: &mut String, patch: &str) {
    written_diff(out, PATCH_OPEN, patch, &["***", "@@", "diff "]);
}

/// The text of a tool's result, drawn for its call: a read's content
/// highlighted as its file's language, a shell's or a search's output,
/// else plain text; folded past [`SHOWN_LINES`] lines.
pub(super) fn result_text(out: &mut String, called: Option<&Called>, text: &str) {
    let lang = match called {
        Some(c) if matches!(c.kind, ToolKind::Read) => c.lang.as_deref(),
        _ => None,
    };
    if is_patch(text) && text.contains("\n+") {
        patch_block(out, text);
        return;
    }
    block(out, text, "out", lang);
}

/// How a shell result ended, when its output says so (`Exit code: N`,
/// `exited with code N`, `exit status N`), and how long it took from its
/// call.
pub(super) fn shell_outcome(called: &Called, text: &str, at: u64, is_error: bool) -> String {
    let mut parts = Vec::new();
    let code = text
        .lines()
        .rev()
        .take(5)
        .chain(text.lines().take(5))
        .find_map(exit_code);
    match code {
        Some(code) => parts.push(format!("exit {code}")),
        None if is_error => parts.push("failed".to_owned()),
        None => {}
    }
    if called.at > 0 && at >= called.at {
        let ms = at - called.at;
        parts.push(if ms < 1000 {
            format!("{ms} ms")
        } else {
            format!("{:.1} s", ms as f64 / 1000.0)
        });
    }
    parts.join(" · ")
}

fn exit_code(line: &str) -> Option<i64> {
    let lower = line.to_ascii_lowercase();
    for key in ["exit code:", "exit code", "exited with code", "exit status"] {
        if let Some(at) = lower.find(key) {
            let rest = lower[at + key.len()..].trim_start();
            let digits: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            if let Ok(code) = digits.parse() {
                return Some(code);
            }
        }
    }
    None
}

/// A tool result's `details` (which no model sees): pi's recorded diff as
/// a diff, anything else as a tree of keys and values.
pub(super) fn details(out: &mut String, details: &Value) {
    out.push_str("<details class=\"details\"><summary>details (never sent)</summary>");
    if let Some(d) = details.get("diff").and_then(Value::as_str) {
        recorded_diff(out, d);
        let rest: serde_json::Map<String, Value> = details
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| k.as_str() != "diff")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        if !rest.is_empty() {
            value(out, &Value::Object(rest), 0);
        }
    } else {
        value(out, details, 0);
    }
    out.push_str("</details>");
}

/// pi's recorded diff (`+12 line`, `-12 line`, ` 12 line`), its lines
/// marked.
fn recorded_diff(out: &mut String, d: &str) {
    written_diff(out, DIFF_OPEN, d, &[]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_is_a_diff_of_its_lines() {
        let mut out = String::new();
        call(
            &mut out,
            "Edit",
            &json!({"file_path": "src/a.rs", "old_string": "a\nb\nc", "new_string": "a\nB\nc"}),
            0,
        );
        assert!(out.contains("\n-b\n+B\n"), "{out}");
        assert!(out.contains(">&#32;a\n") || out.contains("> a\n"), "{out}");
        assert!(!out.contains("\\n"), "{out}");
        // What the diff shows is not shown again as keys and values.
        assert!(!out.contains("<dt>"), "{out}");
    }

    #[test]
    fn a_shell_call_shows_its_command_and_exit() {
        let mut out = String::new();
        let c = call(
            &mut out,
            "shell",
            &json!({"command": ["bash", "-lc", "ls -la"], "workdir": "/w"}),
            1000,
        );
        assert!(out.contains(">ls -la</code>"), "{out}");
        assert!(out.contains("<dt>workdir</dt>"), "{out}");
        assert!(!out.contains("<dt>command</dt>"), "{out}");
        assert_eq!(
            shell_outcome(&c, "Exit code: 2\nWall time: 1s", 3500, true),
            "exit 2 · 2.5 s"
        );
    }

    #[test]
    fn another_tool_shows_multiline_strings_as_lines() {
        let mut out = String::new();
        call(
            &mut out,
            "Task",
            &json!({"prompt": "one\ntwo", "n": [1, 2]}),
            0,
        );
        assert!(!out.contains("\\n"), "{out}");
        assert!(out.contains("one\ntwo"), "{out}");
    }

    #[test]
    fn a_long_block_folds() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let mut out = String::new();
        block(&mut out, &text, "out", Some("rs"));
        assert!(out.contains("70 more lines"), "{out}");
    }

    #[test]
    fn languages_come_from_extensions() {
        assert_eq!(lang_of("src/main.RS").as_deref(), Some("rs"));
        assert_eq!(lang_of("Makefile").as_deref(), Some("makefile"));
        assert_eq!(lang_of("a/b.tar.gz?x").as_deref(), None);
    }

    #[test]
    fn written_diffs_keep_their_lines_marked() {
        let mut out = String::new();
        patch_block(
            &mut out,
            "*** Begin Patch\n*** Update File: a.rs\n@@ fn main\n fn a() {}\n-old <x>\n+new\n\n*** End Patch",
        );
        assert_eq!(
            out,
            "<pre class=\"diff\"><code data-lang=\"patch\">*** Begin Patch\n*** Update File: a.rs\n@@ fn main\n fn a() {}\n-old &lt;x&gt;\n+new\n \n*** End Patch\n</code></pre>"
        );
        let mut out = String::new();
        patch_block(&mut out, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n c\nplain");
        assert_eq!(
            out,
            "<pre class=\"diff\"><code data-lang=\"patch\">--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n c\n plain\n</code></pre>"
        );
        let mut out = String::new();
        recorded_diff(&mut out, "  1 a\n-2 b\n+2 B\n    ...\n*** x");
        assert_eq!(
            out,
            "<pre class=\"diff\"><code data-lang=\"diff\">  1 a\n-2 b\n+2 B\n    ...\n *** x\n</code></pre>"
        );
    }
}
