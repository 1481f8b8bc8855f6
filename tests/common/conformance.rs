//! Where the conformance data is, and what a test does without it.
//!
//! The data (real provider recordings, pi sessions, the providers' request
//! schemas) lives in `shared/conformance` beside the repository, or in
//! `$AGENTMSG_CONFORMANCE_DIR`. A clone from GitHub or crates.io does not have
//! it, so a test that reads it starts with `require_conformance!()`: without the
//! data it says loudly that it is skipped and returns. Under CI, or with
//! `AGENTMSG_REQUIRE_CONFORMANCE` set, a missing directory fails the test instead.
//!
//! Shared by `tests/common` and `cli/tests/common` (through `#[path]`); the
//! including module defines `REPO_ROOT`, the repository's directory.

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Once;

/// The variables that turn a missing directory into a failure: `CI` (set by
/// every CI service) and `AGENTMSG_REQUIRE_CONFORMANCE` (set by `.ci/run`).
const REQUIRE_VARS: [&str; 2] = ["CI", "AGENTMSG_REQUIRE_CONFORMANCE"];

/// Where the conformance data should be: `$AGENTMSG_CONFORMANCE_DIR`, else
/// `shared/conformance` beside the repository.
pub fn conformance_path() -> PathBuf {
    match std::env::var_os("AGENTMSG_CONFORMANCE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => normalized(&Path::new(super::REPO_ROOT).join("../shared/conformance")),
    }
}

/// The conformance data directory. Panics with a loud message when it is
/// missing: for helpers reached only after `require_conformance!()`.
pub fn conformance_dir() -> PathBuf {
    let dir = conformance_path();
    assert!(dir.join("README.md").is_file(), "{}", missing(&dir));
    dir
}

/// The conformance data directory, or `None` when it is missing and not
/// required, after a loud line saying that `part` of the running test (the
/// whole test when `None`) is skipped. Panics when it is missing and required.
pub fn conformance_or_skip(part: Option<&str>) -> Option<PathBuf> {
    let dir = conformance_path();
    if dir.join("README.md").is_file() {
        return Some(dir);
    }
    if let Some(var) = REQUIRE_VARS
        .iter()
        .find(|v| std::env::var_os(v).is_some_and(|value| !value.is_empty()))
    {
        panic!("{} ({var} is set, so it is required)", missing(&dir));
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let what = match part {
        Some(part) => format!("{part} of {test}"),
        None => test.to_owned(),
    };
    // Once per test and part: a property test asks on every case.
    thread_local!(static SAID: RefCell<HashSet<String>> = RefCell::default());
    if !SAID.with(|said| said.borrow_mut().insert(what.clone())) {
        return None;
    }
    // Straight to stderr, not through `eprintln!`: libtest captures what the
    // print macros write and shows it only for failed tests.
    let mut stderr = std::io::stderr().lock();
    static BANNER: Once = Once::new();
    BANNER.call_once(|| {
        let rule = "=".repeat(78);
        let _ = writeln!(
            stderr,
            "{rule}\nCONFORMANCE DATA NOT FOUND at {}\n\
             The tests that need it are SKIPPED (each says so below) and count as passed.\n\
             Put shared/ beside the repository or set AGENTMSG_CONFORMANCE_DIR to run them;\n\
             with CI or AGENTMSG_REQUIRE_CONFORMANCE set, they fail instead.\n{rule}",
            dir.display()
        );
    });
    let _ = writeln!(
        stderr,
        "SKIPPED {what}: conformance data not found at {} \
         (set AGENTMSG_CONFORMANCE_DIR or put shared/ beside the repo)",
        dir.display()
    );
    None
}

/// The first line of every message about a missing directory.
fn missing(dir: &Path) -> String {
    format!(
        "CONFORMANCE DATA NOT FOUND at {}: put shared/ beside the repo or set AGENTMSG_CONFORMANCE_DIR",
        dir.display()
    )
}

/// `path` with its `..` and `.` components resolved by name, for messages.
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The conformance data directory, or, when it is missing and not required,
/// a loud `SKIPPED` line and an early return from the test. The first thing a
/// test that reads the data does:
///
/// ```ignore
/// let dir = common::require_conformance!();
/// ```
///
/// In a body that returns a value, give the value: `require_conformance!(Ok(()))`.
#[allow(unused_macros)]
macro_rules! require_conformance {
    () => {
        $crate::common::require_conformance!(())
    };
    ($skipped:expr) => {
        match $crate::common::conformance_or_skip(None) {
            Some(dir) => dir,
            None => return $skipped,
        }
    };
}
pub(crate) use require_conformance;

/// The conformance schema `schemas/<name>`; panics when it cannot be read.
pub fn conformance_schema(name: &str) -> serde_json::Value {
    let path = conformance_dir().join("schemas").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read schema {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("schema {} is not JSON: {e}", path.display()))
}

/// Every error of `instance` against `schema`, as `path: message`.
pub fn errors_against(schema: &serde_json::Value, instance: &serde_json::Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {}", e.instance_path, e))
        .collect()
}

/// Every error of `instance` against the conformance schema `schemas/<name>`
/// (empty when it is valid). Without the data the check is skipped, loudly,
/// and finds nothing.
pub fn schema_errors(name: &str, instance: &serde_json::Value) -> Vec<String> {
    match conformance_or_skip(Some("the schema check")) {
        Some(_) => errors_against(&conformance_schema(name), instance),
        None => Vec::new(),
    }
}
