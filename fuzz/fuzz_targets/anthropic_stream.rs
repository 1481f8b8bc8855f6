//! `providers::anthropic::StreamDecoder` on any events, cut from the input as
//! [`agentmsg_fuzz::events`] says (one per line, or at arbitrary places): every
//! `push` and `finish` returns, and a reply reads back as itself. Pushed on
//! after an error, and stopped at the first one, as a client using `?` does.
#![no_main]

use agentmsg::providers::{anthropic, StreamDecode};
use agentmsg_fuzz::{check_reply, events, push_all, push_until_error};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let events = events(data);
    if let Ok(reply) = push_all::<anthropic::StreamDecoder>(&events).finish() {
        check_reply(&reply);
    }
    if let Some(decoder) = push_until_error::<anthropic::StreamDecoder>(&events) {
        if let Ok(reply) = decoder.finish() {
            check_reply(&reply);
        }
    }
});
