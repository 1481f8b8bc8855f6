//! Stream framing: server-sent events and a streamed JSON array, in any
//! chunking, on the recorded streams and on hand-written edge cases.

use agentmsg::providers::{FrameErrorKind, JsonArrayParser, SseParser};
use proptest::prelude::*;

use crate::common;

/// (event name, data, id) of each event.
type Events = Vec<(String, String, Option<String>)>;

fn sse(chunks: &[&[u8]]) -> Result<Events, agentmsg::providers::FrameError> {
    sse_with(SseParser::new(), chunks)
}

fn sse_with(
    mut parser: SseParser,
    chunks: &[&[u8]],
) -> Result<Events, agentmsg::providers::FrameError> {
    let mut out = Vec::new();
    let mut take = |e: agentmsg::providers::SseEvent<'_>| {
        assert_eq!(e.index, out.len());
        out.push((
            e.event.to_owned(),
            e.data.to_owned(),
            e.id.map(str::to_owned),
        ));
    };
    for chunk in chunks {
        parser.push(chunk, &mut take)?;
    }
    parser.finish(&mut take)?;
    Ok(out)
}

fn ev(event: &str, data: &str) -> (String, String, Option<String>) {
    (event.to_owned(), data.to_owned(), None)
}

#[test]
fn line_ends_comments_fields_and_multi_line_data() {
    let text = b": hello\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\n\
        data: lf\n\n\
        data: cr\r\r\
        retry: 1500\nid: 7\ndata: {\"x\":1}\n\n\
        event: nothing\n\n\
        data: [DONE]\n\n";
    let events = sse(&[text]).unwrap();
    assert_eq!(
        events,
        [
            ev("a", "one\ntwo"),
            ev("", "lf"),
            ev("", "cr"),
            ("".into(), "{\"x\":1}".into(), Some("7".into())),
            ("".into(), "[DONE]".into(), Some("7".into())),
        ]
    );
    let mut parser = SseParser::new();
    parser.push(b"retry: 1500\n\nretry: x\n\n", |_| {}).unwrap();
    assert_eq!(parser.retry(), Some(1500));
    let mut done = false;
    parser
        .push(b"data: [DONE]\n\n", |e| done = e.is_done())
        .unwrap();
    assert!(done);
}

#[test]
fn a_last_event_without_its_blank_line_is_kept() {
    assert_eq!(
        sse(&[b"data: a\n\ndata: b"]).unwrap(),
        [ev("", "a"), ev("", "b")]
    );
    assert_eq!(sse(&[b"data: a\r"]).unwrap(), [ev("", "a")]);
}

#[test]
fn a_character_split_across_chunks_and_a_crlf_split_across_chunks() {
    let text = "data: h\u{e9}llo \u{1f600}\r\n\r\ndata: x\r\n\r\n".as_bytes();
    for cut in 0..=text.len() {
        let (a, b) = text.split_at(cut);
        assert_eq!(
            sse(&[a, b]).unwrap(),
            [ev("", "h\u{e9}llo \u{1f600}"), ev("", "x")],
            "cut at {cut}"
        );
    }
}

#[test]
fn an_event_over_the_limit_and_bytes_that_are_not_utf8_name_their_event() {
    let error = sse_with(
        SseParser::with_max_event(8),
        &[b"data: ok\n\ndata: 0123456789\n\n"],
    )
    .unwrap_err();
    assert_eq!(error.event, 1);
    assert_eq!(error.kind, FrameErrorKind::TooLarge { limit: 8 });
    assert!(error.to_string().starts_with("event 1 "), "{error}");
    // A line that never ends is caught as it grows.
    let error = sse_with(SseParser::with_max_event(8), &[b"data: 01234", b"56789"]).unwrap_err();
    assert_eq!(error.kind, FrameErrorKind::TooLarge { limit: 8 });
    // Many short data lines add up.
    let error = sse_with(SseParser::with_max_event(8), &[b"data: 1234\ndata: 5678\n"]).unwrap_err();
    assert_eq!(error.kind, FrameErrorKind::TooLarge { limit: 8 });
    let error = sse(&[b"data: a\n\ndata: b\n\ndata: \xff\xfe\n\n"]).unwrap_err();
    assert_eq!((error.event, error.kind), (2, FrameErrorKind::Utf8));
}

fn recorded_sse() -> Vec<(String, Vec<u8>)> {
    let dir = common::conformance_dir().join("responses/sse");
    common::files_ending(&dir, ".sse")
        .into_iter()
        .map(|p| (common::file_name(&p), std::fs::read(&p).expect("fixture")))
        .collect()
}

#[test]
fn recorded_streams_frame_into_their_data_lines() {
    common::require_conformance!();
    let files = recorded_sse();
    assert!(files.len() >= 2);
    for (name, bytes) in files {
        let events = sse(&[&bytes]).unwrap_or_else(|e| panic!("{name}: {e}"));
        // These recordings hold one `data:` line per event.
        let data: Vec<&str> = std::str::from_utf8(&bytes)
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        let framed: Vec<&str> = events.iter().map(|(_, d, _)| d.as_str()).collect();
        assert_eq!(framed, data, "{name}");
    }
}

/// `bytes` cut at the given points (each taken modulo the length).
fn chunks(bytes: &[u8], mut cuts: Vec<usize>) -> Vec<&[u8]> {
    cuts.iter_mut().for_each(|c| *c %= bytes.len() + 1);
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts {
        out.push(&bytes[start..cut]);
        start = cut;
    }
    out.push(&bytes[start..]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any chunking of a recorded stream gives the same events.
    #[test]
    fn any_chunking_of_a_recorded_stream_gives_the_same_events(
        file in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        common::require_conformance!(Ok(()));
        let files = recorded_sse();
        let (name, bytes) = file.get(&files);
        let whole = sse(&[bytes]).unwrap();
        let pieces = sse(&chunks(bytes, cuts)).unwrap();
        prop_assert_eq!(whole, pieces, "{}", name);
    }

    /// Any bytes in any chunking frame or fail; they never panic, and the
    /// chunking does not change the outcome.
    #[test]
    fn any_bytes_frame_the_same_in_any_chunking(
        bytes in prop::collection::vec(prop_oneof![
            Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '), Just(b'd'), Just(b'a'),
            Just(b't'), Just(0xc3), Just(0xa9), any::<u8>()
        ], 0..200),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        let whole = sse(&[&bytes]);
        let pieces = sse(&chunks(&bytes, cuts));
        prop_assert_eq!(whole.is_ok(), pieces.is_ok());
        if let (Ok(a), Ok(b)) = (whole, pieces) {
            prop_assert_eq!(a, b);
        }
        let mut array = JsonArrayParser::new();
        let _ = array.push(&bytes, |_, _| {});
        let _ = array.finish();
    }
}

fn array(chunks: &[&[u8]]) -> Result<Vec<String>, agentmsg::providers::FrameError> {
    let mut parser = JsonArrayParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.push(chunk, |i, e| {
            assert_eq!(i, out.len());
            out.push(e.to_owned());
        })?;
    }
    parser.finish()?;
    Ok(out)
}

#[test]
fn a_streamed_json_array_gives_its_elements() {
    let text = "[{\"text\":\"a ] } [ { \\\" \\\\\"},\r\n{\"n\":[1,{\"b\":[]}]}\r\n]\n".as_bytes();
    let expected = [
        "{\"text\":\"a ] } [ { \\\" \\\\\"}".to_owned(),
        "{\"n\":[1,{\"b\":[]}]}".to_owned(),
    ];
    for cut in 0..=text.len() {
        let (a, b) = text.split_at(cut);
        assert_eq!(array(&[a, b]).unwrap(), expected, "cut at {cut}");
    }
    for element in &expected {
        serde_json::from_str::<serde_json::Value>(element).expect("each element is JSON");
    }
    assert_eq!(array(&[b" [ ] "]).unwrap(), Vec::<String>::new());
}

#[test]
fn a_broken_json_array_is_an_error_naming_the_element() {
    let error = array(&[b"[{\"a\":1} {\"b\":2}]"]).unwrap_err();
    assert_eq!(error.event, 1);
    assert!(
        matches!(error.kind, FrameErrorKind::Syntax { found: b'{', .. }),
        "{error}"
    );
    assert!(error.to_string().contains("expected `,` or `]`"), "{error}");
    let error = array(&[b"[{\"a\":1},{\"b\":"]).unwrap_err();
    assert_eq!((error.event, error.kind), (1, FrameErrorKind::Truncated));
    let error = array(&[b"{\"a\":1}"]).unwrap_err();
    assert_eq!(error.event, 0);
    let mut small = JsonArrayParser::with_max_event(4);
    let error = small.push(b"[{\"a\":1}]", |_, _| {}).unwrap_err();
    assert_eq!(error.kind, FrameErrorKind::TooLarge { limit: 4 });
}

#[test]
fn recorded_gemini_chunks_as_an_array_and_as_sse_give_the_same_elements() {
    common::require_conformance!();
    let dir = common::conformance_dir().join("responses/vercel/google");
    let files = common::files_ending(&dir, ".chunks.txt");
    assert!(!files.is_empty());
    for path in files {
        let lines = common::chunk_lines(&path);
        let as_array = format!("[{}]", lines.join(",\r\n"));
        let as_sse: String = lines.iter().map(|l| format!("data: {l}\r\n\r\n")).collect();
        let elements = array(&[as_array.as_bytes()]).unwrap();
        let events: Vec<String> = sse(&[as_sse.as_bytes()])
            .unwrap()
            .into_iter()
            .map(|(_, d, _)| d)
            .collect();
        assert_eq!(elements, lines, "{}", path.display());
        assert_eq!(events, lines, "{}", path.display());
    }
}
