//! pi's own code in Node, for the differential tests: where its package is
//! installed, running the scripts of `scripts/pi` against it, and the seed
//! of the generated sessions.
//!
//! pi's package is installed by `.ci/run` into `target/pi-node` (or
//! `$AGENTMSG_PI_NODE`). Without it, or without `node`, a test says loudly
//! that it is skipped; under CI (or with `AGENTMSG_REQUIRE_PI` set) it fails
//! instead.
//!
//! Shared by `tests/common` and `cli/tests/common` (through `#[path]`); the
//! including module defines `REPO_ROOT`, the repository's directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

/// Where pi's package is installed (and `node` runs); `None` after a loud
/// `SKIPPED {what}` line, a failure under CI.
pub fn pi_node(what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("AGENTMSG_PI_NODE")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(super::REPO_ROOT).join("target/pi-node"));
    let installed = dir.join("node_modules/@mariozechner/pi-coding-agent/package.json");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if installed.is_file() && node {
        return Some(dir);
    }
    let why = format!(
        "pi's package is not installed in {} (or node is missing): `.ci/run` installs it",
        dir.display()
    );
    if ["CI", "AGENTMSG_REQUIRE_PI"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
    {
        panic!("{why}");
    }
    eprintln!("\n*** SKIPPED {what}: {why} ***\n");
    None
}

/// What `scripts/pi/{script}` prints, run by node on `args` with pi's
/// package at `pi`; panics with what it wrote to standard error when it
/// fails.
pub fn run_pi_script(pi: &Path, script: &str, args: &[PathBuf]) -> String {
    let output = Command::new("node")
        .arg(Path::new(super::REPO_ROOT).join("scripts/pi").join(script))
        .args(args)
        .env("PI_NODE", pi)
        .current_dir(pi)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "pi's {script} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// [`run_pi_script`]'s output, one JSON object a line.
pub fn run_pi_script_json(pi: &Path, script: &str, args: &[PathBuf]) -> Vec<Value> {
    run_pi_script(pi, script, args)
        .lines()
        .map(|l| serde_json::from_str(l).expect("pi's line is JSON"))
        .collect()
}

/// The seed of a differential test's generated sessions: `$AGENTMSG_PI_SEED`,
/// else a fresh one (the test prints it, so a failure can be replayed).
pub fn pi_seed() -> u64 {
    std::env::var("AGENTMSG_PI_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
}

/// A message as pi's scripts print it, in agentmsg's form where the two
/// differ in form only, not in what the model gets: a text given as a
/// string is one text block, and a thinking block's `thinkingSignature`
/// (pi's name) is its `signature`.
pub fn pi_message_form(message: &Value) -> Value {
    let mut message = message.clone();
    if let Some(content) = message.get_mut("content") {
        if let Value::String(text) = content {
            *content = json!([{"type": "text", "text": text}]);
        }
        for block in content.as_array_mut().into_iter().flatten() {
            if let Some(block) = block.as_object_mut() {
                if let Some(signature) = block.remove("thinkingSignature") {
                    block.insert("signature".into(), signature);
                }
            }
        }
    }
    message
}

/// A small seeded generator (SplitMix64) of the differential tests' sessions.
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// One to `words` words of `pool`, separated by spaces.
    pub fn text(&mut self, pool: &[&str], words: usize) -> String {
        (0..1 + self.below(words))
            .map(|_| self.pick(pool))
            .collect::<Vec<_>>()
            .join(" ")
    }
}
