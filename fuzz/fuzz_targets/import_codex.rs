//! `import` of a Codex rollout on any bytes after one Codex rollout line (so the
//! log is read as one): a transcript or a typed error, never a panic or a hang.
//! Every line written reads back as a session (or a typed session error, such
//! as a duplicate id the log itself holds), and opening the log as a
//! `Session` reads the same transcript.
#![no_main]

use agentmsg::import::{self, SessionFormat};
use agentmsg::Session;
use libfuzzer_sys::fuzz_target;

const FIRST: &[u8] = br#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"s","cwd":"/w","model_provider":"openai"}}"#;

fuzz_target!(|data: &[u8]| {
    let mut log = FIRST.to_vec();
    log.push(b'\n');
    log.extend_from_slice(data);
    assert_eq!(SessionFormat::detect(&log), SessionFormat::Codex);
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
        assert_eq!(session.format(), SessionFormat::Codex);
        assert_eq!(session.to_bytes(), imported.text, "the session holds the transcript");
        let _ = session.context(None);
    }
});
