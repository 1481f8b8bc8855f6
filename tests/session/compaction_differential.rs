//! Differential test against pi's own compaction code: seeded random pi
//! session trees (and the real pi sessions of the conformance data, copied to
//! a temporary directory first), each planned at several leaves and budgets
//! by [`CompactionPolicy::Pi`] and by pi 0.73.1 (`prepareCompaction`, then
//! `compact` with pi-ai's scripted faux model, in `scripts/pi/compaction.mjs`).
//! They must agree on whether there is a plan, the cut, the split turn, the
//! tokens, the summariser's prompts (some with a focus, pi's custom
//! instructions) and system prompt, the file lists, the
//! summary pi records and its `details`.
//!
//! One difference is by design: where pi would summarise nothing the model
//! is sent (its `convertToLlm` of the summarised messages is empty), agentmsg
//! plans nothing. Those cases are counted and must be exactly the ones.
//!
//! Then agentmsg applies each plan, by either policy (with pi's answers as
//! the summaries): pi
//! reads the file and rebuilds, at the compaction, the context agentmsg
//! rebuilds; and after more work is appended, pi's next compaction of that
//! file keeps every file list agentmsg's carried, and still equals
//! agentmsg's plan.
//!
//! `AGENTMSG_PI_SEED` picks the seed (a fresh one in CI, printed);
//! `AGENTMSG_PI_COMPACTION_TREES` how many trees (default 60).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::common::{self, Rng};
use agentmsg::session::{CompactionPlan, CompactionPolicy};
use agentmsg::{to_llm, AssistantMessage, LlmMessage, Message, Session, ToolCall};
use serde_json::{json, Value};

/// The words of the generated texts: characters past U+FFFF (two UTF-16
/// units, four UTF-8 bytes) and others of two and three bytes among them.
const WORDS: [&str; 12] = [
    "fix",
    "the",
    "parser",
    "émoji 🦀",
    "line\nbreak",
    "\"quoted\"",
    "<b>",
    "tab\t",
    "ok",
    "日本語",
    "𝄞music",
    "a.rs",
];

const PATHS: [&str; 6] = [
    "src/a.rs",
    "src/b.rs",
    "README.md",
    "Ünï/𝄞.txt",
    "z.rs",
    "\u{E000}x",
];

fn arguments(rng: &mut Rng, name: &str) -> Value {
    let path = rng.pick(&PATHS);
    match (name, rng.below(6)) {
        ("bash", _) => json!({"command": rng.text(&WORDS, 4), "timeout": 30}),
        (_, 0) => json!({"path": path, "offset": 1.5, "limit": 1e21}),
        (_, 1) => json!({"path": "", "x": null}),
        (_, 2) => json!({"file": path}),
        _ => json!({"path": path, "oldText": rng.text(&WORDS, 3), "newText": rng.text(&WORDS, 3)}),
    }
}

fn usage(rng: &mut Rng) -> Value {
    if rng.chance(10) {
        return json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    }
    let input = rng.below(5000) as u64;
    let output = rng.below(500) as u64;
    let total = if rng.chance(20) { 0 } else { input + output };
    json!({"input": input, "output": output, "cacheRead": 7, "cacheWrite": 0, "totalTokens": total,
           "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}})
}

/// One message that fits after the calls still unanswered.
fn message(rng: &mut Rng, ts: u64, calls: &mut Vec<(String, String)>) -> Value {
    if let Some((id, name)) = calls.pop() {
        if rng.chance(85) {
            let mut content = vec![json!({"type": "text", "text": if rng.chance(15) {
                format!("{}🦀{}", "x".repeat(1999), rng.text(&WORDS, 30))
            } else {
                rng.text(&WORDS, 40)
            }})];
            if rng.chance(10) {
                content.push(
                    json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
                );
            }
            return json!({"role": "toolResult", "toolCallId": id, "toolName": name,
                          "content": content, "isError": rng.chance(15), "timestamp": ts});
        }
        calls.clear();
    }
    let roll = rng.below(100);
    if roll < 8 {
        let mut bash = json!({"role": "bashExecution", "command": rng.text(&WORDS, 3), "output": rng.text(&WORDS, 30),
            "exitCode": rng.below(3), "cancelled": rng.chance(10), "truncated": false, "timestamp": ts});
        if rng.chance(40) {
            bash["excludeFromContext"] = json!(true);
        }
        return bash;
    }
    if roll < 12 {
        let content = if rng.chance(50) {
            json!(rng.text(&WORDS, 20))
        } else {
            json!([{"type": "text", "text": rng.text(&WORDS, 20)},
                   {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}])
        };
        return json!({"role": "custom", "customType": "note", "content": content,
                      "display": true, "timestamp": ts});
    }
    if roll < 50 {
        let content = if rng.chance(40) {
            json!(rng.text(&WORDS, 60))
        } else if rng.chance(20) {
            json!([{"type": "text", "text": rng.text(&WORDS, 30)},
                   {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}])
        } else {
            json!([{"type": "text", "text": rng.text(&WORDS, 60)}])
        };
        return json!({"role": "user", "content": content, "timestamp": ts});
    }
    let mut blocks = Vec::new();
    if rng.chance(40) {
        blocks.push(
            json!({"type": "thinking", "thinking": rng.text(&WORDS, 40), "thinkingSignature": "sig"}),
        );
    }
    if rng.chance(70) {
        blocks.push(json!({"type": "text", "text": rng.text(&WORDS, 60)}));
    }
    let mut stop = match rng.below(20) {
        0 => "error",
        1 => "aborted",
        _ => "stop",
    };
    if rng.chance(55) {
        for _ in 0..1 + rng.below(3) {
            let id = format!("call_{}", rng.next() % 100_000);
            let name = rng.pick(&["read", "write", "edit", "bash"]).to_owned();
            blocks.push(json!({"type": "toolCall", "id": id, "name": name,
                               "arguments": arguments(rng, &name)}));
            calls.push((id, name));
        }
        stop = "toolUse";
    }
    let mut m = json!({"role": "assistant", "content": blocks, "api": "anthropic-messages",
        "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage(rng),
        "stopReason": stop, "timestamp": ts});
    if stop == "error" {
        m["errorMessage"] = json!("overloaded");
    }
    m
}

/// A random pi session file (version 3, or 2 with its `hookMessage` role):
/// its lines.
fn session(rng: &mut Rng, n: usize) -> Vec<String> {
    let version = if rng.chance(15) { 2 } else { 3 };
    let mut lines = vec![json!({"type": "session", "version": version, "id": "s",
        "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"})
    .to_string()];
    let mut ids: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    for k in 0..n {
        let id = format!("{:08x}", rng.next() as u32);
        let parent = if ids.is_empty() {
            Value::Null
        } else if rng.chance(90) {
            json!(ids[ids.len() - 1])
        } else {
            calls.clear();
            json!(ids[rng.below(ids.len())])
        };
        let ts = 1_735_689_600_000 + k as u64 * 1000;
        let time = format!(
            "2025-01-01T{:02}:{:02}:{:02}.000Z",
            k / 3600,
            (k / 60) % 60,
            k % 60
        );
        let mut entry = json!({"id": id, "parentId": parent, "timestamp": time});
        let roll = rng.below(100);
        if roll < 78 || ids.is_empty() {
            entry["type"] = json!("message");
            entry["message"] = if version == 2 && rng.chance(3) {
                json!({"role": "hookMessage", "customType": "hook", "content": rng.text(&WORDS, 5),
                       "display": true, "timestamp": ts})
            } else {
                message(rng, ts, &mut calls)
            };
        } else if roll < 82 && ids.len() > 2 {
            entry["type"] = json!("compaction");
            entry["summary"] = json!(rng.text(&WORDS, 30));
            entry["firstKeptEntryId"] = json!(ids[ids.len() - 1 - rng.below(ids.len().min(8))]);
            entry["tokensBefore"] = json!(rng.below(100_000));
            if rng.chance(80) {
                let read: Vec<&str> = (0..rng.below(3)).map(|_| rng.pick(&PATHS)).collect();
                let modified: Vec<&str> = (0..rng.below(3)).map(|_| rng.pick(&PATHS)).collect();
                entry["details"] = json!({"readFiles": read, "modifiedFiles": modified});
            }
            if rng.chance(15) {
                entry["fromHook"] = json!(true);
            }
        } else if roll < 86 {
            entry["type"] = json!("branch_summary");
            entry["fromId"] = json!(ids[rng.below(ids.len())]);
            entry["summary"] = json!(if rng.chance(85) {
                rng.text(&WORDS, 20)
            } else {
                String::new()
            });
        } else if roll < 90 {
            entry["type"] = json!("custom_message");
            entry["customType"] = json!("note");
            entry["content"] = json!(rng.text(&WORDS, 20));
            entry["display"] = json!(rng.chance(50));
        } else if roll < 93 {
            entry["type"] = json!("label");
            entry["targetId"] = json!(ids[rng.below(ids.len())]);
            entry["label"] = json!("mark");
        } else if roll < 96 {
            entry["type"] = json!("thinking_level_change");
            entry["thinkingLevel"] = json!("high");
        } else if roll < 98 {
            entry["type"] = json!("model_change");
            entry["provider"] = json!("openai");
            entry["modelId"] = json!("gpt-5");
        } else {
            entry["type"] = json!("custom");
            entry["customType"] = json!("state");
            entry["data"] = json!({"k": 1});
        }
        lines.push(entry.to_string());
        ids.push(id);
    }
    lines
}

/// A job: a file, a leaf (`None`: its last entry), a budget, and the focus
/// of the summary (pi's custom instructions).
#[derive(Clone)]
struct Job {
    file: PathBuf,
    leaf: Option<String>,
    keep: u64,
    focus: Option<String>,
}

fn jobs_file(dir: &Path, name: &str, jobs: &[Job]) -> PathBuf {
    let list: Vec<Value> = jobs
        .iter()
        .map(|j| json!({"file": j.file, "leaf": j.leaf, "keep": j.keep, "focus": j.focus}))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&list).unwrap()).unwrap();
    path
}

/// Tallies of a comparison.
#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    plans: usize,
    split: usize,
    turn_prefix: usize,
    pi_summarises_nothing_sent: usize,
    with_files: usize,
    with_focus: usize,
}

/// agentmsg's plan for a job, and what pi answers for it, compared; the
/// differences, described.
fn compare(session: &Session, job: &Job, theirs: &Value, tally: &mut Tally) -> Vec<String> {
    tally.cases += 1;
    let ours = CompactionPolicy::Pi
        .plan(session, job.leaf.as_deref(), job.keep)
        .expect("the leaf is in the session");
    let at = format!(
        "{} at {:?} keeping {}",
        job.file.display(),
        job.leaf,
        job.keep
    );
    let plan = &theirs["plan"];
    if plan.is_null() {
        return match ours {
            None => Vec::new(),
            Some(p) => vec![format!("{at}: pi plans nothing, agentmsg {}", p.to_json())],
        };
    }
    if plan["sent"] == 0 {
        tally.pi_summarises_nothing_sent += 1;
        return match ours {
            None => Vec::new(),
            Some(p) => vec![format!(
                "{at}: pi summarises nothing the model is sent; agentmsg plans {}",
                p.to_json()
            )],
        };
    }
    let Some(ours) = ours else {
        return vec![format!("{at}: agentmsg plans nothing, pi {plan}")];
    };
    tally.plans += 1;
    tally.split += usize::from(ours.split_turn);
    tally.turn_prefix += usize::from(ours.turn_prefix_prompt().is_some());
    tally.with_files += usize::from(!ours.files.is_empty());
    tally.with_focus += usize::from(job.focus.is_some() && ours.prompt().is_some());
    let mut mine = ours.to_json();
    mine["prompt"] = json!(ours.prompt_with_focus(job.focus.as_deref()));
    let history = ours.prompt().map(|_| "HISTORY");
    mine["summary"] = json!(ours.summary_text(history, Some("PREFIX")));
    mine["details"] =
        json!({"readFiles": ours.files.read_files, "modifiedFiles": ours.files.modified_files});
    // A version 1 file's ids are made up by each reader: compare where the
    // entries are instead.
    let version_1 = session.format() == agentmsg::session::SessionFormat::Pi { version: 1 };
    if version_1 {
        let at_of = |id: &Value| {
            let id = id.as_str().unwrap_or_default();
            json!(session
                .entries()
                .iter()
                .position(|e| e.id().is_some_and(|i| i.as_str() == id)))
        };
        for key in ["summarise", "turnPrefix"] {
            mine[key] = Value::Array(mine[key].as_array().unwrap().iter().map(at_of).collect());
        }
        mine["firstKeptEntryId"] = at_of(&mine["firstKeptEntryId"]);
    }
    let mut problems = Vec::new();
    for key in [
        "firstKeptEntryId",
        "splitTurn",
        "tokensBefore",
        "summarise",
        "turnPrefix",
        "prompt",
        "turnPrefixPrompt",
        "readFiles",
        "modifiedFiles",
        "summary",
        "details",
    ] {
        let their = match key {
            "firstKeptEntryId" | "summarise" | "turnPrefix" if version_1 => &plan["at"][key],
            _ => &plan[key],
        };
        if mine[key] != *their {
            problems.push(format!(
                "{at}: {key} differs\n  pi:       {their}\n  agentmsg: {}",
                mine[key]
            ));
        }
    }
    for system in plan["systemPrompts"].as_array().into_iter().flatten() {
        if system != ours.system_prompt() {
            problems.push(format!("{at}: system prompt differs: pi {system}"));
        }
    }
    problems
}

/// What the model is sent at `leaf`, as agentmsg builds it, in pi's JSON
/// shapes (as `tests/session/pi_differential.rs` compares them).
fn our_context(session: &Session, leaf: &str) -> Vec<Value> {
    let context = session.context(Some(leaf)).unwrap();
    to_llm(&context.messages)
        .iter()
        .map(|m| normalize(&serde_json::to_value(LlmMessage::new(m.clone().into_owned())).unwrap()))
        .collect()
}

/// [`common::pi_message_form`], and a tool call's `partialJson` (what pi
/// kept of an aborted stream, in a real session: no encoder of pi-ai sends
/// it) left out.
fn normalize(message: &Value) -> Value {
    let mut message = common::pi_message_form(message);
    if let Some(content) = message.get_mut("content") {
        for block in content.as_array_mut().into_iter().flatten() {
            if let Some(block) = block.as_object_mut() {
                block.remove("partialJson");
            }
        }
    }
    message
}

/// Applies `plan` with pi's answers, saves the session as `out`, and
/// returns the compaction's id.
fn apply(session: &Session, plan: &CompactionPlan, leaf: Option<&str>, out: &Path) -> String {
    let mut session = session.clone();
    if let Some(leaf) = leaf {
        session.branch(leaf).unwrap();
    }
    let summary = plan.summary_text(plan.prompt().map(|_| "HISTORY"), Some("PREFIX"));
    let id = session.apply_compaction(plan, summary).unwrap();
    session.save(out).unwrap();
    id.as_str().to_owned()
}

/// More work after a compaction: a read, a write and a long answer.
fn work_more(session: &mut Session, k: usize) {
    let read = ToolCall::new(
        format!("more_{k}"),
        "read",
        json!({"path": format!("later/{k}.rs")}),
    );
    let write = ToolCall::new(
        format!("more_w{k}"),
        "write",
        json!({"path": "src/a.rs", "content": "x"}),
    );
    session.append(Message::user("and now?").into()).unwrap();
    session
        .append(Message::Assistant(AssistantMessage::new([read, write])).into())
        .unwrap();
    session
        .append(Message::tool_result(format!("more_{k}"), "read", "fn later() {}").into())
        .unwrap();
    session
        .append(Message::tool_result(format!("more_w{k}"), "write", "ok").into())
        .unwrap();
    session
        .append(Message::user("x".repeat(4000)).into())
        .unwrap();
}

#[test]
fn policy_pi_plans_and_records_what_pi_does() {
    let Some(pi) = common::pi_node("compaction_differential") else {
        return;
    };
    let seed = common::pi_seed();
    let trees: usize = std::env::var("AGENTMSG_PI_COMPACTION_TREES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    eprintln!(
        "compaction_differential: AGENTMSG_PI_SEED={seed} AGENTMSG_PI_COMPACTION_TREES={trees}"
    );
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut jobs = Vec::new();
    for t in 0..trees {
        let n = 3 + rng.below(60);
        let lines = session(&mut rng, n);
        let file = dir.path().join(format!("t{t}.jsonl"));
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let total = lines.iter().map(|l| l.len() as u64 / 4).sum::<u64>();
        let entry_ids: Vec<String> = lines[1..]
            .iter()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        for _ in 0..3 {
            let leaf = if rng.chance(30) {
                Some(entry_ids[rng.below(entry_ids.len())].clone())
            } else {
                None
            };
            let keep = match rng.below(5) {
                0 => 0,
                1 => rng.below(50) as u64,
                _ => rng.below(total as usize / 3 + 1) as u64,
            };
            let focus = rng.chance(25).then(|| rng.text(&WORDS, 4));
            jobs.push(Job {
                file: file.clone(),
                leaf,
                keep,
                focus,
            });
        }
    }
    // The real sessions, copied first: pi migrates a file it opens in place.
    if let Some(conformance) = common::conformance_or_skip(Some("the real pi sessions")) {
        for name in ["before-compaction.jsonl", "large-session.jsonl"] {
            let file = dir.path().join(name);
            std::fs::copy(conformance.join("transcripts/pi").join(name), &file).unwrap();
            // And migrated to version 3 (as pi migrates a file it opens), so
            // entry ids are the file's and plans can be applied.
            let mut migrated = Session::open(&file).unwrap();
            migrated.migrate().unwrap();
            let migrated_file = dir.path().join(format!("v3-{name}"));
            migrated.save(&migrated_file).unwrap();
            for keep in [0, 20_000, 150_000, 10_000_000] {
                for file in [&file, &migrated_file] {
                    jobs.push(Job {
                        file: file.clone(),
                        leaf: None,
                        keep,
                        focus: None,
                    });
                }
            }
        }
    }
    let theirs = common::run_pi_script_json(
        &pi,
        "compaction.mjs",
        &[jobs_file(dir.path(), "jobs.json", &jobs)],
    );
    assert_eq!(theirs.len(), jobs.len(), "pi answers every job");
    let mut sessions: HashMap<PathBuf, Session> = HashMap::new();
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    // Applied plans: the compacted file, its compaction, the plan.
    let mut applied = Vec::new();
    let (mut agentmsg_plans, mut other_cut) = (0, 0);
    for (k, (job, theirs)) in jobs.iter().zip(&theirs).enumerate() {
        let session = sessions
            .entry(job.file.clone())
            .or_insert_with(|| Session::open(&job.file).expect("agentmsg opens it"));
        let problems = compare(session, job, theirs, &mut tally);
        if !problems.is_empty() {
            failures.extend(problems);
            continue;
        }
        // agentmsg's own policy on the same cases: never a summary of
        // nothing the model is sent.
        if let Some(plan) = CompactionPolicy::Agentmsg
            .plan(session, job.leaf.as_deref(), job.keep)
            .unwrap()
        {
            let context = session.context(job.leaf.as_deref()).unwrap();
            let sent = context
                .messages
                .iter()
                .zip(&context.entry_ids)
                .filter(|(_, id)| id.as_ref().is_some_and(|id| plan.summarise.contains(id)))
                .any(|(m, _)| !to_llm(std::slice::from_ref(m)).is_empty());
            assert!(
                sent,
                "{}: agentmsg's plan sends nothing it summarises",
                job.file.display()
            );
            agentmsg_plans += 1;
            other_cut += usize::from(
                theirs["plan"]["firstKeptEntryId"].as_str() != Some(plan.first_kept.as_str()),
            );
            // Applied too (below: pi reads it back and keeps its lists).
            if session.format() != (agentmsg::session::SessionFormat::Pi { version: 1 }) {
                let out = dir.path().join(format!("agentmsg{k}.jsonl"));
                let id = apply(session, &plan, job.leaf.as_deref(), &out);
                applied.push((out, id, plan));
            }
        }
        // pi writes no entry to a version 1 file before migrating it.
        if session.format() == (agentmsg::session::SessionFormat::Pi { version: 1 }) {
            continue;
        }
        if let Some(plan) = CompactionPolicy::Pi
            .plan(session, job.leaf.as_deref(), job.keep)
            .unwrap()
        {
            let out = dir.path().join(format!("compacted{k}.jsonl"));
            let id = apply(session, &plan, job.leaf.as_deref(), &out);
            applied.push((out, id, plan));
        }
    }
    eprintln!("compaction_differential: {tally:?}; {agentmsg_plans} plans by agentmsg's policy, {other_cut} cut elsewhere than pi");
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from pi (AGENTMSG_PI_SEED={seed}):\n{}",
        failures.len(),
        tally.cases,
        failures
            .iter()
            .take(8)
            .map(|f| f.chars().take(1500).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(tally.plans > 0 && tally.split > 0 && tally.turn_prefix > 0 && tally.with_files > 0);
    assert!(
        tally.with_focus > 0,
        "no plan asked with a focus: {tally:?}"
    );

    // pi reads each compacted file and sends, at the compaction, what
    // agentmsg sends.
    let files: Vec<PathBuf> = applied.iter().map(|(f, _, _)| f.clone()).collect();
    let contexts = common::run_pi_script_json(&pi, "context.mjs", &files);
    let mut compared = 0;
    for (file, id, _) in &applied {
        let session = Session::open(file).unwrap();
        let theirs = contexts
            .iter()
            .find(|c| c["file"] == json!(file) && c["leaf"] == json!(id))
            .unwrap_or_else(|| panic!("pi gives {} a leaf at its compaction {id}", file.display()));
        let theirs: Vec<Value> = theirs["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(normalize)
            .collect();
        let ours = our_context(&session, id);
        if ours != theirs {
            let at = ours.iter().zip(&theirs).position(|(a, b)| a != b);
            let show = |list: &[Value]| {
                at.and_then(|at| list.get(at))
                    .map(|v| v.to_string().chars().take(1500).collect::<String>())
            };
            panic!(
                "{}: pi's context at the compaction differs: {} messages against pi's {}; first at {at:?}:\n  pi:       {:?}\n  agentmsg: {:?}",
                file.display(),
                ours.len(),
                theirs.len(),
                show(&theirs),
                show(&ours)
            );
        }
        compared += 1;
    }

    // More work, then pi's next compaction: the lists carried are kept, and
    // pi still plans what agentmsg plans.
    let mut later = Vec::new();
    for (k, (file, id, plan)) in applied.iter().enumerate() {
        let mut session = Session::open(file).unwrap();
        session.branch(id).unwrap();
        work_more(&mut session, k);
        let out = dir.path().join(format!("later{k}.jsonl"));
        session.save(&out).unwrap();
        later.push((
            Job {
                file: out,
                leaf: None,
                keep: 1_000,
                focus: None,
            },
            plan.files.clone(),
        ));
    }
    let jobs: Vec<Job> = later.iter().map(|(j, _)| j.clone()).collect();
    let theirs = common::run_pi_script_json(
        &pi,
        "compaction.mjs",
        &[jobs_file(dir.path(), "later.json", &jobs)],
    );
    let mut kept_lists = 0;
    for ((job, carried), theirs) in later.iter().zip(&theirs) {
        let session = Session::open(&job.file).unwrap();
        let problems = compare(&session, job, theirs, &mut tally);
        assert!(
            problems.is_empty(),
            "after agentmsg's compaction: {}",
            problems.join("\n")
        );
        let plan = &theirs["plan"];
        assert!(!plan.is_null(), "{}: pi compacts again", job.file.display());
        let listed: Vec<&str> = ["readFiles", "modifiedFiles"]
            .iter()
            .flat_map(|k| {
                plan[*k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
            })
            .collect();
        for path in carried.read_files.iter().chain(&carried.modified_files) {
            assert!(
                listed.contains(&path.as_str()),
                "{}: pi's next compaction lost {path} (lists {listed:?})",
                job.file.display()
            );
        }
        assert!(listed.contains(&"src/a.rs"));
        kept_lists += 1;
    }
    eprintln!(
        "compaction_differential: {compared} compacted files read back by pi, {kept_lists} compacted again by pi"
    );
}
