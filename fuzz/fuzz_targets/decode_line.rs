//! `decode_line` in both modes (built-in and custom kinds registered) and
//! `serde_json::from_str::<AgentMessage>`, on any text: a value or a typed error,
//! never a panic; a kept line is kept byte for byte; a decoded line writes and
//! reads back as the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    agentmsg_fuzz::check_line(&text);
    let _ = serde_json::from_str::<agentmsg::AgentMessage>(&text);
});
