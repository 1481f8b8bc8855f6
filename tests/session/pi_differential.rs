//! Differential test against pi's own code: seeded random pi session trees
//! (v1, v2 and v3, with branches, compactions, branch summaries, custom messages,
//! labels, model and thinking changes), every leaf's context read by
//! agentmsg and by pi 0.73 (`buildSessionContext` after its migrations, then
//! the coding agent's `convertToLlm`, run by `scripts/pi/context.mjs` in
//! Node). Each leaf's messages must be equal as JSON values, with every
//! tool call's arguments in the same key order, and so must the model and
//! the thinking level.
//!
//! pi's package is installed by `.ci/run` into `target/pi-node` (or
//! `$AGENTMSG_PI_NODE`). Without it, or without `node`, the test says loudly
//! that it is skipped; under CI it fails instead.
//!
//! `AGENTMSG_PI_SEED` picks the seed (a fresh one in CI, printed so a failure
//! can be replayed); `AGENTMSG_PI_TREES` how many trees (default 150).

use std::collections::HashMap;

use crate::common::{self, Rng};
use agentmsg::{to_llm, LlmMessage, Session};
use serde_json::{json, Value};

/// The words of the generated texts.
const WORDS: [&str; 11] = [
    "fix",
    "the",
    "parser",
    "read",
    "a.rs",
    "émoji 🦀",
    "line\nbreak",
    "\"quoted\"",
    "<b>",
    "tab\t",
    "ok",
];

/// Tool-call arguments in an order of their own (never sorted).
fn arguments(rng: &mut Rng) -> String {
    let shapes = [
        r#"{"path":"src/a.rs","oldText":"x","newText":"y"}"#,
        r#"{"command":"ls -la","timeout":30}"#,
        r#"{"path":"b.rs","edits":[{"oldText":"a","newText":"b"}],"dryRun":false}"#,
        r#"{"zeta":1,"alpha":{"y":2,"b":[3,{"k":"v","a":null}]}}"#,
        r#"{}"#,
    ];
    shapes[rng.below(shapes.len())].to_owned()
}

fn usage(rng: &mut Rng) -> Value {
    let input = rng.below(5000) as u64;
    let output = rng.below(500) as u64;
    json!({"input": input, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + output,
           "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}})
}

/// One message of a role that fits after `previous` (a tool result answers
/// the calls of the assistant message before it when there is one).
fn message(rng: &mut Rng, ts: u64, calls: &mut Vec<(String, String)>) -> String {
    if let Some((id, name)) = calls.pop() {
        if rng.chance(85) {
            let is_error = rng.chance(20);
            return format!(
                r#"{{"role":"toolResult","toolCallId":{},"toolName":{},"content":[{{"type":"text","text":{}}}],"isError":{is_error},"timestamp":{ts}}}"#,
                json!(id),
                json!(name),
                json!(rng.text(&WORDS, 6))
            );
        }
        calls.clear();
    }
    if rng.chance(8) {
        let mut bash = json!({"role": "bashExecution", "command": rng.text(&WORDS, 6), "output": rng.text(&WORDS, 6),
            "exitCode": rng.below(3), "cancelled": rng.chance(10), "truncated": rng.chance(10), "timestamp": ts});
        if rng.chance(30) {
            bash["excludeFromContext"] = json!(true);
        }
        if rng.chance(20) {
            bash["fullOutputPath"] = json!("/tmp/out.txt");
        }
        return bash.to_string();
    }
    if rng.chance(45) {
        let content = if rng.chance(40) {
            json!(rng.text(&WORDS, 6))
        } else if rng.chance(20) {
            json!([{"type": "text", "text": rng.text(&WORDS, 6)},
                   {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}])
        } else {
            json!([{"type": "text", "text": rng.text(&WORDS, 6)}])
        };
        return json!({"role": "user", "content": content, "timestamp": ts}).to_string();
    }
    let models = [
        ("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
        ("openai", "openai-responses", "gpt-5"),
        ("google", "google-generative-ai", "gemini-2.5-pro"),
    ];
    let (provider, api, model) = models[rng.below(models.len())];
    let mut blocks = Vec::new();
    if rng.chance(40) {
        blocks.push(
            json!({"type": "thinking", "thinking": rng.text(&WORDS, 6), "thinkingSignature": "sig"})
                .to_string(),
        );
    }
    if rng.chance(70) {
        blocks.push(json!({"type": "text", "text": rng.text(&WORDS, 6)}).to_string());
    }
    let mut stop = match rng.below(20) {
        0 | 1 => "error",
        2 => "aborted",
        3 => "length",
        _ => "stop",
    };
    if rng.chance(50) {
        for _ in 0..1 + rng.below(2) {
            let id = format!("call_{}", rng.next() % 100_000);
            let name = rng.pick(&["read", "edit", "bash"]).to_owned();
            blocks.push(format!(
                r#"{{"type":"toolCall","id":{},"name":{},"arguments":{}}}"#,
                json!(id),
                json!(name),
                arguments(rng)
            ));
            calls.push((id, name));
        }
        stop = "toolUse";
    }
    let error = if stop == "error" {
        r#","errorMessage":"overloaded""#
    } else {
        ""
    };
    format!(
        r#"{{"role":"assistant","content":[{}],"api":"{api}","provider":"{provider}","model":"{model}","usage":{},"stopReason":"{stop}"{error},"timestamp":{ts}}}"#,
        blocks.join(","),
        usage(rng)
    )
}

/// A random pi session file of `version` (1: a linear file without ids,
/// compactions naming the first kept entry by index; 2: ids, and messages of
/// the `hookMessage` role that version 3 calls `custom`; 3: as pi writes
/// now, where a `hookMessage` is nothing pi sends): its lines.
fn session(rng: &mut Rng, n: usize, version: u32) -> Vec<String> {
    let mut lines = vec![format!(
        r#"{{"type":"session","version":{version},"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}}"#
    )];
    let mut ids: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    for k in 0..n {
        let id = format!("{:08x}", rng.next() as u32);
        let parent = if ids.is_empty() {
            Value::Null
        } else if version == 1 || rng.chance(80) {
            json!(ids[ids.len() - 1])
        } else {
            calls.clear();
            json!(ids[rng.below(ids.len())])
        };
        let ts = 1_735_689_600_000 + k as u64 * 1000;
        let time = format!("2025-01-01T00:{:02}:{:02}.000Z", (k / 60) % 60, k % 60);
        let head = if version == 1 {
            format!(r#""timestamp":"{time}""#)
        } else {
            format!(r#""id":"{id}","parentId":{parent},"timestamp":"{time}""#)
        };
        let roll = rng.below(100);
        let line = if version >= 2 && roll < 4 {
            let content = if rng.chance(50) {
                json!(rng.text(&WORDS, 6))
            } else {
                json!([{"type": "text", "text": rng.text(&WORDS, 6)}])
            };
            format!(
                r#"{{"type":"message",{head},"message":{{"role":"hookMessage","customType":"hook","content":{content},"display":true,"timestamp":{ts}}}}}"#
            )
        } else if roll < 70 || ids.is_empty() {
            format!(
                r#"{{"type":"message",{head},"message":{}}}"#,
                message(rng, ts, &mut calls)
            )
        } else if roll < 76 && ids.len() > 2 {
            let first = rng.below(ids.len());
            let kept = if version == 1 {
                // The index in the file's entries (the header is entry 0).
                format!(r#""firstKeptEntryIndex":{}"#, first + 1)
            } else {
                format!(r#""firstKeptEntryId":"{}""#, ids[first])
            };
            let tokens = if rng.chance(80) {
                json!(rng.below(100_000))
            } else {
                json!(1234.5)
            };
            format!(
                r#"{{"type":"compaction",{head},"summary":{},{kept},"tokensBefore":{tokens}}}"#,
                json!(rng.text(&WORDS, 6))
            )
        } else if roll < 81 {
            let summary = if rng.chance(80) {
                rng.text(&WORDS, 6)
            } else {
                String::new()
            };
            let from = &ids[rng.below(ids.len())];
            format!(
                r#"{{"type":"branch_summary",{head},"fromId":"{from}","summary":{}}}"#,
                json!(summary)
            )
        } else if roll < 86 {
            let content = if rng.chance(50) {
                json!(rng.text(&WORDS, 6))
            } else {
                json!([{"type": "text", "text": rng.text(&WORDS, 6)}])
            };
            format!(
                r#"{{"type":"custom_message",{head},"customType":"note","content":{content},"display":true}}"#
            )
        } else if roll < 89 {
            format!(r#"{{"type":"custom",{head},"customType":"state","data":{{"k":1}}}}"#)
        } else if roll < 92 {
            let target = &ids[rng.below(ids.len())];
            format!(r#"{{"type":"label",{head},"targetId":"{target}","label":"mark"}}"#)
        } else if roll < 96 {
            let level = rng.pick(&["off", "low", "medium", "high"]);
            format!(r#"{{"type":"thinking_level_change",{head},"thinkingLevel":"{level}"}}"#)
        } else {
            let (provider, model) =
                [("anthropic", "claude-opus-4-5"), ("openai", "gpt-5-mini")][rng.below(2)];
            format!(
                r#"{{"type":"model_change",{head},"provider":"{provider}","modelId":"{model}"}}"#
            )
        };
        lines.push(line);
        ids.push(id);
    }
    lines
}

/// The key order of each `"arguments":{…}` object in a JSON text, nested
/// objects included, as written.
fn written_orders(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("\"arguments\":") {
        rest = &rest[at + "\"arguments\":".len()..];
        let mut de = serde_json::Deserializer::from_str(rest);
        let raw: &serde_json::value::RawValue =
            serde::Deserialize::deserialize(&mut de).expect("arguments are JSON");
        out.push(raw.get().to_owned());
    }
    out
}

#[test]
fn every_leaf_sends_what_pi_sends() {
    let Some(pi) = common::pi_node("pi_differential") else {
        return;
    };
    let seed = common::pi_seed();
    let trees: usize = std::env::var("AGENTMSG_PI_TREES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    eprintln!("pi_differential: AGENTMSG_PI_SEED={seed} AGENTMSG_PI_TREES={trees}");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for t in 0..trees {
        let n = 3 + rng.below(40);
        let version = match rng.below(10) {
            0 => 1,
            1 | 2 => 2,
            _ => 3,
        };
        let lines = session(&mut rng, n, version);
        let file = dir.path().join(format!("t{t}.jsonl"));
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        files.push(file);
    }
    let stdout = common::run_pi_script(&pi, "context.mjs", &files);
    let mut sessions: HashMap<String, Session> = HashMap::new();
    let (mut leaves, mut messages, mut failures) = (0, 0, Vec::new());
    for line in stdout.lines() {
        let theirs: Value = serde_json::from_str(line).expect("pi's line is JSON");
        let file = theirs["file"].as_str().unwrap().to_owned();
        let Some(leaf) = theirs["leaf"].as_str() else {
            continue;
        };
        let session = sessions
            .entry(file.clone())
            .or_insert_with(|| Session::open(&file).expect("agentmsg opens it"));
        // A version 1 file is one line of entries whose ids each reader makes
        // up (pi's are random): its leaf is its last entry.
        let version_1 = std::fs::read_to_string(&file)
            .unwrap()
            .starts_with(r#"{"type":"session","version":1,"#);
        let context = session
            .context((!version_1).then_some(leaf))
            .expect("a context");
        let sent = to_llm(&context.messages);
        let ours: Vec<String> = sent
            .iter()
            .map(|m| serde_json::to_string(&LlmMessage::new(m.clone().into_owned())).unwrap())
            .collect();
        let ours_value: Vec<Value> = ours
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let theirs_messages: Vec<Value> = theirs["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(common::pi_message_form)
            .collect();
        let ours_value: Vec<Value> = ours_value.iter().map(common::pi_message_form).collect();
        leaves += 1;
        messages += theirs_messages.len();
        let mut problem = Vec::new();
        if ours_value != theirs_messages {
            problem.push(format!(
                "messages differ:\n  pi:       {}\n  agentmsg: {}",
                serde_json::to_string(&theirs_messages).unwrap(),
                serde_json::to_string(&ours_value).unwrap()
            ));
        }
        // pi's text as pi wrote it (a `Value` would sort its keys).
        #[derive(serde::Deserialize)]
        struct Raw<'a> {
            #[serde(borrow)]
            messages: &'a serde_json::value::RawValue,
        }
        let their_text = serde_json::from_str::<Raw<'_>>(line)
            .unwrap()
            .messages
            .get();
        if written_orders(their_text) != written_orders(&ours.join(",")) {
            problem.push(format!(
                "argument order differs: pi {:?}, agentmsg {:?}",
                written_orders(their_text),
                written_orders(&ours.join(","))
            ));
        }
        let model = context
            .model
            .as_ref()
            .map(|m| json!({"provider": m.provider, "modelId": m.model_id}))
            .unwrap_or(Value::Null);
        if model != theirs["model"] {
            problem.push(format!("model: pi {}, agentmsg {model}", theirs["model"]));
        }
        if context.thinking_level != theirs["thinkingLevel"].as_str().unwrap_or("") {
            problem.push(format!(
                "thinking level: pi {}, agentmsg {}",
                theirs["thinkingLevel"], context.thinking_level
            ));
        }
        if !problem.is_empty() {
            failures.push(format!("{file} at leaf {leaf}:\n{}", problem.join("\n")));
        }
    }
    eprintln!("pi_differential: {leaves} leaves, {messages} messages compared");
    assert!(leaves >= trees, "pi gave {leaves} leaves for {trees} trees");
    if !failures.is_empty() {
        panic!(
            "{} of {leaves} leaves differ from pi (AGENTMSG_PI_SEED={seed}); the first:\n{}\n\nits file:\n{}",
            failures.len(),
            failures[0],
            std::fs::read_to_string(failures[0].split(" at leaf").next().unwrap()).unwrap_or_default()
        );
    }
}
