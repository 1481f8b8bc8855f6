//! `providers::SseParser` on any bytes, in any chunking: the first byte picks a
//! chunk size, and the stream cut into chunks of that size gives the same
//! events, in the same order, and the same outcome as the stream in one piece
//! (a UTF-8 character or a CRLF split across chunks included). Never a panic.
#![no_main]

use agentmsg::providers::SseParser;
use libfuzzer_sys::fuzz_target;

/// An event: its index, name, data and id.
type Event = (usize, String, String, Option<String>);

/// The events and the first error of `chunks`.
fn parse<'a>(chunks: impl Iterator<Item = &'a [u8]>) -> (Vec<Event>, Option<String>) {
    let mut parser = SseParser::with_max_event(1 << 16);
    let mut events = Vec::new();
    let mut take = |e: agentmsg::providers::SseEvent<'_>| {
        events.push((
            e.index,
            e.event.to_owned(),
            e.data.to_owned(),
            e.id.map(str::to_owned),
        ));
    };
    for chunk in chunks {
        if let Err(e) = parser.push(chunk, &mut take) {
            return (events, Some(e.to_string()));
        }
    }
    let error = parser.finish(&mut take).err().map(|e| e.to_string());
    (events, error)
}

fuzz_target!(|data: &[u8]| {
    let Some((&size, stream)) = data.split_first() else {
        return;
    };
    let size = usize::from(size % 64) + 1;
    let whole = parse(std::iter::once(stream));
    let chunked = parse(stream.chunks(size));
    // An error's position may be told from another chunk; the events before it
    // and whether there was one are the same.
    assert_eq!(whole.0, chunked.0, "chunks of {size}");
    assert_eq!(
        whole.1.is_some(),
        chunked.1.is_some(),
        "chunks of {size}: {whole:?} {chunked:?}"
    );
});
