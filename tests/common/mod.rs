//! Shared by the integration tests: where the conformance data is, and the
//! helpers every provider test needs (transcripts from text and from pi
//! sessions, fixture files, the directory the SDK check reads).
#![allow(dead_code)]

mod conformance;
#[cfg(feature = "bedrock")]
pub mod event_stream;
mod fixtures;
pub mod openai;
mod pi_node;

// Each test binary uses some of these.
#[allow(unused_imports)]
pub(crate) use conformance::require_conformance;
#[allow(unused_imports)]
pub use conformance::{
    conformance_dir, conformance_or_skip, conformance_path, conformance_schema, errors_against,
    schema_errors,
};
#[allow(unused_imports)]
pub use fixtures::{pi_chain, write_lines, PNG_1X1};
#[allow(unused_imports)]
pub use pi_node::{pi_message_form, pi_node, pi_seed, run_pi_script, run_pi_script_json, Rng};

use std::path::{Path, PathBuf};

use agentmsg::project::{ChangeKind, Report};
use agentmsg::providers::Request;
use agentmsg::Message;
use serde_json::Value;

/// The repository's directory, beside which `shared/conformance` is looked for.
const REPO_ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The messages of a test case written one JSON object per line (blank lines
/// skipped); panics naming the line that does not decode.
pub fn lines(text: &str) -> Vec<Message> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("case line {}: {e}: {l}", i + 1))
        })
        .collect()
}

/// Every LLM message of a pi session file of the conformance data (entries of
/// other kinds and custom roles skipped); panics naming the line of one that
/// does not decode.
pub fn pi_messages(name: &str) -> Vec<Message> {
    let path = conformance_dir().join("transcripts/pi").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let entry: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1));
        let Some(message) = entry.get("message") else {
            continue;
        };
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !["user", "assistant", "toolResult", "system"].contains(&role) {
            continue;
        }
        out.push(
            serde_json::from_value(message.clone())
                .unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1)),
        );
    }
    out
}

/// `count` transcripts drawn from `strategy` (lines as JSON values) with a fixed
/// seed, each ending with a user turn and made a request by `request`, so that
/// the schema and SDK checks also see bodies no test wrote by hand.
pub fn generated_cases<S>(
    count: usize,
    strategy: S,
    request: impl Fn(Vec<Message>) -> Request<'static>,
) -> Vec<(String, Request<'static>)>
where
    S: proptest::strategy::Strategy<Value = Vec<Value>>,
{
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    (0..count)
        .map(|n| {
            let lines = strategy
                .new_tree(&mut runner)
                .expect("the generator runs")
                .current();
            let mut messages: Vec<Message> = lines
                .into_iter()
                .map(|l| serde_json::from_value(l).expect("generated lines decode"))
                .collect();
            messages.push(Message::user("go on"));
            (format!("generated_{n:02}"), request(messages))
        })
        .collect()
}

/// The directory the SDK check of `.ci/run` reads for `api`'s request bodies
/// (`sdk-bodies/<api>` in Cargo's test temp dir), created if missing.
pub fn sdk_dir(api: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("sdk-bodies")
        .join(api);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// [`sdk_dir`] emptied first, so that the SDK check sees only this run's bodies
/// (for a test binary in which one test writes them all).
pub fn fresh_sdk_dir(api: &str) -> PathBuf {
    let dir = sdk_dir(api);
    let _ = std::fs::remove_dir_all(&dir);
    sdk_dir(api)
}

/// The files of `dir` whose names end with `ext`, sorted.
pub fn files_ending(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    out.sort();
    out
}

/// The last component of `path`, as text.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The non-blank lines of a recorded stream.
pub fn chunk_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// Each change of `report` as `(message index, kind)`, in order: what tests
/// assert on (the details are prose).
pub fn change_kinds(report: &Report) -> Vec<(usize, ChangeKind)> {
    report.iter().map(|c| (c.index, c.kind)).collect()
}

/// The details of the changes of one kind in `report`, in order.
pub fn change_details(report: &Report, kind: ChangeKind) -> Vec<&str> {
    report
        .iter()
        .filter(|c| c.kind == kind)
        .map(|c| c.detail.as_str())
        .collect()
}
