//! Fixtures every test suite shares: one image, writing a file of lines,
//! and a pi session of a list of messages.
//! Shared by `tests/common` and `cli/tests/common` (through `#[path]`).

use std::path::Path;

/// A 1×1 PNG, base64: the one image of the tests, the golden files and the
/// provider snapshots.
pub const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// Writes `lines` to `dir/name`, each ended by a newline.
pub fn write_lines(dir: &Path, name: &str, lines: &[&str]) {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n")
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// The lines of a pi session (version 3) of `messages` in order, each the
/// child of the one before, with ids `e1`, `e2`, …
pub fn pi_chain(messages: impl IntoIterator<Item = serde_json::Value>) -> Vec<String> {
    use serde_json::{json, Value};
    let mut lines = vec![json!({"type": "session", "version": 3, "id": "s",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"})
    .to_string()];
    for (i, message) in messages.into_iter().enumerate() {
        let parent = if i == 0 {
            Value::Null
        } else {
            json!(format!("e{i}"))
        };
        lines.push(
            json!({"type": "message", "id": format!("e{}", i + 1), "parentId": parent,
                   "timestamp": "2026-01-01T00:00:01.000Z", "message": message})
            .to_string(),
        );
    }
    lines
}
