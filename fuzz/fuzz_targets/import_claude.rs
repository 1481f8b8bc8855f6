//! `import` of a Claude Code log on any bytes after one Claude Code log line: see
//! `shared/import_log.rs` for what it holds.
#![no_main]

use agentmsg::import::SessionFormat;
use libfuzzer_sys::fuzz_target;

#[path = "shared/import_log.rs"]
mod import_log;

const FIRST: &[u8] = br#"{"parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u0","timestamp":"2026-01-01T00:00:00.000Z"}"#;

fuzz_target!(|data: &[u8]| import_log::check(SessionFormat::ClaudeCode, FIRST, data));
