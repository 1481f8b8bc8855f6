//! What the import fuzz targets hold, for a log of `format` that starts with
//! the line `first` and goes on with the fuzzer's bytes (so it is read as one
//! such log): `import` gives a transcript or a typed error, never a panic or a
//! hang; every line written is JSON and counted; and opening the log as a
//! `Session` reads the same transcript.

use agentmsg::import::{self, SessionFormat};
use agentmsg::Session;

pub fn check(format: SessionFormat, first: &[u8], data: &[u8]) {
    let mut log = first.to_vec();
    log.push(b'\n');
    log.extend_from_slice(data);
    assert_eq!(SessionFormat::detect(&log), format);
    let Ok(imported) = import::import(&log) else {
        return;
    };
    let text = std::str::from_utf8(&imported.text).expect("the transcript is UTF-8");
    assert_eq!(
        text.lines().count(),
        imported.lines,
        "every line written is counted"
    );
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("a line written is JSON ({e}): {line}"));
    }
    if let Ok(session) = Session::read(&log) {
        assert_eq!(session.format(), format);
        assert_eq!(session.to_bytes(), imported.text, "the session holds the transcript");
        let _ = session.context(None);
    }
}
