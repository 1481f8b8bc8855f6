//! Shared by the integration tests: where the conformance data is.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/conformance` beside the repo, or `$AGENTMSG_CONFORMANCE_DIR`.
/// Panics with a loud message when it is missing: tests that need it must not
/// pass silently without it.
pub fn conformance_dir() -> PathBuf {
    let dir = std::env::var_os("AGENTMSG_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance")
        });
    assert!(
        dir.join("README.md").is_file(),
        "CONFORMANCE DATA NOT FOUND at {}: put shared/ beside the repo or set AGENTMSG_CONFORMANCE_DIR",
        dir.display()
    );
    dir
}
