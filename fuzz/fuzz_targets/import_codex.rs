//! `import` of a Codex rollout on any bytes after one Codex rollout line: see
//! `shared/import_log.rs` for what it holds.
#![no_main]

use agentmsg::import::SessionFormat;
use libfuzzer_sys::fuzz_target;

#[path = "shared/import_log.rs"]
mod import_log;

const FIRST: &[u8] = br#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"s","cwd":"/w","model_provider":"openai"}}"#;

fuzz_target!(|data: &[u8]| import_log::check(SessionFormat::Codex, FIRST, data));
