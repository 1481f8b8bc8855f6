//! Shared by the command's tests: running the binary, and where the data is.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../../tests/common/conformance.rs"]
mod conformance;
// Each test binary uses some of these.
#[allow(unused_imports)]
pub(crate) use conformance::require_conformance;
#[allow(unused_imports)]
pub use conformance::{conformance_dir, conformance_or_skip, conformance_path};

/// The repository's directory, beside which `shared/conformance` is looked for.
const REPO_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// What a run of `agentmsg` gave.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// The hand-made files in `cli/tests/fixtures`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Runs `agentmsg ARGS` in `dir`.
pub fn agentmsg_in(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_agentmsg"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the agentmsg binary runs");
    Run {
        code: output.status.code().expect("agentmsg exited, not killed"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// Runs `agentmsg ARGS` in `dir` with `stdin` on its standard input.
#[allow(dead_code)] // Not every test file feeds standard input.
pub fn agentmsg_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentmsg"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the agentmsg binary runs");
    let mut input = child.stdin.take().expect("a piped standard input");
    // A command that reads a file never reads its standard input.
    let _ = input.write_all(stdin);
    drop(input);
    let output = child.wait_with_output().expect("agentmsg runs to its end");
    Run {
        code: output.status.code().expect("agentmsg exited, not killed"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// Runs `agentmsg project --api API --model MODEL FILE` in `dir`, which must
/// succeed; the run and the body it printed.
#[allow(dead_code)] // Not every test file projects.
pub fn project_in(dir: &Path, api: &str, model: &str, file: &str) -> (Run, serde_json::Value) {
    let run = agentmsg_in(dir, &["project", "--api", api, "--model", model, file]);
    assert_eq!(run.code, 0, "{run:?}");
    let body = serde_json::from_str(&run.stdout).expect("project prints a JSON body");
    (run, body)
}

/// Runs `agentmsg ARGS` in the fixtures directory, so paths in the output are
/// the short names given.
pub fn agentmsg(args: &[&str]) -> Run {
    agentmsg_in(&fixtures(), args)
}

/// The pi session files of the conformance data.
pub fn pi_session(name: &str) -> PathBuf {
    conformance_dir().join("transcripts/pi").join(name)
}

/// Every error of `instance` against `schema`, as `path: message`.
pub fn errors_against(schema: &serde_json::Value, instance: &serde_json::Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {}", e.instance_path, e))
        .collect()
}

/// The conformance schema `schemas/<name>`.
pub fn conformance_schema(name: &str) -> serde_json::Value {
    let path = conformance_dir().join("schemas").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read schema {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("schema {} is not JSON: {e}", path.display()))
}

/// Every error of `instance` against the conformance schema `schemas/<name>`.
/// Without the data the check is skipped, loudly, and finds nothing.
pub fn schema_errors(name: &str, instance: &serde_json::Value) -> Vec<String> {
    match conformance_or_skip(Some("the schema check")) {
        Some(_) => errors_against(&conformance_schema(name), instance),
        None => Vec::new(),
    }
}

/// The lines of a fixture.
pub fn fixture_lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixtures().join(name))
        .expect("fixture readable")
        .split('\n')
        .map(str::to_owned)
        .collect()
}
