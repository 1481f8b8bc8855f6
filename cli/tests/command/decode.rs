//! `agentmsg decode` on every recorded response and stream of the four APIs,
//! and on cut and garbled ones: it decodes what it can, exits 1 naming the
//! event for what it cannot, and never panics.

use crate::common;

use std::path::{Path, PathBuf};

use common::agentmsg;

/// The API id of each recording folder.
const FOLDERS: [(&str, &str); 4] = [
    ("anthropic", "anthropic-messages"),
    ("google", "google-generative-ai"),
    ("openai/chat", "openai-completions"),
    ("openai/responses", "openai-responses"),
];

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_recorded_response_and_stream_decodes_into_one_transcript_line() {
    let data = common::require_conformance!();
    let schema = agentmsg_runtime::transcript::transcript_line_schema();
    let mut count = 0;
    for (folder, api) in FOLDERS {
        for path in files(&data.join("responses/vercel").join(folder)) {
            let file = path.to_str().expect("UTF-8 path");
            let stream = file.ends_with(".chunks.txt");
            let mut args = vec!["decode", "--api", api, file];
            if stream {
                args.insert(3, "--stream");
            }
            let run = agentmsg(&args);
            assert_ne!(run.code, 101, "{file} panicked: {}", run.stderr);
            if run.code != 0 {
                // A few recordings are streams that stop early or mix two
                // responses on purpose: they must say which event.
                assert_eq!(run.code, 1, "{file}: {}", run.stderr);
                assert!(
                    run.stderr.contains("event") || run.stderr.contains("stream ended"),
                    "{file}: {}",
                    run.stderr
                );
                continue;
            }
            count += 1;
            let lines: Vec<&str> = run.stdout.lines().collect();
            assert_eq!(lines.len(), 1, "{file}: {}", run.stdout);
            let line: serde_json::Value = serde_json::from_str(lines[0]).expect("JSON");
            assert_eq!(line["role"], "assistant", "{file}");
            assert_eq!(line["api"], api, "{file}");
            let errors = common::errors_against(&schema, &line);
            assert!(errors.is_empty(), "{file}: {errors:?}");
        }
    }
    assert!(count >= 120, "only {count} recordings decoded");
}

#[test]
fn events_are_json_lines_ending_with_done() {
    let data = common::require_conformance!();
    let file = data.join("responses/sse/anthropic-sdk-tool-use.sse");
    let run = agentmsg(&[
        "decode",
        "--api",
        "anthropic-messages",
        "--stream",
        "--events",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(events[0]["type"], "start");
    assert!(events.iter().any(|e| e["type"] == "toolCallEnd"));
    assert_eq!(events.last().unwrap()["type"], "done");
}

#[test]
fn cut_and_garbled_inputs_exit_1_naming_the_event_and_never_panic() {
    let data = common::require_conformance!();
    let dir = tempfile::tempdir().unwrap();
    for (folder, api) in FOLDERS {
        for path in files(&data.join("responses/vercel").join(folder))
            .into_iter()
            .step_by(3)
        {
            let bytes = std::fs::read(&path).unwrap();
            let stream = path.to_string_lossy().ends_with(".chunks.txt");
            for (k, damaged) in [
                bytes[..bytes.len() / 2].to_vec(),
                bytes
                    .iter()
                    .map(|b| if *b == b'"' { b'\'' } else { *b })
                    .collect(),
                vec![0xff, 0xfe, b'{'],
                Vec::new(),
            ]
            .into_iter()
            .enumerate()
            {
                let file = dir.path().join(format!("damaged-{k}"));
                std::fs::write(&file, &damaged).unwrap();
                let file = file.to_str().unwrap();
                let mut args = vec!["decode", "--api", api, file];
                if stream {
                    args.insert(3, "--stream");
                }
                let run = agentmsg(&args);
                assert!(
                    run.code == 0 || run.code == 1,
                    "{} ({k}): exit {}: {}",
                    path.display(),
                    run.code,
                    run.stderr
                );
                if run.code == 1 {
                    assert!(!run.stderr.is_empty(), "{} ({k})", path.display());
                }
            }
        }
    }
    let run = agentmsg(&["decode", "--api", "openai-responses", "/no/such/file"]);
    assert_eq!(run.code, 2);
}

#[test]
fn an_api_is_named_by_its_id_or_its_module_name() {
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body.json");
    std::fs::write(
        &body,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4}}"#,
    )
    .unwrap();
    let file = body.to_str().unwrap();
    let by_id = agentmsg(&["decode", "--api", "google-generative-ai", file]);
    let by_module = agentmsg(&["decode", "--api", "gemini", file]);
    assert_eq!(by_id.code, 0, "{}", by_id.stderr);
    assert_eq!(by_module.code, 0, "{}", by_module.stderr);
    let line = |run: &common::Run| {
        let mut line: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
        line.as_object_mut().unwrap().remove("timestamp");
        line
    };
    assert_eq!(line(&by_id), line(&by_module));
    assert_eq!(line(&by_id)["api"], "google-generative-ai");
    let unknown = agentmsg(&["decode", "--api", "bard", file]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("unknown api `bard`"),
        "{}",
        unknown.stderr
    );
}
