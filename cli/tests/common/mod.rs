//! Shared by the command's tests: running the binary, and where the data is.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "../../../tests/common/conformance.rs"]
mod conformance;
#[path = "../../../tests/common/fixtures.rs"]
mod fixtures;
#[path = "../../../tests/common/pi_node.rs"]
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

impl From<std::process::Output> for Run {
    fn from(output: std::process::Output) -> Run {
        Run {
            code: output.status.code().expect("agentmsg exited, not killed"),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        }
    }
}

/// The command `agentmsg ARGS` in `dir`, its standard output and error
/// piped (for a test that spawns it and reads them as it goes).
pub fn agentmsg_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentmsg"));
    command
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs `agentmsg ARGS` in `dir`.
pub fn agentmsg_in(dir: &Path, args: &[&str]) -> Run {
    agentmsg_command(dir, args)
        .output()
        .expect("the agentmsg binary runs")
        .into()
}

/// Runs `agentmsg ARGS` in `dir` with `stdin` on its standard input.
#[allow(dead_code)] // Not every test file feeds standard input.
pub fn agentmsg_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    use std::io::Write;
    let mut child = agentmsg_command(dir, args)
        .stdin(Stdio::piped())
        .spawn()
        .expect("the agentmsg binary runs");
    let mut input = child.stdin.take().expect("a piped standard input");
    // A command that reads a file never reads its standard input.
    let _ = input.write_all(stdin);
    drop(input);
    child
        .wait_with_output()
        .expect("agentmsg runs to its end")
        .into()
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

/// The lines of a fixture.
pub fn fixture_lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixtures().join(name))
        .expect("fixture readable")
        .split('\n')
        .map(str::to_owned)
        .collect()
}
