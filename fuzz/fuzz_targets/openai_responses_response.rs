//! `providers::openai_responses::decode_response` on any text: a reply or a typed error,
//! never a panic; a reply is a transcript line that reads back as itself.
#![no_main]

use agentmsg::providers::openai_responses;
use agentmsg_fuzz::check_reply;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok((reply, _warnings)) = openai_responses::decode_response_with_warnings(&text) {
        check_reply(&reply);
    }
    let _ = openai_responses::decode_response(&text);
});
