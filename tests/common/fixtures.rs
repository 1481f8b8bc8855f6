//! Fixtures every test suite shares: one image, and writing a file of lines.
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
