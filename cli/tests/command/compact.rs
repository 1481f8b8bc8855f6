//! `agentmsg compact`: the plan as JSON (the library's, field for field),
//! `null` when there is nothing to compact, and the session written with a
//! compaction that carries pi's details; pi reads it back to the context
//! `agentmsg context` prints (when pi's package is installed, as `.ci/run`
//! does).

use std::path::{Path, PathBuf};

use agentmsg_runtime::session::CompactionPolicy;
use agentmsg_runtime::Session;
use serde_json::{json, Value};

use crate::common::{agentmsg_in, pi_chain, pi_message_form, pi_node, run_pi_script_json};

/// A pi session: a turn that reads and edits, then a long turn that writes,
/// whose end alone fits a budget of 700 tokens.
fn session_lines() -> Vec<String> {
    let usage = json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let call = |id: &str, name: &str, path: &str| json!({"type": "toolCall", "id": id, "name": name, "arguments": {"path": path}});
    let assistant = |content: Value| {
        json!({"role": "assistant", "content": content, "api": "anthropic-messages",
               "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
               "stopReason": "toolUse", "timestamp": 1})
    };
    let result = |id: &str, name: &str| {
        json!({"role": "toolResult", "toolCallId": id, "toolName": name,
               "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 1})
    };
    let messages = [
        json!({"role": "user", "content": "Fix a.rs", "timestamp": 1}),
        assistant(json!([call("c1", "read", "a.rs")])),
        result("c1", "read"),
        assistant(json!([
            call("c2", "edit", "a.rs"),
            call("c3", "read", "b.rs")
        ])),
        result("c2", "edit"),
        result("c3", "read"),
        assistant(json!([{"type": "text", "text": "y".repeat(2000)}])),
        json!({"role": "user", "content": "z".repeat(4000), "timestamp": 1}),
        assistant(json!([call("c4", "write", "c.rs")])),
        result("c4", "write"),
        assistant(json!([{"type": "text", "text": "w".repeat(3000)}])),
    ];
    pi_chain(messages)
}

fn write_session(dir: &Path) -> PathBuf {
    let file = dir.join("s.jsonl");
    std::fs::write(&file, session_lines().join("\n") + "\n").unwrap();
    file
}

#[test]
fn the_plan_is_the_librarys_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_session(dir.path());
    let run = agentmsg_in(
        dir.path(),
        &[
            "compact",
            "s.jsonl",
            "--plan",
            "--keep-tokens",
            "700",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    let session = Session::open(&file).unwrap();
    let ours = CompactionPolicy::Pi
        .plan(&session, None, 700)
        .unwrap()
        .unwrap();
    assert_eq!(plan, ours.to_json());
    assert_eq!(plan["firstKeptEntryId"], "e11");
    assert_eq!(plan["splitTurn"], true);
    assert_eq!(
        plan["summarise"],
        json!(["e1", "e2", "e3", "e4", "e5", "e6", "e7"])
    );
    assert_eq!(plan["turnPrefix"], json!(["e8", "e9", "e10"]));
    assert_eq!(plan["readFiles"], json!(["b.rs"]));
    assert_eq!(plan["modifiedFiles"], json!(["a.rs", "c.rs"]));
    let prompt = plan["prompt"].as_str().unwrap();
    assert!(prompt.starts_with(
        "<conversation>\n[User]: Fix a.rs\n\n[Assistant tool calls]: read(path=\"a.rs\")"
    ));
    assert!(prompt.ends_with("Preserve exact file paths, function names, and error messages."));
    let prefix = plan["turnPrefixPrompt"].as_str().unwrap();
    assert!(prefix.contains("[Assistant tool calls]: write(path=\"c.rs\")"));
    assert!(prefix.contains("This is the PREFIX of a turn that was too large to keep."));

    // Without --json, a few lines for a person.
    let run = agentmsg_in(
        dir.path(),
        &["compact", "s.jsonl", "--plan", "--keep-tokens", "700"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("keep from e11 ("), "{run:?}");
    assert!(
        run.stdout
            .contains("split turn: its first 3 entries summarised on their own"),
        "{run:?}"
    );
    assert!(run.stdout.contains("modified files: a.rs, c.rs"), "{run:?}");

    // agentmsg's policy cuts back to whole turns: no split.
    let run = agentmsg_in(
        dir.path(),
        &[
            "compact",
            "s.jsonl",
            "--plan",
            "--keep-tokens",
            "700",
            "--policy",
            "agentmsg",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(plan["splitTurn"], false);
    assert_eq!(plan["turnPrefixPrompt"], Value::Null);

    // A budget that keeps everything: nothing to compact.
    let run = agentmsg_in(
        dir.path(),
        &[
            "compact",
            "s.jsonl",
            "--plan",
            "--keep-tokens",
            "100000",
            "--json",
        ],
    );
    assert_eq!((run.code, run.stdout.trim()), (0, "null"), "{run:?}");
    let run = agentmsg_in(
        dir.path(),
        &[
            "compact",
            "s.jsonl",
            "--keep-tokens",
            "100000",
            "--summary",
            "S",
            "-o",
            "out.jsonl",
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("nothing to compact"), "{run:?}");
    assert!(!dir.path().join("out.jsonl").exists());

    // Bad arguments say what is wrong.
    let run = agentmsg_in(dir.path(), &["compact", "s.jsonl", "--keep-tokens", "700"]);
    assert_eq!(run.code, 2, "{run:?}");
    let run = agentmsg_in(
        dir.path(),
        &["compact", "s.jsonl", "--summary", "S", "-o", "s.jsonl"],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("-o names the input"), "{run:?}");
}

#[test]
fn the_written_session_carries_pis_details_and_pi_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    write_session(dir.path());
    let run = agentmsg_in(
        dir.path(),
        &[
            "compact",
            "s.jsonl",
            "--keep-tokens",
            "700",
            "--summary",
            "History.",
            "--turn-prefix-summary",
            "Prefix.",
            "-o",
            "out.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let text = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    // The input's lines, byte for byte, then the compaction.
    assert!(text.starts_with(&(session_lines().join("\n") + "\n")));
    let entry: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(entry["type"], "compaction");
    assert_eq!(entry["parentId"], "e11");
    assert_eq!(entry["firstKeptEntryId"], "e11");
    assert_eq!(
        entry["summary"],
        "History.\n\n---\n\n**Turn Context (split turn):**\n\nPrefix.\n\n<read-files>\nb.rs\n</read-files>\n\n<modified-files>\na.rs\nc.rs\n</modified-files>"
    );
    assert_eq!(
        entry["details"],
        json!({"readFiles": ["b.rs"], "modifiedFiles": ["a.rs", "c.rs"]})
    );

    // At another leaf: its first turn cut in two, nothing before its start.
    let run = agentmsg_in(
        dir.path(),
        &[
            "compact",
            "s.jsonl",
            "--leaf",
            "e7",
            "--keep-tokens",
            "100",
            "--summary",
            "Start.",
            "-o",
            "leaf.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let text = std::fs::read_to_string(dir.path().join("leaf.jsonl")).unwrap();
    let at_leaf: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (
            at_leaf["parentId"].clone(),
            at_leaf["firstKeptEntryId"].clone()
        ),
        (json!("e7"), json!("e7"))
    );
    assert_eq!(
        at_leaf["summary"],
        "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nStart.\n\n<read-files>\nb.rs\n</read-files>\n\n<modified-files>\na.rs\n</modified-files>"
    );

    let run = agentmsg_in(dir.path(), &["context", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let ours: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| pi_message_form(&serde_json::from_str(l).unwrap()))
        .collect();
    assert_eq!(ours.len(), 2);
    assert!(ours[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("<read-files>\nb.rs"));

    let Some(pi) = pi_node("pi's reading of the compacted file") else {
        return;
    };
    let out = dir.path().join("out.jsonl");
    let leaf = entry["id"].as_str().unwrap();
    let theirs = run_pi_script_json(&pi, "context.mjs", &[out])
        .into_iter()
        .find(|l| l["leaf"] == leaf)
        .expect("pi reads the compaction as the leaf");
    let theirs: Vec<Value> = theirs["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(pi_message_form)
        .collect();
    assert_eq!(ours, theirs, "pi rebuilds another context");
}
