//! Streamed replies against their bodies, and SSE framing against a plain line
//! split, as ratios in one run:
//!
//! - `reply/stream`: the SSE bytes of a long Anthropic reply (thinking, text in
//!   small deltas, a tool call), in 4 KiB chunks, through [`SseParser`] and the
//!   stream decoder (events included), against `reply/body`,
//!   `decode_response` of the same reply as one body (target ≤ 1.3×);
//! - the same for an OpenAI Chat reply;
//! - `args/anthropic` and `args/chat`: 200 KB of tool-call arguments streamed
//!   in small deltas, against `text/anthropic` and `text/chat`, the same bytes
//!   streamed as text (target ≤ 1.5×: a partial value is computed only when
//!   asked for, so each delta costs its own length);
//! - `sse/parser`: 10 MB of server-sent events through the parser, against
//!   `sse/lines`, a plain split into lines keeping the `data: ` payloads
//!   (target ≤ 1.5×).
//!
//! After criterion's report the bench prints each ratio (median of interleaved
//! rounds). Run: `benches/bench.sh --bench streams`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentmsg::providers::{anthropic, openai_chat, SseParser, StreamDecode};
use criterion::{Criterion, Throughput};
use serde_json::json;

/// Text deltas in a reply (a debug `cargo test --benches` run uses fewer).
fn deltas() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        4_000
    } else {
        200
    }
}

/// An Anthropic reply as one body and as SSE bytes.
fn anthropic_reply() -> (String, Vec<u8>) {
    let piece = "Streaming text arrives in small pieces, like this one. ";
    let n = deltas();
    let mut events = vec![
        json!({"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":900,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
    ];
    for _ in 0..n / 10 {
        events.push(json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":piece}}));
    }
    events.push(json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkgIARABGAIiQA=="}}));
    events.push(json!({"type":"content_block_stop","index":0}));
    events.push(
        json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}),
    );
    for _ in 0..n {
        events.push(json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":piece}}));
    }
    events.push(json!({"type":"content_block_stop","index":1}));
    events.push(json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}));
    for part in ["{\"path\": \"notes.md\", ", "\"text\": \"", "done\"}"] {
        events.push(json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":part}}));
    }
    events.push(json!({"type":"content_block_stop","index":2}));
    events.push(json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5000}}));
    events.push(json!({"type":"message_stop"}));
    let sse: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect();
    let body = json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
        "content":[
            {"type":"thinking","thinking":piece.repeat(n / 10),"signature":"EqQBCkgIARABGAIiQA=="},
            {"type":"text","text":piece.repeat(n)},
            {"type":"tool_use","id":"toolu_1","name":"write","input":{"path":"notes.md","text":"done"}}],
        "stop_reason":"tool_use","usage":{"input_tokens":900,"output_tokens":5000}});
    (body.to_string(), sse.into_bytes())
}

/// An OpenAI Chat reply as one body and as SSE bytes.
fn chat_reply() -> (String, Vec<u8>) {
    let piece = "Streaming text arrives in small pieces, like this one. ";
    let n = deltas();
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        json!({"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1",
            "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    };
    let mut sse = String::new();
    for i in 0..n {
        let delta = if i == 0 {
            json!({"role":"assistant","content":piece})
        } else {
            json!({"content":piece})
        };
        sse.push_str(&format!("data: {}\n\n", chunk(delta, None)));
    }
    sse.push_str(&format!("data: {}\n\n", chunk(json!({}), Some("stop"))));
    sse.push_str("data: [DONE]\n\n");
    let body = json!({"id":"c1","object":"chat.completion","created":1,"model":"gpt-4.1",
        "choices":[{"index":0,"message":{"role":"assistant","content":piece.repeat(n)},"finish_reason":"stop"}],
        "usage":{"prompt_tokens":900,"completion_tokens":5000,"total_tokens":5900}});
    (body.to_string(), sse.into_bytes())
}

/// The JSON text of 200 KB of tool-call arguments (a file a coding agent
/// writes), cut into the small pieces a provider streams.
fn argument_pieces() -> Vec<String> {
    let size = if std::env::args().any(|a| a == "--bench") {
        200_000
    } else {
        20_000
    };
    let line = "    let total = items.iter().map(|item| item.price * item.count).sum::<u64>();\n";
    let content = line.repeat(size / line.len());
    let json = serde_json::to_string(&json!({"path": "src/lib.rs", "content": content}))
        .expect("serializes");
    json.as_bytes()
        .chunks(48)
        .map(|piece| String::from_utf8(piece.to_vec()).expect("ASCII"))
        .collect()
}

/// One Anthropic block streamed as `pieces`: a tool call's arguments
/// (`input_json_delta`) or, with the same bytes, text (`text_delta`).
fn anthropic_pieces(pieces: &[String], as_arguments: bool) -> Vec<u8> {
    let mut events = vec![
        json!({"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":900,"output_tokens":1}}}),
        if as_arguments {
            json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}})
        } else {
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})
        },
    ];
    for piece in pieces {
        events.push(if as_arguments {
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":piece}})
        } else {
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":piece}})
        });
    }
    events.push(json!({"type":"content_block_stop","index":0}));
    events.push(json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5000}}));
    events.push(json!({"type":"message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect::<String>()
        .into_bytes()
}

/// One Chat reply streamed as `pieces`: a tool call's arguments or, with the
/// same bytes, text.
fn chat_pieces(pieces: &[String], as_arguments: bool) -> Vec<u8> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        json!({"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1",
            "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    };
    let mut sse = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        let delta = match (as_arguments, i) {
            (true, 0) => {
                json!({"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write","arguments":piece}}]})
            }
            (true, _) => json!({"tool_calls":[{"index":0,"function":{"arguments":piece}}]}),
            (false, 0) => json!({"role":"assistant","content":piece}),
            (false, _) => json!({"content":piece}),
        };
        sse.push_str(&format!("data: {}\n\n", chunk(delta, None)));
    }
    let finish = if as_arguments { "tool_calls" } else { "stop" };
    sse.push_str(&format!("data: {}\n\n", chunk(json!({}), Some(finish))));
    sse.push_str("data: [DONE]\n\n");
    sse.into_bytes()
}

/// Frames `sse` in 4 KiB chunks and decodes it with `decoder`.
fn stream<D: StreamDecode>(sse: &[u8], mut decoder: D) -> agentmsg::AssistantMessage {
    let mut parser = SseParser::new();
    let mut events = 0usize;
    for chunk in sse.chunks(4096) {
        parser
            .push(chunk, |e| {
                events += decoder.push(e.data).map(|told| told.len()).unwrap_or(0);
            })
            .expect("frames");
    }
    parser
        .finish(|e| {
            events += decoder.push(e.data).map(|told| told.len()).unwrap_or(0);
        })
        .expect("frames");
    black_box(events);
    decoder.finish().expect("decodes")
}

/// The floor of any stream decoder: the same framing, and each event parsed
/// as JSON and thrown away.
fn frame_and_parse(sse: &[u8]) -> usize {
    let mut parser = SseParser::new();
    let mut events = 0usize;
    let mut parse = |data: &str| {
        if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() {
            events += 1;
        }
    };
    for chunk in sse.chunks(4096) {
        parser.push(chunk, |e| parse(e.data)).expect("frames");
    }
    parser.finish(|e| parse(e.data)).expect("frames");
    events
}

/// 10 MB of server-sent events.
fn ten_megabytes() -> Vec<u8> {
    let event = "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Streaming text arrives in small pieces.\"}}\r\n\r\n";
    let size = if std::env::args().any(|a| a == "--bench") {
        10_000_000
    } else {
        200_000
    };
    event.repeat(size / event.len()).into_bytes()
}

fn parse_sse(bytes: &[u8]) -> usize {
    let mut parser = SseParser::new();
    let mut total = 0;
    for chunk in bytes.chunks(64 * 1024) {
        parser
            .push(chunk, |e| total += e.data.len())
            .expect("frames");
    }
    parser.finish(|e| total += e.data.len()).expect("frames");
    total
}

/// The baseline: a plain split into lines of the whole text, keeping the
/// `data: ` payloads.
fn split_lines(bytes: &[u8]) -> usize {
    let text = std::str::from_utf8(bytes).expect("UTF-8");
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::len)
        .sum()
}

/// The median over `rounds` of the time of `a` over the time of `b`, each
/// round running both once (interleaved, so drift hits both alike).
fn ratio(rounds: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> f64 {
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            a();
            let ta = start.elapsed();
            let start = Instant::now();
            b();
            let tb = start.elapsed();
            ta.as_secs_f64() / tb.as_secs_f64().max(1e-12)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

fn main() {
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let (a_body, a_sse) = anthropic_reply();
    let (c_body, c_sse) = chat_reply();
    let sse = ten_megabytes();
    let pieces = argument_pieces();
    let a_args = anthropic_pieces(&pieces, true);
    let a_text = anthropic_pieces(&pieces, false);
    let c_args = chat_pieces(&pieces, true);
    let c_text = chat_pieces(&pieces, false);
    let whole = pieces.concat();
    for (args, text) in [
        (
            stream(&a_args, anthropic::StreamDecoder::new()),
            stream(&a_text, anthropic::StreamDecoder::new()),
        ),
        (
            stream(&c_args, openai_chat::StreamDecoder::new()),
            stream(&c_text, openai_chat::StreamDecoder::new()),
        ),
    ] {
        let call = args.tool_calls().next().expect("a call");
        assert_eq!(call.arguments.as_str(), whole);
        assert_eq!(text.text_content(), whole);
    }
    // Both sides give the same message.
    let streamed = stream(&a_sse, anthropic::StreamDecoder::new());
    let decoded = anthropic::decode_response(&a_body).expect("decodes");
    assert_eq!(streamed.content, decoded.content);
    assert_eq!(parse_sse(&sse), split_lines(&sse));
    {
        let mut group = criterion.benchmark_group("reply");
        group.throughput(Throughput::Bytes(a_sse.len() as u64));
        group.bench_function("anthropic/stream", |b| {
            b.iter(|| stream(black_box(&a_sse), anthropic::StreamDecoder::new()))
        });
        group.bench_function("anthropic/body", |b| {
            b.iter(|| anthropic::decode_response(black_box(&a_body)).expect("decodes"))
        });
        group.bench_function("chat/stream", |b| {
            b.iter(|| stream(black_box(&c_sse), openai_chat::StreamDecoder::new()))
        });
        group.bench_function("chat/body", |b| {
            b.iter(|| openai_chat::decode_response(black_box(&c_body)).expect("decodes"))
        });
        group.finish();
    }
    {
        let mut group = criterion.benchmark_group("args");
        group.throughput(Throughput::Bytes(whole.len() as u64));
        group.bench_function("anthropic/arguments", |b| {
            b.iter(|| stream(black_box(&a_args), anthropic::StreamDecoder::new()))
        });
        group.bench_function("anthropic/text", |b| {
            b.iter(|| stream(black_box(&a_text), anthropic::StreamDecoder::new()))
        });
        group.bench_function("chat/arguments", |b| {
            b.iter(|| stream(black_box(&c_args), openai_chat::StreamDecoder::new()))
        });
        group.bench_function("chat/text", |b| {
            b.iter(|| stream(black_box(&c_text), openai_chat::StreamDecoder::new()))
        });
        group.finish();
    }
    {
        let mut group = criterion.benchmark_group("sse");
        group.throughput(Throughput::Bytes(sse.len() as u64));
        group.bench_function("parser", |b| b.iter(|| parse_sse(black_box(&sse))));
        group.bench_function("lines", |b| b.iter(|| split_lines(black_box(&sse))));
        group.finish();
    }
    criterion.final_summary();
    let rounds = if std::env::args().any(|a| a == "--bench") {
        31
    } else {
        3
    };
    let anthropic_ratio = ratio(
        rounds,
        || drop(black_box(stream(&a_sse, anthropic::StreamDecoder::new()))),
        || drop(black_box(anthropic::decode_response(&a_body))),
    );
    let chat_ratio = ratio(
        rounds,
        || drop(black_box(stream(&c_sse, openai_chat::StreamDecoder::new()))),
        || drop(black_box(openai_chat::decode_response(&c_body))),
    );
    let sse_ratio = ratio(
        rounds,
        || {
            black_box(parse_sse(&sse));
        },
        || {
            black_box(split_lines(&sse));
        },
    );
    let floor_ratio = ratio(
        rounds,
        || {
            black_box(frame_and_parse(&a_sse));
        },
        || drop(black_box(anthropic::decode_response(&a_body))),
    );
    let decoder_ratio = ratio(
        rounds,
        || drop(black_box(stream(&a_sse, anthropic::StreamDecoder::new()))),
        || {
            black_box(frame_and_parse(&a_sse));
        },
    );
    let a_args_ratio = ratio(
        rounds,
        || drop(black_box(stream(&a_args, anthropic::StreamDecoder::new()))),
        || drop(black_box(stream(&a_text, anthropic::StreamDecoder::new()))),
    );
    let c_args_ratio = ratio(
        rounds,
        || {
            drop(black_box(stream(
                &c_args,
                openai_chat::StreamDecoder::new(),
            )))
        },
        || {
            drop(black_box(stream(
                &c_text,
                openai_chat::StreamDecoder::new(),
            )))
        },
    );
    println!(
        "ratio args/anthropic 200 KB of arguments vs the same bytes as text: {a_args_ratio:.2}x"
    );
    println!("ratio args/chat 200 KB of arguments vs the same bytes as text: {c_args_ratio:.2}x");
    println!("ratio reply/anthropic stream vs body: {anthropic_ratio:.2}x");
    println!("ratio reply/anthropic framing + JSON parse of each event (the floor) vs body: {floor_ratio:.2}x");
    println!("ratio reply/anthropic stream vs that floor: {decoder_ratio:.2}x");
    println!("ratio reply/chat stream vs body: {chat_ratio:.2}x");
    println!("ratio sse/parser vs line split: {sse_ratio:.2}x");
}
