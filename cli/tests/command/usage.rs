//! `agentmsg usage` against ccusage 20.0.24 (from npm, installed by `.ci/run`
//! in `target/ccusage-node`, or `$AGENTMSG_CCUSAGE_NODE`) on every Claude
//! Code log of the conformance data, laid out as `~/.claude/projects`: per
//! session and per day the four token counts are equal, and the costs are
//! equal wherever both tools price. Without ccusage (or the data) the test
//! says loudly that it is skipped; under CI it fails instead.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Where ccusage's package is installed, when it is.
fn ccusage() -> Option<PathBuf> {
    let dir = std::env::var_os("AGENTMSG_CCUSAGE_NODE")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ccusage-node"));
    let bin = dir.join("node_modules/.bin/ccusage");
    let runs = Command::new(&bin).arg("--version").output().is_ok_and(|o| {
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("20.0.24")
    });
    if runs {
        return Some(bin);
    }
    let why = format!(
        "ccusage 20.0.24 is not installed in {} (`.ci/run` installs it)",
        dir.display()
    );
    if ["CI", "AGENTMSG_REQUIRE_CCUSAGE"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
    {
        panic!("{why}");
    }
    eprintln!("\n*** SKIPPED usage differential: {why} ***\n");
    None
}

/// Copies the folder `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `program ARGS` with the agents' folders all in `home`, and reads
/// its JSON.
fn json_of(program: &Path, args: &[&str], home: &Path) -> Value {
    let out = Command::new(program)
        .args(args)
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("TZ", "UTC")
        .env_remove("CI")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?}"))
}

/// The rows of `report` under `rows`, by `key`.
fn rows<'a>(report: &'a Value, rows: &str, key: &str) -> BTreeMap<String, &'a Value> {
    report[rows]
        .as_array()
        .unwrap_or_else(|| panic!("no {rows}: {report:#}"))
        .iter()
        .map(|row| (row[key].as_str().unwrap().to_owned(), row))
        .collect()
}

/// The four token counts and the cost of a row.
fn figures(row: &Value) -> ([u64; 4], Option<f64>) {
    let n = |k: &str| row[k].as_u64().unwrap_or_else(|| panic!("{k}: {row:#}"));
    (
        [
            n("inputTokens"),
            n("outputTokens"),
            n("cacheCreationTokens"),
            n("cacheReadTokens"),
        ],
        row["totalCost"].as_f64(),
    )
}

#[test]
fn usage_agrees_with_ccusage_per_session_and_per_day_on_every_claude_code_log() {
    let Some(data) = common::conformance_or_skip(None) else {
        return;
    };
    let Some(ccusage) = ccusage() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    copy_dir(
        &data.join("transcripts/claude-code"),
        &home.path().join(".claude/projects"),
    );
    let agentmsg = PathBuf::from(env!("CARGO_BIN_EXE_agentmsg"));
    for (view, rows_key, key, ours_flag) in [
        ("session", "sessions", "sessionId", "--session"),
        ("daily", "daily", "date", "--daily"),
        ("monthly", "monthly", "month", "--monthly"),
    ] {
        let theirs = json_of(
            &ccusage,
            &["claude", view, "--json", "--offline", "--timezone", "UTC"],
            home.path(),
        );
        let ours = json_of(
            &agentmsg,
            &["usage", ours_flag, "--json", "--timezone", "UTC"],
            home.path(),
        );
        let (theirs_rows, ours_rows) = (rows(&theirs, rows_key, key), rows(&ours, rows_key, key));
        assert_eq!(
            theirs_rows.keys().collect::<Vec<_>>(),
            ours_rows.keys().collect::<Vec<_>>(),
            "{view}"
        );
        assert!(theirs_rows.len() >= 6, "{view}: {theirs:#}");
        let mut priced = 0;
        for (group, their_row) in &theirs_rows {
            let (their_tokens, their_cost) = figures(their_row);
            let (our_tokens, our_cost) = figures(ours_rows[group]);
            assert_eq!(our_tokens, their_tokens, "{view} {group}");
            if let (Some(a), Some(b)) = (our_cost, their_cost) {
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                    "{view} {group}: cost {a} against ccusage's {b}"
                );
                priced += 1;
            }
            let models = |row: &Value| {
                let mut names: Vec<String> =
                    serde_json::from_value(row["modelsUsed"].clone()).unwrap();
                names.sort();
                names
            };
            assert_eq!(
                models(ours_rows[group]),
                models(their_row),
                "{view} {group}"
            );
        }
        assert!(
            priced * 10 >= theirs_rows.len() * 8,
            "{view}: {priced} priced"
        );
        assert_eq!(
            figures(&ours["totals"]).0,
            figures(&theirs["totals"]).0,
            "{view} totals"
        );
    }
}

/// The report reads a Claude Code log with its own reader (each line's
/// usage fields only, for speed) beside the importer every other command
/// reads it with: both must count each response once, alike. On every
/// Claude Code log of the conformance data, `usage` and `stats` give the
/// same four token counts and the same tool errors.
#[test]
fn usage_and_stats_count_every_claude_code_log_alike() {
    let Some(data) = common::conformance_or_skip(None) else {
        return;
    };
    let mut logs = Vec::new();
    let mut dirs = vec![data.join("transcripts/claude-code")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                logs.push(path);
            }
        }
    }
    assert!(logs.len() >= 7, "{logs:?}");
    let mut counted = 0;
    for log in &logs {
        let file = log.to_str().unwrap();
        let usage = common::agentmsg(&["usage", "--session", "--json", "--timezone", "UTC", file]);
        assert_eq!(usage.code, 0, "{file}: {usage:?}");
        let usage: Value = serde_json::from_str(&usage.stdout).unwrap();
        let stats = common::agentmsg(&["stats", "--json", file]);
        assert_eq!(stats.code, 0, "{file}: {stats:?}");
        let stats: Value = serde_json::from_str(&stats.stdout).unwrap();
        let tokens = &stats["tokens"];
        let n = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("{file}: {stats:#}"));
        assert_eq!(
            figures(&usage["totals"]).0,
            [
                n(&tokens["input"]),
                n(&tokens["output"]),
                n(&tokens["cacheWrite"]),
                n(&tokens["cacheRead"]),
            ],
            "{file}"
        );
        assert_eq!(
            usage["totals"]["toolErrors"], stats["toolResultErrors"],
            "{file}"
        );
        counted += usize::from(figures(&usage["totals"]).0 != [0; 4]);
    }
    assert!(counted >= 7, "{counted} logs with usage");
}

/// `usage` reads a folder given to it, any agent's logs: a Codex rollout and
/// a pi session beside Claude Code logs each count, `totalCost` is `null`
/// (never 0) where a reply's model has no known price, and the text table
/// says which.
#[test]
fn usage_reads_every_agents_logs_and_says_what_it_cannot_price() {
    let Some(data) = common::conformance_or_skip(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("claude/p")).unwrap();
    common::write_lines(
        dir.path(),
        "claude/p/s1.jsonl",
        &[
            r#"{"type":"file-history-snapshot","messageId":"u1","snapshot":{},"isSnapshotUpdate":false}"#,
            r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s1","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-01-01T10:00:00.000Z"}"#,
            r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s1","type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"cache_creation":{"ephemeral_1h_input_tokens":20}}},"requestId":"r1","uuid":"a1","timestamp":"2026-01-01T10:00:01.000Z"}"#,
            r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s1","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"no such file","is_error":true}]},"uuid":"r1u","timestamp":"2026-01-01T10:00:02.000Z"}"#,
            r#"{"parentUuid":"r1u","isSidechain":false,"sessionId":"s1","type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"t2","name":"Read","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":9,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"cache_creation":{"ephemeral_1h_input_tokens":20}}},"requestId":"r1","uuid":"a2","timestamp":"2026-01-01T10:00:03.000Z"}"#,
            r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s1","type":"assistant","message":{"id":"msg_2","role":"assistant","model":"made-up-model","content":[{"type":"text","text":"hm"}],"stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":1}},"requestId":"r2","uuid":"a3","timestamp":"2026-01-02T10:00:00.000Z"}"#,
        ],
    );
    let pi = data.join("transcripts/pi/before-compaction.jsonl");
    std::fs::create_dir_all(dir.path().join("pi")).unwrap();
    std::fs::copy(&pi, dir.path().join("pi/session.jsonl")).unwrap();
    let run = common::agentmsg_in(
        dir.path(),
        &[
            "usage",
            "--daily",
            "--json",
            "--timezone",
            "UTC",
            "claude",
            "pi",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let days = rows(&report, "daily", "date");
    let first = days["2026-01-01"];
    // One response (two pieces): its last piece's usage, both its calls.
    assert_eq!(figures(first).0, [10, 9, 20, 100], "{first:#}");
    assert_eq!(first["toolCalls"], 2, "{first:#}");
    assert_eq!(first["toolErrors"], 1, "{first:#}");
    // $3 in, $15 out, $0.30 cache read, $6 one-hour cache write per million.
    let cost = first["totalCost"].as_f64().unwrap();
    assert!(
        (cost - (30.0 + 135.0 + 30.0 + 120.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    let second = days["2026-01-02"];
    assert_eq!(second["totalCost"], Value::Null, "{second:#}");
    assert_eq!(second["unpricedReplies"], 1, "{second:#}");
    assert!(
        days.values()
            .any(|d| d["agents"] == serde_json::json!(["pi"])),
        "{report:#}"
    );

    let text = common::agentmsg_in(dir.path(), &["usage", "--timezone", "UTC", "claude"]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(text.stdout.contains("2026-01-01"), "{}", text.stdout);
    assert!(
        text.stdout
            .contains("Replies without a known price, by model: made-up-model (1)"),
        "{}",
        text.stdout
    );
}

/// `--since` and `--until` keep the days between them (both included);
/// a date that is none is a usage error naming it.
#[test]
fn since_and_until_keep_the_days_between_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("p")).unwrap();
    let reply = |id: &str, day: &str| {
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"assistant","message":{{"id":"msg_{id}","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"hi"}}],"stop_reason":"end_turn","usage":{{"input_tokens":1,"output_tokens":2}}}},"requestId":"req_{id}","uuid":"a{id}","timestamp":"{day}T10:00:00.000Z"}}"#
        )
    };
    let lines = [
        reply("1", "2026-01-01"),
        reply("2", "2026-01-02"),
        reply("3", "2026-01-03"),
        reply("4", "2026-01-04"),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    common::write_lines(dir.path(), "p/s.jsonl", &lines);
    let run = common::agentmsg_in(
        dir.path(),
        &[
            "usage",
            "--json",
            "--timezone",
            "UTC",
            "--since",
            "2026-01-02",
            "--until",
            "20260103",
            "p",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let days = rows(&report, "daily", "date");
    assert_eq!(
        days.keys().collect::<Vec<_>>(),
        ["2026-01-02", "2026-01-03"],
        "{report:#}"
    );
    assert_eq!(figures(&report["totals"]).0, [2, 4, 0, 0], "{report:#}");

    for (flag, day) in [("--since", "yesterday"), ("--until", "2026-13-01")] {
        let run = common::agentmsg_in(dir.path(), &["usage", flag, day, "p"]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(
            run.stderr
                .contains(&format!("not a date (YYYY-MM-DD): {day}")),
            "{}",
            run.stderr
        );
    }
}

/// A generated Claude Code log of one session: two responses (one split
/// around its tool result), with 1-hour cache writes.
fn claude_log(session: &str, scale: u64) -> Vec<String> {
    let usage = |i: u64, o: u64| {
        format!(
            r#"{{"input_tokens":{},"output_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":{},"cache_creation":{{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":{}}}}}"#,
            i * scale,
            o * scale,
            40 * scale,
            7 * scale,
            40 * scale
        )
    };
    vec![
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,"sessionId":"{session}","type":"user","message":{{"role":"user","content":"fix it"}},"uuid":"{session}-u1","timestamp":"2026-01-01T10:00:00.000Z"}}"#
        ),
        format!(
            r#"{{"parentUuid":"{session}-u1","isSidechain":false,"sessionId":"{session}","type":"assistant","requestId":"req_{session}_1","message":{{"id":"msg_{session}_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"tool_use","id":"t1","name":"Read","input":{{"file_path":"a"}}}}],"stop_reason":"tool_use","usage":{}}},"uuid":"{session}-a1","timestamp":"2026-01-01T10:00:01.000Z"}}"#,
            usage(100, 10)
        ),
        format!(
            r#"{{"parentUuid":"{session}-a1","isSidechain":false,"sessionId":"{session}","type":"user","message":{{"role":"user","content":[{{"tool_use_id":"t1","type":"tool_result","content":"no such file","is_error":true}}]}},"uuid":"{session}-r1","timestamp":"2026-01-01T10:00:02.000Z"}}"#
        ),
        format!(
            r#"{{"parentUuid":"{session}-r1","isSidechain":false,"sessionId":"{session}","type":"assistant","requestId":"req_{session}_2","message":{{"id":"msg_{session}_2","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"Done."}}],"stop_reason":"end_turn","usage":{}}},"uuid":"{session}-a2","timestamp":"2026-01-02T10:00:03.000Z"}}"#,
            usage(200, 20)
        ),
    ]
}

/// Imports the logs `a` and `b` into the store at `address` (`#a`, `#b`
/// after it) and checks `usage` over the store against `usage` over the
/// logs: per session, the four token counts, the cost and the tool errors;
/// and over `#a` alone, session `a` only.
fn usage_over_store_agrees_with_the_logs(dir: &Path, address: &str, a: &str, b: &str) {
    for (session, name) in [(a, "a"), (b, "b")] {
        let lines = claude_log(session, if name == "a" { 1 } else { 3 });
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        common::write_lines(dir, &format!("{session}.jsonl"), &lines);
        let run = common::agentmsg_in(
            dir,
            &[
                "import",
                &format!("{session}.jsonl"),
                "-o",
                &format!("{address}#{session}"),
            ],
        );
        assert_eq!(run.code, 0, "{run:?}");
    }
    let report = |args: &[&str]| -> Value {
        let mut all = vec!["usage", "--session", "--json", "--timezone", "UTC"];
        all.extend_from_slice(args);
        let run = common::agentmsg_in(dir, &all);
        assert_eq!(run.code, 0, "{run:?}");
        serde_json::from_str(&run.stdout).unwrap()
    };
    let (log_a, log_b) = (format!("{a}.jsonl"), format!("{b}.jsonl"));
    let logs = report(&[&log_a, &log_b]);
    let whole = report(&[address]);
    let from_logs = rows(&logs, "sessions", "sessionId");
    let from_store = rows(&whole, "sessions", "sessionId");
    assert_eq!(from_store.keys().collect::<Vec<_>>(), [a, b], "{whole:#}");
    for (session, row) in &from_logs {
        let stored = from_store[session];
        assert_eq!(figures(stored), figures(row), "{session}: {whole:#}");
        assert!(figures(stored).1.is_some_and(|c| c > 0.0), "{whole:#}");
        assert_eq!(stored["toolErrors"], row["toolErrors"], "{whole:#}");
    }
    assert_eq!(figures(&whole["totals"]), figures(&logs["totals"]));
    assert_eq!(whole["totals"]["inputTokens"], 1200, "{whole:#}");
    let one = report(&[&format!("{address}#{a}")]);
    let one = rows(&one, "sessions", "sessionId");
    assert_eq!(one.keys().collect::<Vec<_>>(), [a]);
    assert_eq!(figures(one[a]), figures(from_logs[a]));
}

/// `usage` reads a store given by its address, as other commands do: every
/// session of an SQLite store, or the one after `#`; its figures are those
/// of the logs the sessions were imported from. A store that is not there
/// is an error naming it, and nothing is created.
#[test]
fn usage_reads_the_sessions_of_an_sqlite_store() {
    let dir = tempfile::tempdir().unwrap();
    usage_over_store_agrees_with_the_logs(dir.path(), "sqlite:store.db", "a", "b");
    let run = common::agentmsg_in(dir.path(), &["usage", "--json", "sqlite:none.db"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("none.db"), "{run:?}");
    assert!(!dir.path().join("none.db").exists());
    let run = common::agentmsg_in(dir.path(), &["usage", "--json", "sqlite:store.db#nope"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("sqlite:store.db: session `nope` not found"),
        "{run:?}"
    );
}

/// The same over a directory store (`dir:DIR`), which the command's help
/// names beside SQLite and PostgreSQL.
#[test]
fn usage_reads_the_sessions_of_a_directory_store() {
    let dir = tempfile::tempdir().unwrap();
    usage_over_store_agrees_with_the_logs(dir.path(), "dir:store", "a", "b");
}

/// The same over a PostgreSQL store (the server `.ci/run` starts, at
/// `AGENTMSG_PG_URL`), one session by its address; skipped loudly without
/// it, a failure under CI.
#[test]
fn usage_reads_the_sessions_of_a_postgres_store() {
    let Ok(url) = std::env::var("AGENTMSG_PG_URL") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "AGENTMSG_PG_URL is not set but CI is: the PostgreSQL tests must run"
        );
        eprintln!("\n*** SKIPPED usage_reads_the_sessions_of_a_postgres_store: AGENTMSG_PG_URL is not set ***\n");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let (a, b) = (
        format!("usage-a-{}-{stamp}", std::process::id()),
        format!("usage-b-{}-{stamp}", std::process::id()),
    );
    for session in [&a, &b] {
        let lines = claude_log(session, 2);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        common::write_lines(dir.path(), &format!("{session}.jsonl"), &lines);
        let run = common::agentmsg_in(
            dir.path(),
            &[
                "import",
                &format!("{session}.jsonl"),
                "-o",
                &format!("{url}#{session}"),
            ],
        );
        assert_eq!(run.code, 0, "{run:?}");
        let report = |path: &str| -> Value {
            let run = common::agentmsg_in(
                dir.path(),
                &["usage", "--session", "--json", "--timezone", "UTC", path],
            );
            assert_eq!(run.code, 0, "{run:?}");
            serde_json::from_str(&run.stdout).unwrap()
        };
        let stored = report(&format!("{url}#{session}"));
        let logged = report(&format!("{session}.jsonl"));
        let stored_rows = rows(&stored, "sessions", "sessionId");
        assert_eq!(stored_rows.keys().collect::<Vec<_>>(), [session]);
        assert_eq!(
            figures(stored_rows[session.as_str()]),
            figures(rows(&logged, "sessions", "sessionId")[session.as_str()]),
            "{stored:#}"
        );
        // A password in the address is never shown.
        let password = url
            .split_once("://")
            .and_then(|(_, rest)| rest.split_once('@'))
            .and_then(|(user, _)| user.split_once(':'))
            .map(|(_, password)| password)
            .filter(|p| p.len() >= 4);
        if let Some(password) = password {
            assert!(!serde_json::to_string(&stored).unwrap().contains(password));
        }
    }
}
