//! Shared by the integration tests: where the conformance data is.
#![allow(dead_code)]

pub mod openai;

use std::path::PathBuf;

/// `../shared/conformance` beside the repo, or `$AGENTMSG_CONFORMANCE_DIR`.
/// Panics with a loud message when it is missing: tests that need it must not
/// pass silently without it.
pub fn conformance_dir() -> PathBuf {
    let dir = std::env::var_os("AGENTMSG_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance"));
    assert!(
        dir.join("README.md").is_file(),
        "CONFORMANCE DATA NOT FOUND at {}: put shared/ beside the repo or set AGENTMSG_CONFORMANCE_DIR",
        dir.display()
    );
    dir
}

/// Validates `instance` against `schemas/<name>` of the conformance data and
/// returns every error as `path: message` (empty when it is valid).
pub fn schema_errors(name: &str, instance: &serde_json::Value) -> Vec<String> {
    let path = conformance_dir().join("schemas").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read schema {}: {e}", path.display()));
    let schema: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("schema {} is not JSON: {e}", path.display()));
    let validator = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("schema {} does not compile: {e}", path.display()));
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {}", e.instance_path, e))
        .collect()
}
