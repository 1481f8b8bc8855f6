//! `agentmsg` on small hand-made files: output and exit codes.

use crate::common;

use common::{agentmsg, agentmsg_in, fixture_lines, fixtures, schema_errors};
use serde_json::Value;

#[test]
fn check_reports_every_pairing_problem_with_its_line() {
    let run = agentmsg(&["check", "orphaned.jsonl"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        "orphaned.jsonl:2: error[missing-result]: the `cat` call `call_b` has no result\n\
         orphaned.jsonl:4: warning[unknown-kind]: unknown kind `notice`: no registered type claims it; kept as is\n\
         orphaned.jsonl:5: error[duplicate-result]: second result for `call_a`\n\
         orphaned.jsonl:7: error[result-without-call]: result for `ghost` answers no earlier call\n\
         orphaned.jsonl: 8 lines, 8 messages: 3 errors, 1 warnings\n"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn check_reports_undecodable_invalid_and_torn_lines() {
    let run = agentmsg(&["check", "broken.jsonl"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{}", run.stdout);
    assert!(lines[0].starts_with("broken.jsonl:2: error[undecodable]: not a JSON object"));
    assert_eq!(
        lines[1],
        "broken.jsonl:3: error[undecodable]: the object has no \"role\""
    );
    assert!(lines[2].starts_with("broken.jsonl:4: error[invalid-message]: `assistant` line does not decode: invalid type: string \"not an array\""));
    assert!(lines[3].starts_with("broken.jsonl:5: error[invalid-message]: `user` line does not decode: `thinking` blocks cannot appear in user messages"));
    assert!(lines[4].starts_with("broken.jsonl:8: error[torn-line]: torn last line: 37 bytes"));
    assert_eq!(
        lines[5],
        "broken.jsonl: 8 lines, 4 messages: 5 errors, 0 warnings"
    );
}

#[test]
fn check_maps_json_array_elements_to_their_lines() {
    let run = agentmsg(&["check", "array.json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        "array.json:3: error[missing-result]: the `read` call `functions.read:0` has no result\n\
         array.json: 13 lines, 3 messages: 1 errors, 0 warnings\n"
    );
}

#[test]
fn warnings_alone_exit_zero_unless_denied() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"someday\",\"x\":1}\n\
         {\"role\":\"assistant\",\"content\":[],\"stopReason\":\"aborted\",\"errorMessage\":\"cancelled\"}\n",
    )
    .unwrap();
    let run = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("t.jsonl:2: warning[unknown-kind]"));
    assert!(run.stdout.contains("t.jsonl:3: warning[failed-turn]"));
    assert!(run
        .stdout
        .ends_with("t.jsonl: 3 lines, 3 messages: 0 errors, 2 warnings\n"));
    let denied = agentmsg_in(dir.path(), &["check", "--deny-warnings", "t.jsonl"]);
    assert_eq!(denied.code, 1, "{denied:?}");
    let quiet = agentmsg_in(dir.path(), &["check", "-q", "t.jsonl"]);
    assert_eq!(
        quiet.stdout,
        "t.jsonl: 3 lines, 3 messages: 0 errors, 2 warnings\n"
    );
}

#[test]
fn check_warns_of_fields_a_rewrite_would_drop() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"role\":\"user\",\"content\":\"hi\",\"mood\":\"curious\",\"timestamp\":0}\n\
         {\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\",\"thinkingSignature\":\"s\"},\
         {\"type\":\"text\",\"text\":\"a\",\"textSignature\":\"x\",\"annotations\":[1]}],\"stopReason\":\"stop\",\"latencyMs\":9}\n\
         {\"role\":\"compactionSummary\",\"summary\":\"s\",\"tokensBefore\":3,\"trigger\":\"auto\"}\n\
         {\"role\":\"someday\",\"anything\":1}\n",
    )
    .unwrap();
    let run = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let tail =
        ": kept in this file, but dropped by a program that decodes the message and writes it back";
    assert_eq!(
        run.stdout,
        format!(
            "t.jsonl:1: warning[dropped-field]: `mood` is not a field of user messages{tail}\n\
             t.jsonl:2: warning[dropped-field]: `content[1].annotations`, `latencyMs` are not fields of assistant messages{tail}\n\
             t.jsonl:3: warning[dropped-field]: `trigger` is not a field of `compactionSummary` messages{tail}\n\
             t.jsonl:4: warning[unknown-kind]: unknown kind `someday`: no registered type claims it; kept as is\n\
             t.jsonl: 4 lines, 4 messages: 0 errors, 4 warnings\n"
        )
    );
    let json = agentmsg_in(dir.path(), &["check", "--json", "t.jsonl"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report[0]["diagnostics"][0]["code"], "dropped-field");
    assert_eq!(report[0]["diagnostics"][0]["line"], 1);
    let denied = agentmsg_in(dir.path(), &["check", "--deny-warnings", "t.jsonl"]);
    assert_eq!(denied.code, 1, "{denied:?}");
}

#[test]
fn a_malformed_line_of_an_unknown_kind_is_an_error_and_survives_repair() {
    // A torn write followed by an append: one line of an unclaimed kind that
    // starts and ends like an object but is not JSON. The reader keeps such a
    // line without parsing it; the checker must still find it.
    let dir = tempfile::tempdir().unwrap();
    let merged = "{\"role\":\"someday\",\"x\":\"ab{\"role\":\"user\",\"content\":\"hi\"}";
    std::fs::write(
        dir.path().join("t.jsonl"),
        format!("{{\"role\":\"user\",\"content\":\"a\"}}\n{merged}\n"),
    )
    .unwrap();
    let run = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert_eq!(run.code, 1, "{run:?}");
    // The appended line is found inside it, and the fragment is the error.
    assert!(
        run.stdout.starts_with(
            "t.jsonl:2: warning[lost-newline]: 2 entries on one line (a fragment cut off by a crash, then a whole line)"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("t.jsonl:2: error[undecodable]: not a JSON object: EOF"),
        "{}",
        run.stdout
    );
    let repair = agentmsg_in(dir.path(), &["repair", "t.jsonl", "-o", "out.jsonl"]);
    assert_eq!(repair.code, 0, "{repair:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let (fragment, appended) = merged.split_at(merged.find("{\"role\":\"user").unwrap());
    let lines: Vec<&str> = out.lines().skip(1).collect();
    // The fragment's bytes are kept where the report names them: an
    // `extension` line that `check` accepts (it was left as a line `check`
    // calls undecodable).
    let kept = format!(
        r#"{{"role":"extension","kind":"agentmsg.fragment","data":{}}}"#,
        serde_json::Value::from(fragment)
    );
    assert_eq!(lines, [kept.as_str(), appended]);
    assert!(
        repair.stdout.contains(
            "t.jsonl:2: kept the fragment a crash cut off (25 bytes) as an `extension` line of kind `agentmsg.fragment`"
        ),
        "{repair:?}"
    );
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}");
    assert!(
        check.stdout.ends_with("0 errors, 0 warnings\n"),
        "{check:?}"
    );
}

/// A file torn by a crash and then appended to by agentmsg's own writer
/// (which ends the torn line with a newline first), cut inside a value or
/// inside a character, and a torn last line: `repair` keeps each fragment's
/// bytes in the extension line its report names, and `check` finds the copy
/// clean.
#[test]
fn repair_of_a_torn_then_appended_file_checks_clean_and_keeps_the_fragment() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let first = "{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}\n";
    let cuts: [&[u8]; 2] = [
        b"{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"he",
        b"{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"caf\xc3",
    ];
    for (i, cut) in cuts.into_iter().enumerate() {
        let name = format!("t{i}.jsonl");
        let path = dir.path().join(&name);
        let mut bytes = first.as_bytes().to_vec();
        bytes.extend_from_slice(cut);
        std::fs::write(&path, &bytes).unwrap();
        let mut writer = agentmsg::JsonlWriter::append(&path).unwrap();
        writer
            .write(&agentmsg::AgentMessage::from(agentmsg::Message::user(
                "again",
            )))
            .unwrap();
        writer.flush().unwrap();
        drop(writer);
        let before = agentmsg_in(dir.path(), &["check", &name]);
        assert_eq!(before.code, 1, "{before:?}");
        let repair = agentmsg_in(dir.path(), &["repair", &name, "-o", "out.jsonl"]);
        assert_eq!(repair.code, 0, "{repair:?}");
        let data = match std::str::from_utf8(cut) {
            Ok(text) => serde_json::Value::from(text),
            Err(_) => serde_json::json!({
                "base64": base64::engine::general_purpose::STANDARD.encode(cut)
            }),
        };
        let kept = format!(r#"{{"role":"extension","kind":"agentmsg.fragment","data":{data}}}"#);
        let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[1], kept, "{out}");
        assert!(lines[2].contains("again"), "{out}");
        assert!(
            repair.stdout.contains(&format!(
                "{name}:2: kept the fragment a crash cut off ({} bytes) as an `extension` line of kind `agentmsg.fragment`",
                cut.len()
            )),
            "{repair:?}"
        );
        let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
        assert_eq!(check.code, 0, "{check:?}");
        assert!(
            check.stdout.ends_with("0 errors, 0 warnings\n"),
            "{check:?}"
        );
        // The kept bytes are the fragment's, exactly.
        let line: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        let back = match &line["data"] {
            serde_json::Value::String(text) => text.as_bytes().to_vec(),
            other => base64::engine::general_purpose::STANDARD
                .decode(other["base64"].as_str().unwrap())
                .unwrap(),
        };
        assert_eq!(back, cut);

        // Torn and not appended to: the same, for the last line.
        std::fs::write(&path, &bytes[..first.len() + cut.len()]).unwrap();
        let repair = agentmsg_in(dir.path(), &["repair", &name, "-o", "out.jsonl"]);
        assert_eq!(repair.code, 0, "{repair:?}");
        let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
        assert_eq!(out, format!("{first}{kept}\n"));
        assert!(
            repair
                .stdout
                .contains("kept the torn last line a crash cut off"),
            "{repair:?}"
        );
        let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
        assert_eq!(check.code, 0, "{check:?}");
    }
}

#[test]
fn a_clean_transcript_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ok.jsonl"),
        "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"}],\"stopReason\":\"stop\"}\n",
    )
    .unwrap();
    let run = agentmsg_in(dir.path(), &["check", "ok.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "ok.jsonl: 2 lines, 2 messages: 0 errors, 0 warnings\n"
    );
}

#[test]
fn a_missing_file_is_an_io_error_and_the_others_are_still_checked() {
    let run = agentmsg(&["check", "no-such-file.jsonl", "array.json"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("cannot read no-such-file.jsonl"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("array.json: 13 lines"),
        "{}",
        run.stdout
    );
    let stats = agentmsg(&["stats", "no-such-file.jsonl"]);
    assert_eq!(stats.code, 2);
    assert!(stats
        .stderr
        .starts_with("agentmsg: error: cannot read no-such-file.jsonl"));
}

#[test]
fn usage_errors_exit_two() {
    for args in [
        &[][..],
        &["check"][..],
        &["frobnicate"][..],
        &["project", "orphaned.jsonl", "--model", "m"][..],
        &[
            "project",
            "orphaned.jsonl",
            "--api",
            "anthropic-msgs",
            "--model",
            "m",
        ][..],
        &[
            "project",
            "orphaned.jsonl",
            "--api",
            "anthropic-messages",
            "--model",
            " ",
        ][..],
        &["repair", "orphaned.jsonl"][..],
        &["stats"][..],
        &[
            "project",
            "orphaned.jsonl",
            "--api",
            "openai-responses",
            "--model",
            "m",
            "--tools",
            "array.json",
        ][..],
        &[
            "project",
            "orphaned.jsonl",
            "--api",
            "openai-responses",
            "--model",
            "m",
            "--tools",
            "missing.json",
        ][..],
    ] {
        let run = agentmsg(args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(!run.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn every_command_has_help_with_the_exit_codes() {
    for command in ["check", "stats", "project", "repair", "import", "schema"] {
        let run = agentmsg(&[command, "--help"]);
        assert_eq!(run.code, 0, "{command}: {run:?}");
        assert!(
            run.stdout.contains("Exit codes:"),
            "{command}: {}",
            run.stdout
        );
        assert!(run.stdout.contains("Usage: agentmsg"), "{command}");
    }
    let top = agentmsg(&["--help"]);
    assert_eq!(top.code, 0);
    for command in ["check", "stats", "project", "repair", "import", "schema"] {
        assert!(top.stdout.contains(command));
    }
}

#[test]
fn stats_counts_tokens_cost_and_cache_by_model() {
    let run = agentmsg(&["stats", "--json", "orphaned.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let stats: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        stats["kinds"],
        serde_json::json!({"assistant": 2, "notice": 1, "toolResult": 3, "user": 2})
    );
    assert_eq!(stats["messages"], 8);
    assert_eq!(stats["keptUnknown"], 1);
    assert_eq!(stats["toolCalls"], 2);
    assert_eq!(
        stats["toolCallsByName"],
        serde_json::json!({"cat": 1, "ls": 1})
    );
    assert_eq!(stats["toolResults"], 3);
    assert_eq!(stats["toolResultErrors"], 1);
    assert_eq!(stats["thinkingBlocks"], 1);
    assert_eq!(
        stats["stopReasons"],
        serde_json::json!({"stop": 1, "toolUse": 1})
    );
    assert_eq!(
        stats["tokens"],
        // The second message reports no total: its sum (50 + 10 + 0 + 25) stands in.
        serde_json::json!({"input": 150, "output": 30, "reasoning": 4, "cacheRead": 300, "cacheWrite": 25, "total": 505})
    );
    let total = stats["cost"]["total"].as_f64().unwrap();
    assert!((total - 0.0009).abs() < 1e-12, "{total}");
    let rate = stats["cacheHitRate"].as_f64().unwrap();
    assert!((rate - 300.0 / 475.0).abs() < 1e-12, "{rate}");
    let models = stats["models"].as_array().unwrap();
    assert_eq!(models.len(), 2);
    assert_eq!(models[0]["model"], "claude-sonnet-4-5");
    assert_eq!(models[0]["toolCalls"], 2);
    assert_eq!(models[0]["tokens"]["total"], 420);
    assert_eq!(models[1]["provider"], "openai");
    assert_eq!(models[1]["cacheHitRate"], 0.0);

    let text = agentmsg(&["stats", "orphaned.jsonl"]);
    assert_eq!(text.code, 0);
    assert!(
        text.stdout.contains("tool calls: 2 (cat 1, ls 1)"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("cache hit rate: 63.2%"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("cost: $0.0009"), "{}", text.stdout);
    assert!(text.stdout.contains(
        "anthropic/claude-sonnet-4-5 (anthropic-messages): 1 assistant messages, 2 tool calls"
    ));
}

#[test]
fn stats_counts_broken_lines_and_warns_on_stderr() {
    let run = agentmsg(&["stats", "--json", "broken.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let stats: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(stats["kinds"]["(undecodable)"], 2);
    assert_eq!(stats["kinds"]["(torn)"], 1);
    assert_eq!(stats["kinds"]["assistant"], 2);
    assert!(run.stderr.contains("broken.jsonl:8: error[torn-line]"));
}

fn repaired(input: &str) -> (common::Run, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let run = agentmsg(&["repair", input, "-o", out.to_str().unwrap()]);
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    (run, text, dir)
}

#[test]
fn repair_pairs_calls_and_results_and_changes_nothing_else() {
    let (run, text, dir) = repaired("orphaned.jsonl");
    assert_eq!(run.code, 0, "{run:?}");
    let src = fixture_lines("orphaned.jsonl");
    let synthetic = "{\"role\":\"toolResult\",\"toolCallId\":\"call_b\",\"toolName\":\"cat\",\"content\":[{\"type\":\"text\",\"text\":\"No result provided\"}],\"isError\":true,\"timestamp\":1001,\"id\":\"m2/call_b\",\"turnId\":\"t1\"}";
    let expected = [
        src[0].as_str(),
        &src[1], // thinking and its signature untouched
        &src[2],
        synthetic,
        &src[3], // the unknown kind, byte for byte
        &src[5],
        &src[7],
        "",
    ]
    .join("\n");
    assert_eq!(text, expected);
    assert_eq!(
        run.stdout.lines().take(3).collect::<Vec<_>>(),
        [
            "orphaned.jsonl:3: added a synthetic error result for the `cat` call `call_b` of line 2",
            "orphaned.jsonl:5: dropped: second result for `call_a`",
            "orphaned.jsonl:7: dropped: result for `ghost` answers no earlier call",
        ]
    );
    assert!(run.stdout.contains("3 changes, written to"));

    // The copy checks clean (the unknown kind stays a warning), and repairing it
    // again changes nothing.
    let out = dir.path().join("out.jsonl");
    let check = agentmsg(&["check", out.to_str().unwrap()]);
    assert_eq!(check.code, 0, "{check:?}");
    assert!(check
        .stdout
        .ends_with(": 7 lines, 7 messages: 0 errors, 1 warnings\n"));
    let again = dir.path().join("again.jsonl");
    let run = agentmsg(&[
        "repair",
        out.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert!(
        run.stdout.contains(": 0 changes, written to"),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
}

#[test]
fn repair_keeps_undecodable_lines_blank_lines_and_the_torn_one() {
    let (run, text, _dir) = repaired("broken.jsonl");
    assert_eq!(run.code, 0, "{run:?}");
    // Nothing to pair: the copy is the file, byte for byte (line 6 is blank),
    // with the torn line 8 kept whole in an extension line that `check`
    // accepts.
    let src = std::fs::read_to_string(fixtures().join("broken.jsonl")).unwrap();
    assert!(!src.ends_with('\n'));
    let (head, torn) = src.split_at(src.rfind('\n').unwrap() + 1);
    let kept = format!(
        r#"{{"role":"extension","kind":"agentmsg.fragment","data":{}}}"#,
        serde_json::Value::from(torn)
    );
    assert_eq!(text, format!("{head}{kept}\n"));
    assert!(run.stdout.contains(
        "broken.jsonl:8: kept the torn last line a crash cut off (37 bytes) as an `extension` line of kind `agentmsg.fragment`, its text whole in `data`"
    ), "{}", run.stdout);
    assert!(run
        .stdout
        .contains("2 undecodable lines kept byte for byte"));
}

#[test]
fn repair_writes_json_lines_from_a_json_array() {
    let (run, text, _dir) = repaired("array.json");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        text,
        "{\"role\":\"user\",\"content\":\"read a.rs\",\"timestamp\":1}\n\
         {\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"functions.read:0\",\"name\":\"read\",\"arguments\":{\"path\":\"a.rs\"}}],\"stopReason\":\"toolUse\",\"timestamp\":2}\n\
         {\"role\":\"toolResult\",\"toolCallId\":\"functions.read:0\",\"toolName\":\"read\",\"content\":[{\"type\":\"text\",\"text\":\"No result provided\"}],\"isError\":true,\"timestamp\":2}\n\
         {\"role\":\"compactionSummary\",\"summary\":\"Read a file.\",\"tokensBefore\":10}\n"
    );
}

#[test]
fn repair_dry_run_writes_nothing_and_in_place_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::copy(fixtures().join("orphaned.jsonl"), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let dry = agentmsg_in(dir.path(), &["repair", "--dry-run", "t.jsonl"]);
    assert_eq!(dry.code, 0, "{dry:?}");
    assert!(dry
        .stdout
        .ends_with("t.jsonl: 3 changes (dry run, nothing written)\n"));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let in_place = agentmsg_in(dir.path(), &["repair", "t.jsonl", "-o", "t.jsonl"]);
    assert_eq!(in_place.code, 0, "{in_place:?}");
    assert_eq!(agentmsg_in(dir.path(), &["check", "t.jsonl"]).code, 0);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
}

const APIS: [(&str, &str); 4] = [
    (
        "anthropic-messages",
        "anthropic-messages-request.schema.json",
    ),
    ("openai-completions", "openai-chat-request.schema.json"),
    ("openai-responses", "openai-responses-request.schema.json"),
    (
        "google-generative-ai",
        "gemini-generatecontent-request.schema.json",
    ),
];

#[test]
fn project_prints_a_body_each_provider_schema_accepts_and_reports_by_line() {
    for file in ["orphaned.jsonl", "array.json"] {
        for (api, schema) in APIS {
            let mut args = vec![
                "project",
                file,
                "--api",
                api,
                "--model",
                "claude-sonnet-4-5",
                "--system",
                "Be terse.",
            ];
            if file == "orphaned.jsonl" {
                args.extend(["--tools", "tools.json", "--max-tokens", "1000"]);
            }
            let run = agentmsg(&args);
            assert_eq!(run.code, 0, "{file} {api}: {run:?}");
            let mut body: Value = serde_json::from_str(&run.stdout).unwrap();
            if api == "google-generative-ai" {
                // The model is in Gemini's URL, not in its body.
                if let Some(map) = body.as_object_mut() {
                    map.remove("model");
                }
            }
            let errors = schema_errors(schema, &body);
            assert!(errors.is_empty(), "{file} {api}: {errors:?}");
            if file == "orphaned.jsonl" {
                assert!(
                    run.stdout.contains("Print a file."),
                    "{api}: the tools are sent"
                );
                assert!(
                    run.stdout.contains("1000"),
                    "{api}: the token limit is sent"
                );
                assert!(!run.stderr.contains("no tools declared"));
            } else {
                assert!(
                    run.stderr.contains(
                        "array.json: note: 1 tool calls in the history but no tools declared"
                    ),
                    "{api}: {}",
                    run.stderr
                );
                // Only Anthropic's own refusal is named as Anthropic's.
                assert_eq!(
                    run.stderr.contains("Anthropic refuses"),
                    api == "anthropic-messages",
                    "{api}: {}",
                    run.stderr
                );
            }
            let line = if file == "array.json" { 3 } else { 2 };
            assert!(
                run.stderr
                    .contains(&format!("{file}: line {line}: synthetic result")),
                "{file} {api}: {}",
                run.stderr
            );
        }
    }
}

#[test]
fn project_replays_thinking_only_to_the_model_that_wrote_it() {
    let same = agentmsg(&[
        "project",
        "orphaned.jsonl",
        "--api",
        "anthropic-messages",
        "--model",
        "claude-sonnet-4-5",
    ]);
    assert_eq!(same.code, 0, "{same:?}");
    assert!(
        same.stdout.contains("c2lnLTE="),
        "the signature is replayed"
    );
    assert!(!same.stderr.contains("dropped thinking"));
    assert!(
        same.stderr
            .contains("orphaned.jsonl: line 5: dropped result"),
        "{}",
        same.stderr
    );
    assert!(
        same.stderr
            .contains("orphaned.jsonl: line 7: dropped result"),
        "{}",
        same.stderr
    );
    assert!(same
        .stderr
        .contains("orphaned.jsonl: note: 1 kept (unknown) lines are never sent to a model"));

    let other_model = agentmsg(&[
        "project",
        "orphaned.jsonl",
        "--api",
        "anthropic-messages",
        "--model",
        "claude-opus-4-5",
    ]);
    assert!(!other_model.stdout.contains("c2lnLTE="));
    assert!(
        other_model
            .stderr
            .contains("orphaned.jsonl: line 2: dropped thinking"),
        "{}",
        other_model.stderr
    );

    let other_provider = agentmsg(&[
        "project",
        "orphaned.jsonl",
        "--api",
        "anthropic-messages",
        "--model",
        "claude-sonnet-4-5",
        "--provider",
        "bedrock",
    ]);
    assert_eq!(other_provider.code, 0, "{other_provider:?}");
    assert!(!other_provider.stdout.contains("c2lnLTE="));
    assert!(other_provider
        .stderr
        .contains("for bedrock/anthropic-messages/claude-sonnet-4-5"));
    assert!(other_provider
        .stderr
        .contains("orphaned.jsonl: line 2: dropped thinking"));
}

#[test]
fn project_keeps_reasoning_for_the_provider_named() {
    // A transcript written through an OpenAI-compatible provider: its reasoning
    // goes back to that provider only when it is named.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"role\":\"user\",\"content\":\"hi\"}\n\
         {\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"SECRET-REASONING\",\"signature\":\"sig-xyz\"},{\"type\":\"text\",\"text\":\"hello\"}],\"api\":\"anthropic-messages\",\"provider\":\"vertex\",\"model\":\"claude-sonnet-4-5\",\"stopReason\":\"stop\"}\n\
         {\"role\":\"user\",\"content\":\"again\"}\n",
    )
    .unwrap();
    let args = [
        "project",
        "t.jsonl",
        "--api",
        "anthropic-messages",
        "--model",
        "claude-sonnet-4-5",
    ];
    let default = agentmsg_in(dir.path(), &args);
    assert_eq!(default.code, 0, "{default:?}");
    assert!(!default.stdout.contains("SECRET-REASONING"));
    let named = agentmsg_in(dir.path(), &[&args[..], &["--provider", "vertex"]].concat());
    assert_eq!(named.code, 0, "{named:?}");
    assert!(
        named.stdout.contains("SECRET-REASONING"),
        "{}",
        named.stdout
    );
    assert!(named.stdout.contains("sig-xyz"));
    assert!(named.stderr.contains("0 changes"), "{}", named.stderr);
}

#[test]
fn schema_prints_a_draft_2020_12_schema_that_compiles() {
    let run = agentmsg(&["schema"]);
    assert_eq!(run.code, 0, "{run:?}");
    let schema: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(
        schema,
        agentmsg_runtime::transcript::transcript_line_schema()
    );
    jsonschema::validator_for(&schema).expect("compiles");
}

/// The lines `check` reports as undecodable, invalid, torn or of an unknown
/// kind are exactly those the runtime's strict reader refuses.
#[test]
fn check_agrees_with_the_strict_reader() {
    use agentmsg_runtime::transcript::ReadError;
    use agentmsg_runtime::JsonlReader;
    for name in ["orphaned.jsonl", "broken.jsonl"] {
        let bytes = std::fs::read(fixtures().join(name)).unwrap();
        let strict: Vec<usize> = JsonlReader::new(&bytes[..])
            .strict()
            .filter_map(Result::err)
            .map(|e| match e {
                ReadError::Line { line, .. }
                | ReadError::TornLastLine { line, .. }
                | ReadError::NotUtf8 { line, .. } => line,
                other => panic!("{name}: unexpected {other}"),
            })
            .collect();
        let run = agentmsg(&["check", name]);
        let reported: Vec<usize> = run
            .stdout
            .lines()
            .filter(|l| {
                [
                    "undecodable",
                    "invalid-message",
                    "torn-line",
                    "unknown-kind",
                    "not-utf8",
                ]
                .iter()
                .any(|code| l.contains(&format!("[{code}]")))
            })
            .map(|l| l.split(':').nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(!strict.is_empty(), "{name}");
        assert_eq!(reported, strict, "{name}");
    }
}

#[test]
fn a_dash_reads_standard_input() {
    let input = std::fs::read(fixtures().join("orphaned.jsonl")).unwrap();
    let run = common::agentmsg_stdin(&fixtures(), &["check", "-"], &input);
    assert_eq!(run.code, 1, "{run:?}");
    let stdout = run.stdout;
    assert!(stdout.starts_with("-:2: error[missing-result]"), "{stdout}");
    assert!(
        stdout.ends_with("-: 8 lines, 8 messages: 3 errors, 1 warnings\n"),
        "{stdout}"
    );
}

#[test]
fn check_json_reports_each_file() {
    let run = agentmsg(&["check", "--json", "orphaned.jsonl", "array.json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let reports: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(reports.as_array().unwrap().len(), 2);
    assert_eq!(reports[0]["file"], "orphaned.jsonl");
    assert_eq!(reports[0]["errors"], 3);
    assert_eq!(reports[0]["warnings"], 1);
    assert_eq!(
        reports[0]["diagnostics"][0],
        serde_json::json!({"line": 2, "severity": "error", "code": "missing-result", "message": "the `cat` call `call_b` has no result"})
    );
    assert_eq!(reports[1]["lines"], 13);
    assert_eq!(reports[1]["diagnostics"][0]["line"], 3);
}

#[test]
fn an_output_that_cannot_be_written_exits_two() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no/such/dir/out.jsonl");
    let run = agentmsg(&["repair", "orphaned.jsonl", "-o", out.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("agentmsg: error: cannot write"),
        "{}",
        run.stderr
    );
    let run = agentmsg(&["import", "pi-v3.jsonl", "-o", out.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("cannot write"), "{}", run.stderr);
}

#[test]
fn another_agents_log_is_read_as_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let logs = [
        (
            "pi.jsonl",
            r#"{"type":"session","version":3,"id":"a","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
            0,
        ),
        (
            "claude.jsonl",
            r#"{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","parentUuid":null,"sessionId":"s"}"#,
            1,
        ),
        (
            "codex.jsonl",
            r#"{"timestamp":"2025-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"x"}}"#,
            // The metadata, kept as an `extension` line.
            1,
        ),
    ];
    for (name, line, messages) in logs {
        std::fs::write(dir.path().join(name), format!("{line}\n")).unwrap();
        let check = agentmsg_in(dir.path(), &["check", name]);
        assert_eq!(check.code, 0, "{check:?}");
        assert!(
            check
                .stdout
                .contains(&format!("{name}: 1 lines, {messages} messages")),
            "{check:?}"
        );
        let stats = agentmsg_in(dir.path(), &["stats", name]);
        assert_eq!(stats.code, 0, "{stats:?}");
        assert!(
            stats.stdout.contains(&format!("{messages} messages")),
            "{stats:?}"
        );
    }
    // A transcript is not mistaken for one.
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"role\":\"user\",\"content\":\"hi\"}\n",
    )
    .unwrap();
    let stats = agentmsg_in(dir.path(), &["stats", "t.jsonl"]);
    assert!(!stats.stderr.contains("looks like"), "{stats:?}");
}

#[test]
fn stats_prices_replies_without_a_cost_and_says_which_are_unknown() {
    let dir = tempfile::tempdir().unwrap();
    // claude-sonnet-4-5: $3 in, $15 out per million tokens (the price
    // database's rates). A reply with a cost keeps it; one of a model no
    // price list knows has an unknown cost, and so has the sum.
    let lines = [
        r#"{"role":"user","content":"hi","timestamp":1}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"a"}],"provider":"anthropic","model":"claude-sonnet-4-5-20250929","api":"anthropic-messages","usage":{"input":100000,"output":10000,"cacheRead":0,"cacheWrite":0,"totalTokens":110000},"stopReason":"stop","timestamp":1765233669389}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"b"}],"provider":"anthropic","model":"claude-sonnet-4-5","api":"anthropic-messages","usage":{"input":10,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":0.5,"output":0.5,"cacheRead":0,"cacheWrite":0,"total":1.0}},"stopReason":"stop","timestamp":1765233669390}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"c"}],"provider":"x","model":"someone-elses-model","api":"x","usage":{"input":1000,"output":1000,"cacheRead":0,"cacheWrite":0,"totalTokens":2000},"stopReason":"stop","timestamp":1765233669391}"#,
    ];
    std::fs::write(dir.path().join("t.jsonl"), lines.join("\n")).unwrap();
    let run = common::agentmsg_in(dir.path(), &["stats", "--json", "t.jsonl"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(stats["pricedFromCatalog"], 1);
    assert_eq!(stats["unpricedReplies"], 1);
    assert_eq!(
        stats["unpricedModels"],
        serde_json::json!(["someone-elses-model"])
    );
    assert!(
        stats["cost"].is_null(),
        "an unknown part makes the sum unknown: {}",
        stats["cost"]
    );
    // 0.3 + 0.15 for the priced reply, 1.0 as recorded.
    let priced = stats["pricedCost"]["total"].as_f64().unwrap();
    assert!((priced - 1.45).abs() < 1e-9, "{priced}");
    let models = stats["models"].as_array().unwrap();
    let of = |name: &str| models.iter().find(|m| m["model"] == name).unwrap().clone();
    assert!(of("someone-elses-model")["cost"].is_null());
    assert_eq!(of("someone-elses-model")["unpricedReplies"], 1);
    assert!((of("claude-sonnet-4-5")["cost"]["total"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    let text = common::agentmsg_in(dir.path(), &["stats", "t.jsonl"]);
    assert!(
        text.stdout.contains(
            "cost: unknown: 1 assistant messages without a price (someone-elses-model); $1.4500 for the others"
        ),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("x/someone-elses-model (x): 1 assistant messages, 0 tool calls, cost unknown (1 without a price)"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains(
            "1 assistant messages without a cost priced from the price database at their date"
        ),
        "{}",
        text.stdout
    );
    // Every reply priced: the sum is known.
    std::fs::write(dir.path().join("p.jsonl"), lines[..3].join("\n")).unwrap();
    let run = common::agentmsg_in(dir.path(), &["stats", "--json", "p.jsonl"]);
    let stats: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(stats["unpricedReplies"], 0);
    assert!((stats["cost"]["total"].as_f64().unwrap() - 1.45).abs() < 1e-9);
}

#[test]
fn project_sends_the_request_options_each_api_takes_and_says_what_it_could_not() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("answer.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}"#,
    )
    .unwrap();
    let schema = schema.to_str().unwrap();
    let run = |api: &str, model: &str| {
        let run = agentmsg(&[
            "project",
            "orphaned.jsonl",
            "--api",
            api,
            "--model",
            model,
            "--tools",
            "tools.json",
            "--reasoning",
            "high",
            "--temperature",
            "0.2",
            "--tool-choice",
            "cat",
            "--json-schema",
            schema,
            "--cache-key",
            "k1",
            "--max-tokens",
            "20000",
            "--compact",
        ]);
        assert_eq!(run.code, 0, "{run:?}");
        let body: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        (body, run.stderr)
    };
    let (body, stderr) = run("anthropic-messages", "claude-sonnet-4-5");
    assert_eq!(body["thinking"]["budget_tokens"], 16_000, "{body}");
    assert_eq!(
        body["output_config"]["format"]["schema"]["required"][0],
        "answer"
    );
    assert!(body
        .to_string()
        .contains(r#""cache_control":{"type":"ephemeral"}"#));
    // Thinking takes only `auto` and `none`; Anthropic no longer takes a temperature.
    assert_eq!(body["tool_choice"]["type"], "auto", "{body}");
    assert!(stderr.contains("option tool_choice: changed"), "{stderr}");
    assert!(stderr.contains("option temperature: not sent"), "{stderr}");

    let (body, stderr) = run("openai-completions", "gpt-5");
    assert_eq!(body["reasoning_effort"], "high");
    assert_eq!(body["tool_choice"]["function"]["name"], "cat", "{body}");
    assert_eq!(body["response_format"]["json_schema"]["name"], "answer");
    assert_eq!(body["prompt_cache_key"], "k1");
    assert!(body.get("temperature").is_none());
    assert!(stderr.contains("option temperature: not sent"), "{stderr}");

    let (body, _) = run("openai-responses", "gpt-5");
    assert_eq!(body["reasoning"]["effort"], "high");
    assert_eq!(body["include"][0], "reasoning.encrypted_content");
    assert_eq!(body["text"]["format"]["strict"], true);
    assert_eq!(body["prompt_cache_key"], "k1");

    let (body, stderr) = run("google-generative-ai", "gemini-2.5-pro");
    let config = &body["generationConfig"];
    assert_eq!(config["thinkingConfig"]["thinkingBudget"], 16_000, "{body}");
    assert_eq!(config["temperature"], 0.2);
    assert_eq!(config["responseMimeType"], "application/json");
    assert_eq!(
        body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"][0],
        "cat"
    );
    assert!(stderr.contains("option cache: not sent"), "{stderr}");

    // A schema that is not an object is a usage error naming the file.
    std::fs::write(dir.path().join("list.json"), "[1]").unwrap();
    let bad = agentmsg(&[
        "project",
        "orphaned.jsonl",
        "--api",
        "openai-completions",
        "--model",
        "gpt-5",
        "--json-schema",
        dir.path().join("list.json").to_str().unwrap(),
    ]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("list.json: not a JSON Schema"),
        "{bad:?}"
    );
    // So is a reasoning level that does not exist.
    let bad = agentmsg(&[
        "project",
        "orphaned.jsonl",
        "--api",
        "openai-completions",
        "--model",
        "gpt-5",
        "--reasoning",
        "huge",
    ]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("`huge` is not a valid reasoning"),
        "{bad:?}"
    );
}

/// A fragment a crash cut off, glued to a whole line: `check`, the session
/// tree and `context` read the whole line's entry alike (one rule, the
/// runtime's `split_glued_line`). The tree said no entry had its id, and the
/// context dropped it.
#[test]
fn a_fragment_glued_to_a_whole_line_is_read_alike_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        concat!(
            r#"{"role":"user","content":"a","id":"a","parentId":null}"#,
            "\n",
            r#"{"role":"user","cont{"role":"user","content":"c","id":"c","parentId":"a"}"#,
            "\n"
        ),
    )
    .unwrap();
    let check = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert!(
        check.stdout.contains("t.jsonl:2: warning[lost-newline]"),
        "{check:?}"
    );
    let context = agentmsg_in(dir.path(), &["context", "t.jsonl", "--leaf", "c"]);
    assert_eq!(context.code, 0, "{context:?}");
    let texts: Vec<serde_json::Value> = context
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(texts.len(), 2, "{context:?}");
    assert_eq!(texts[1]["content"][0]["text"], "c", "{context:?}");
    let tree = agentmsg_in(dir.path(), &["tree", "--json", "t.jsonl"]);
    assert_eq!(tree.code, 0, "{tree:?}");
    assert!(tree.stdout.contains(r#""c""#), "{tree:?}");
    assert!(!check.stdout.contains("no entry has"), "{check:?}");
}

/// `tree` shows when each entry was made, custom messages included, and what
/// a custom message says to the model (issue 26: a custom line was a blank).
#[test]
fn tree_shows_the_time_and_projection_of_custom_messages() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        [
            r#"{"role":"user","content":"hi","timestamp":1765233665292,"id":"u1","parentId":null}"#,
            r#"{"role":"branchSummary","summary":"tried a regex","timestamp":1765233666000,"id":"b1","parentId":"u1"}"#,
            r#"{"role":"extension","kind":"note","data":{},"timestamp":1765233667000,"id":"e1","parentId":"b1"}"#,
            r#"{"role":"extension","kind":"note","data":{},"id":"e2","parentId":"e1"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let tree = agentmsg_in(dir.path(), &["tree", "t.jsonl"]);
    assert_eq!(tree.code, 0, "{tree:?}");
    let line = |id: &str| {
        tree.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(id))
            .unwrap_or_else(|| panic!("{id}: {}", tree.stdout))
            .to_owned()
    };
    assert!(
        line("u1").contains("2025-12-08T22:41:05Z"),
        "{}",
        tree.stdout
    );
    assert!(
        line("b1").contains("2025-12-08T22:41:06Z"),
        "{}",
        tree.stdout
    );
    assert!(line("b1").contains("tried a regex"), "{}", tree.stdout);
    assert!(
        line("e1").contains("2025-12-08T22:41:07Z"),
        "{}",
        tree.stdout
    );
    // A line written before custom messages had a time still reads.
    assert!(line("e2").contains("extension"), "{}", tree.stdout);
    let json = agentmsg_in(dir.path(), &["tree", "--json", "t.jsonl"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let nodes = doc["nodes"].as_array().unwrap();
    assert_eq!(nodes[2]["timestamp"], 1765233667000u64);
    assert!(nodes[3]["timestamp"].is_null());
}
