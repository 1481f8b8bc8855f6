//! The generic serde path (`codec/held.rs`, `codec/value.rs`) on any text: no
//! panic; an object reads alike with its role first and last, and as the line
//! reader reads it (`agentmsg_fuzz::check_generic`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        agentmsg_fuzz::check_generic(text);
    }
});
