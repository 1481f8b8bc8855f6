//! `JsonlReader` on any bytes, lenient and strict, `read_all` and iteration.
//!
//! No loss: in lenient mode `read_all` never fails on in-memory input, and the
//! messages written back with `write_jsonl` read again as the same messages (a
//! kept multi-line array element is written with its newlines removed, so it
//! is compared by its bytes less newlines and by its kind).
#![no_main]

use agentmsg::{AgentMessage, JsonlReader};
use agentmsg::transcript::{write_jsonl, DecodeMode};
use agentmsg_fuzz::registry;
use libfuzzer_sys::fuzz_target;

fn same(a: &AgentMessage, b: &AgentMessage) -> bool {
    match (a, b) {
        (AgentMessage::Unknown(x), AgentMessage::Unknown(y)) if x.raw_bytes().contains(&b'\n') => {
            let joined: Vec<u8> = x
                .raw_bytes()
                .iter()
                .copied()
                .filter(|&c| c != b'\n')
                .collect();
            joined == y.raw_bytes() && x.kind() == y.kind()
        }
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let registry = registry();
    let lenient = JsonlReader::new(data)
        .with_registry(registry)
        .read_all()
        .unwrap_or_else(|e| panic!("lenient read_all failed on in-memory input: {e}"));

    // Iterating gives the same messages, and at most the torn last line as an error.
    let mut iterated = Vec::new();
    let mut errors = 0;
    for item in JsonlReader::new(data).with_registry(registry) {
        match item {
            Ok(message) => iterated.push(message),
            Err(agentmsg::transcript::ReadError::TornLastLine { .. }) => errors += 1,
            Err(e) => panic!("lenient iteration failed on in-memory input: {e}"),
        }
    }
    assert_eq!(iterated, lenient.messages);
    assert_eq!(errors, usize::from(lenient.torn.is_some()));

    // Written back, the messages read again as they were, and nothing is torn.
    let written = write_jsonl(Vec::new(), &lenient.messages)
        .unwrap_or_else(|e| panic!("the messages read do not write: {e}"));
    let again = JsonlReader::new(&written[..])
        .with_registry(registry)
        .read_all()
        .unwrap_or_else(|e| panic!("the messages written do not read: {e}"));
    assert!(
        again.torn.is_none(),
        "written back, a line is torn: {:?}",
        again.torn
    );
    assert_eq!(
        again.messages.len(),
        lenient.messages.len(),
        "{:?}",
        String::from_utf8_lossy(&written)
    );
    for (first, second) in lenient.messages.iter().zip(&again.messages) {
        assert!(
            same(first, second),
            "written back, {first:?}\nreads as {second:?}"
        );
    }

    // Strict: either every message lenient decoded into a type, or an error.
    let strict = JsonlReader::new(data)
        .with_registry(registry)
        .mode(DecodeMode::Strict)
        .read_all();
    if let Ok(strict) = strict {
        assert_eq!(strict.messages, lenient.messages);
        assert_eq!(strict.torn, lenient.torn);
        assert!(strict.messages.iter().all(|m| !m.is_unknown()));
    }
    // Strict iteration goes on after an error.
    let _ = JsonlReader::new(data)
        .with_registry(registry)
        .strict()
        .count();
});
