//! Decoding and encoding one realistic mixed transcript of 50,000 lines, against
//! three baselines on the same lines:
//!
//! - `limit`: plain serde told each line's concrete type (`from_str::<UserMessage>`,
//!   …) and `to_writer` of each concrete value;
//! - `tagged`: a serde internally tagged enum (`#[serde(tag = "role")]`);
//! - `typetag`: a `#[typetag::serde(tag = "role")]` trait.
//!
//! The transcript comes in two versions holding the same objects: role first (as
//! our writer puts it) and role last. Unknown kinds are measured against a plain
//! copy of their bytes. After criterion's report the bench prints the ratios to
//! the limit (median of interleaved rounds, see [`ratio`]), e.g.
//! `ratio decode/role-first: 1.07x`.
//!
//! Run: `benches/bench.sh --bench transcript` (see benches/README.md).

use std::hint::black_box;
use std::ops::Range;
use std::time::{Duration, Instant};

use agentmsg::custom::{AppMessage, BashExecution, CompactionSummary, Registry};
use agentmsg::message::MediaSource;
use agentmsg::transcript::{decode_line, DecodeMode};
use agentmsg::{
    AgentMessage, AssistantContent, AssistantMessage, Cost, ImageContent, LlmMessage, Message,
    MessageId, StopReason, TextContent, ThinkingContent, ToolCall, ToolResultContent,
    ToolResultMessage, TurnId, Usage, UserContent, UserMessage,
};
use criterion::{Criterion, SamplingMode, Throughput};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Lines in the transcript (`AGENTMSG_BENCH_LINES` overrides it, for profiling).
const LINES: usize = 50_000;
/// Lines of unregistered kinds, for the "kept at the cost of a copy" measurement.
const UNKNOWN_LINES: usize = 5_000;

fn lines() -> usize {
    // `cargo test --benches` (no `--bench` argument) only checks that each
    // benchmark runs, in a debug build: a small transcript is enough.
    let default = if bench_mode() { LINES } else { 2_000 };
    std::env::var("AGENTMSG_BENCH_LINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn bench_mode() -> bool {
    std::env::args().any(|a| a == "--bench")
}
/// Interleaved rounds, and whole passes of each side, behind each printed ratio.
const RATIO_RUNS: usize = 9;

// ---------------------------------------------------------------------------
// The application's custom kinds.

/// A UI notice; never reaches the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
struct Notice {
    text: String,
    level: String,
}

// A shell command the user ran themselves: pi's `bashExecution`, agentmsg's
// built-in `BashExecution`.

/// The user switched models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "modelChange")]
#[serde(rename_all = "camelCase")]
struct ModelChange {
    provider: String,
    model: String,
    thinking_level: String,
    #[agent_message(timestamp)]
    timestamp: u64,
}

// ---------------------------------------------------------------------------
// Baselines (b) and (c) over the same concrete types.

/// Baseline (b): a serde internally tagged enum.
#[derive(Serialize, Deserialize)]
#[serde(tag = "role")]
enum Tagged {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
    #[serde(rename = "notice")]
    Notice(Notice),
    #[serde(rename = "bashExecution")]
    Bash(BashExecution),
    #[serde(rename = "modelChange")]
    ModelChange(ModelChange),
    #[serde(rename = "compactionSummary")]
    Compaction(CompactionSummary),
}

/// Baseline (c): a typetag trait.
#[typetag::serde(tag = "role")]
trait Line {}

#[typetag::serde(name = "user")]
impl Line for UserMessage {}
#[typetag::serde(name = "assistant")]
impl Line for AssistantMessage {}
#[typetag::serde(name = "toolResult")]
impl Line for ToolResultMessage {}
#[typetag::serde(name = "notice")]
impl Line for Notice {}
#[typetag::serde(name = "bashExecution")]
impl Line for BashExecution {}
#[typetag::serde(name = "modelChange")]
impl Line for ModelChange {}
#[typetag::serde(name = "compactionSummary")]
impl Line for CompactionSummary {}

/// An application's own record holding a message, as an app that keeps
/// messages in its own data decodes it through serde: `AgentMessage` on the
/// generic path, or the line's concrete type (the limit).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AppRecord<M> {
    seq: u64,
    message: M,
}

/// One line's value as its concrete type: what the limit decodes and encodes.
#[derive(Debug, Clone, PartialEq)]
enum Concrete {
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
    Notice(Notice),
    Bash(BashExecution),
    ModelChange(ModelChange),
    Compaction(CompactionSummary),
}

/// The concrete type of a line, known in advance by the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Assistant,
    ToolResult,
    Notice,
    Bash,
    ModelChange,
    Compaction,
}

impl Concrete {
    fn kind(&self) -> Kind {
        match self {
            Self::User(_) => Kind::User,
            Self::Assistant(_) => Kind::Assistant,
            Self::ToolResult(_) => Kind::ToolResult,
            Self::Notice(_) => Kind::Notice,
            Self::Bash(_) => Kind::Bash,
            Self::ModelChange(_) => Kind::ModelChange,
            Self::Compaction(_) => Kind::Compaction,
        }
    }

    fn to_agent(&self, id: MessageId, turn_id: TurnId) -> AgentMessage {
        let llm = |message: Message| {
            AgentMessage::Llm(LlmMessage {
                message,
                id: Some(id.clone()),
                turn_id: Some(turn_id.clone()),
                parent_id: agentmsg::ParentId::Previous,
            })
        };
        let custom = |message: Box<dyn agentmsg::custom::DynCustomMessage>| {
            AgentMessage::Custom(AppMessage {
                message,
                id: Some(id.clone()),
                turn_id: Some(turn_id.clone()),
                parent_id: agentmsg::ParentId::Previous,
                timestamp: None,
            })
        };
        match self.clone() {
            Self::User(m) => llm(Message::User(m)),
            Self::Assistant(m) => llm(Message::Assistant(m)),
            Self::ToolResult(m) => llm(Message::ToolResult(m)),
            Self::Notice(m) => custom(Box::new(m)),
            Self::Bash(m) => custom(Box::new(m)),
            Self::ModelChange(m) => custom(Box::new(m)),
            Self::Compaction(m) => custom(Box::new(m)),
        }
    }

    fn to_tagged(&self) -> Tagged {
        match self.clone() {
            Self::User(m) => Tagged::User(m),
            Self::Assistant(m) => Tagged::Assistant(m),
            Self::ToolResult(m) => Tagged::ToolResult(m),
            Self::Notice(m) => Tagged::Notice(m),
            Self::Bash(m) => Tagged::Bash(m),
            Self::ModelChange(m) => Tagged::ModelChange(m),
            Self::Compaction(m) => Tagged::Compaction(m),
        }
    }

    fn to_typetag(&self) -> Box<dyn Line> {
        match self.clone() {
            Self::User(m) => Box::new(m),
            Self::Assistant(m) => Box::new(m),
            Self::ToolResult(m) => Box::new(m),
            Self::Notice(m) => Box::new(m),
            Self::Bash(m) => Box::new(m),
            Self::ModelChange(m) => Box::new(m),
            Self::Compaction(m) => Box::new(m),
        }
    }
}

// ---------------------------------------------------------------------------
// The generator: a small LCG and a model of a coding agent's session.

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 17
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }

    fn base64(&mut self, min: u64, max: u64) -> String {
        let len = self.range(min, max) as usize;
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s: String = (0..len).map(|_| *self.pick(ALPHABET) as char).collect();
        s.push_str("==");
        s
    }

    fn alnum(&mut self, len: usize) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..len).map(|_| *self.pick(ALPHABET) as char).collect()
    }

    /// A UUIDv7-shaped id whose time part follows `ms`.
    fn uuid(&mut self, ms: u64) -> String {
        format!(
            "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
            ms >> 16,
            ms & 0xffff,
            self.next() & 0xfff,
            0x8000 | (self.next() & 0x3fff),
            self.next() & 0xffff_ffff_ffff
        )
    }
}

const WORDS: &[&str] = &[
    "the",
    "parser",
    "returns",
    "an",
    "error",
    "when",
    "line",
    "is",
    "empty",
    "we",
    "should",
    "keep",
    "it",
    "as",
    "unknown",
    "and",
    "move",
    "on",
    "to",
    "next",
    "file",
    "test",
    "fails",
    "because",
    "of",
    "a",
    "missing",
    "field",
    "in",
    "struct",
    "so",
    "add",
    "default",
    "value",
    "then",
    "run",
    "cargo",
    "build",
    "again",
    "check",
    "that",
    "output",
    "matches",
    "expected",
    "transcript",
    "message",
    "tool",
    "call",
    "result",
    "with",
    "id",
    "turn",
    "model",
    "provider",
    "cache",
    "token",
    "usage",
    "cost",
    "stream",
    "decode",
    "encode",
    "serde",
    "json",
    "schema",
];

const PATHS: &[&str] = &[
    "src/lib.rs",
    "src/main.rs",
    "runtime/src/envelope.rs",
    "runtime/src/jsonl.rs",
    "macros/src/expand.rs",
    "tests/roundtrip.rs",
    "Cargo.toml",
    "README.md",
    "packages/ai/src/providers/anthropic.ts",
    "packages/agent/src/agent-loop.ts",
];

const CODE: &[&str] = &[
    "use std::collections::HashMap;",
    "pub fn decode(line: &str) -> Result<Message, Error> {",
    "    let value: serde_json::Value = serde_json::from_str(line)?;",
    "    match value.get(\"role\").and_then(|r| r.as_str()) {",
    "        Some(\"user\") => Ok(Message::User(parse(value)?)),",
    "        _ => Err(Error::UnknownRole { line: 3 }),",
    "    }",
    "}",
    "\tif (event.type === \"content_block_delta\") {",
    "\t\toutput.content[index].text += event.delta.text;",
    "#[derive(Debug, Clone, PartialEq)]",
    "/// Returns the \"text\" of the block, or `None`.",
    "    assert_eq!(decoded, original, \"line {i}\");",
    "export async function* stream(model: Model, context: Context) {",
];

/// Prose of `min..=max` bytes (about): sentences, some `code` and "quotes", paragraphs.
fn prose(rng: &mut Lcg, min: u64, max: u64) -> String {
    let len = rng.range(min, max) as usize;
    let mut s = String::with_capacity(len + 16);
    let mut sentence = 0;
    while s.len() < len {
        let word = *rng.pick(WORDS);
        if sentence == 0 {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                s.extend(first.to_uppercase());
                s.push_str(chars.as_str());
            }
        } else if rng.chance(4) {
            s.push('`');
            s.push_str(word);
            s.push('`');
        } else if rng.chance(2) {
            s.push('"');
            s.push_str(word);
            s.push('"');
        } else {
            s.push_str(word);
        }
        sentence += 1;
        if sentence > 6 && rng.chance(15) {
            s.push('.');
            sentence = 0;
            s.push_str(if rng.chance(20) { "\n\n" } else { " " });
        } else {
            s.push(' ');
        }
    }
    s.push('.');
    s
}

/// About `min..=max` bytes of code-like lines (quotes, tabs, newlines: escapes in JSON).
fn code(rng: &mut Lcg, min: u64, max: u64) -> String {
    let len = rng.range(min, max) as usize;
    let mut s = String::with_capacity(len + 80);
    let mut n = 1;
    while s.len() < len {
        if rng.chance(30) {
            s.push_str(&format!("{n:>4}\t"));
        }
        let line: &&str = rng.pick(CODE);
        s.push_str(line);
        s.push('\n');
        n += 1;
    }
    s
}

fn tool_call(rng: &mut Lcg) -> ToolCall {
    let id = format!("toolu_01{}", rng.alnum(22));
    let path = *rng.pick(PATHS);
    let (name, arguments) = match rng.range(0, 9) {
        0..=3 => (
            "read",
            json!({ "path": path, "offset": rng.range(1, 400), "limit": 200 }),
        ),
        4..=5 => {
            let cmd = format!(
                "cd /work/agentmsg && cargo test --test {} -- --nocapture 2>&1 | tail -n {}",
                rng.pick(WORDS),
                rng.range(20, 80)
            );
            ("bash", json!({ "command": cmd, "timeout": 120 }))
        }
        6..=8 => {
            let old = code(rng, 40, 400);
            let new = code(rng, 40, 600);
            (
                "edit",
                json!({ "path": path, "oldText": old, "newText": new }),
            )
        }
        _ => {
            let content = code(rng, 300, 3000);
            ("write", json!({ "path": path, "content": content }))
        }
    };
    ToolCall::new(id, name, arguments)
}

fn usage(rng: &mut Lcg) -> Usage {
    let input = rng.range(2, 4000);
    let output = rng.range(20, 2500);
    let cache_read = rng.range(0, 90_000);
    let cache_write = if rng.chance(30) {
        rng.range(100, 8000)
    } else {
        0
    };
    // Rounded to 1e-9 dollar: serde_json without its `float_roundtrip` feature
    // reads some 17-digit floats back one ulp off, which would fail `check`.
    let dollars = |tokens: u64, per_million: f64| (tokens as f64 * per_million * 1e3).round() / 1e9;
    let (i, o, r, w) = (
        dollars(input, 5.0),
        dollars(output, 25.0),
        dollars(cache_read, 0.5),
        dollars(cache_write, 6.25),
    );
    let cost = Cost {
        input: i,
        output: o,
        cache_read: r,
        cache_write: w,
        total: ((i + o + r + w) * 1e9).round() / 1e9,
    };
    Usage {
        input,
        output,
        reasoning: 0,
        cache_read,
        cache_write,
        cache_write_1h: 0,
        total_tokens: Some(input + output + cache_read + cache_write),
        cost: Some(cost),
    }
}

/// A pending tool call waiting for its result.
struct Pending {
    id: String,
    name: String,
}

/// The whole transcript: per line, its concrete value, id and turn id.
fn generate(rng: &mut Lcg, lines: usize) -> Vec<(Concrete, MessageId, TurnId)> {
    let mut out = Vec::with_capacity(lines + 16);
    let mut ms: u64 = 1_765_233_665_292;
    let mut model = ("anthropic-messages", "anthropic", "claude-opus-4-5");
    while out.len() < lines {
        // One turn: custom entries (one on average), a prompt, then assistant steps
        // with tool calls and their results, ending in a text answer.
        let turn = TurnId::from(rng.uuid(ms));
        let mut push = |rng: &mut Lcg, value: Concrete, ms: &mut u64| {
            *ms += rng.range(40, 9000);
            out.push((value, MessageId::from(rng.uuid(*ms)), turn.clone()));
        };
        for _ in 0..*rng.pick(&[0, 1, 1, 2]) {
            let value = match rng.range(0, 9) {
                0..=3 => Concrete::Bash(BashExecution {
                    command: format!("git diff --stat {}", rng.pick(PATHS)),
                    output: code(rng, 80, 3000),
                    exit_code: Some(if rng.chance(85) { 0 } else { 1 }),
                    cancelled: false,
                    truncated: rng.chance(5),
                    full_output_path: None,
                    timestamp: ms,
                    exclude_from_context: false,
                }),
                4..=6 => Concrete::Notice(Notice {
                    text: prose(rng, 20, 120),
                    level: (*rng.pick(&["info", "warning", "error"])).to_owned(),
                }),
                7..=8 => {
                    model = *rng.pick(&[
                        ("anthropic-messages", "anthropic", "claude-opus-4-5"),
                        ("anthropic-messages", "anthropic", "claude-sonnet-4-5"),
                        ("openai-responses", "openai", "gpt-5.1-codex"),
                    ]);
                    Concrete::ModelChange(ModelChange {
                        provider: model.1.to_owned(),
                        model: model.2.to_owned(),
                        thinking_level: (*rng.pick(&["off", "low", "medium", "high"])).to_owned(),
                        timestamp: ms,
                    })
                }
                _ => Concrete::Compaction(CompactionSummary {
                    summary: prose(rng, 800, 4000),
                    tokens_before: rng.range(60_000, 180_000),
                    first_kept_id: Some(MessageId::from(rng.uuid(ms))),
                    timestamp: ms,
                    details: None,
                }),
            };
            push(rng, value, &mut ms);
            if rng.chance(15) {
                let text = prose(rng, 20, 100);
                push(
                    rng,
                    Concrete::Notice(Notice {
                        text,
                        level: "info".to_owned(),
                    }),
                    &mut ms,
                );
            }
        }
        let mut content = vec![UserContent::Text(TextContent::new(prose(rng, 30, 600)))];
        if rng.chance(1) {
            content.push(UserContent::Image(ImageContent {
                source: MediaSource::Base64 {
                    data: rng.base64(2000, 12_000),
                    mime_type: "image/png".to_owned(),
                },
            }));
        }
        push(
            rng,
            Concrete::User(UserMessage {
                content,
                timestamp: ms,
            }),
            &mut ms,
        );
        let steps = rng.range(1, 6);
        for step in 0..steps {
            let last = step + 1 == steps;
            let mut blocks = Vec::new();
            if model.1 == "anthropic" && rng.chance(70) {
                blocks.push(AssistantContent::Thinking(
                    ThinkingContent::new(prose(rng, 100, 1500))
                        .with_signature(rng.base64(200, 600)),
                ));
            }
            if last || rng.chance(40) {
                blocks.push(AssistantContent::Text(TextContent::new(prose(
                    rng, 40, 1500,
                ))));
            }
            let mut pending = Vec::new();
            if !last {
                for _ in 0..rng.range(1, 3) {
                    let call = tool_call(rng);
                    pending.push(Pending {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                    blocks.push(AssistantContent::ToolCall(call));
                }
            }
            let assistant = AssistantMessage {
                content: blocks,
                api: model.0.to_owned(),
                provider: model.1.to_owned(),
                model: model.2.to_owned(),
                response_id: Some(format!("msg_01{}", rng.alnum(22))),
                usage: usage(rng),
                stop_reason: if last {
                    StopReason::Stop
                } else {
                    StopReason::ToolUse
                },
                error_message: None,
                timestamp: ms,
            };
            push(rng, Concrete::Assistant(assistant), &mut ms);
            for call in pending {
                let text = match call.name.as_str() {
                    "read" => code(rng, 200, 6000),
                    "bash" => code(rng, 50, 3000),
                    _ => format!("Successfully replaced text in {}.", rng.pick(PATHS)),
                };
                let is_error = rng.chance(5);
                let details = match call.name.as_str() {
                    "bash" => Some(
                        json!({ "exitCode": i32::from(is_error), "durationMs": rng.range(5, 60_000) }),
                    ),
                    "edit" => Some(
                        json!({ "diff": code(rng, 80, 800), "firstChangedLine": rng.range(1, 500) }),
                    ),
                    "read" => {
                        Some(json!({ "lines": rng.range(1, 400), "truncated": rng.chance(10) }))
                    }
                    _ => None,
                };
                let result = ToolResultMessage {
                    tool_call_id: call.id,
                    tool_name: call.name,
                    content: vec![ToolResultContent::Text(TextContent::new(text))],
                    is_error,
                    timestamp: ms,
                    details,
                };
                push(rng, Concrete::ToolResult(result), &mut ms);
            }
        }
    }
    out.truncate(lines);
    out
}

/// Lines of kinds no type claims (an extension's entries, a newer app's kinds).
fn unknown_lines(rng: &mut Lcg, lines: usize) -> Vec<String> {
    (0..lines)
        .map(|i| {
            let ms = 1_765_233_665_292 + i as u64 * 1000;
            let value = match i % 3 {
                0 => json!({
                    "role": "uiState",
                    "panel": rng.pick(PATHS),
                    "scroll": rng.range(0, 10_000),
                    "collapsed": [rng.range(0, 50), rng.range(0, 50)],
                    "id": rng.uuid(ms),
                }),
                1 => json!({
                    "role": "pluginEvent",
                    "plugin": "git-status",
                    "payload": { "branch": "main", "dirty": code(rng, 40, 600) },
                    "timestamp": ms,
                    "id": rng.uuid(ms),
                    "turnId": rng.uuid(ms),
                }),
                _ => json!({
                    "role": "approvalRequest",
                    "toolCallId": format!("toolu_01{}", rng.alnum(22)),
                    "reason": prose(rng, 40, 400),
                    "id": rng.uuid(ms),
                }),
            };
            let mut line = serde_json::to_string(&value).unwrap_or_default();
            // `json!` sorts keys; put `role` first as a writer would.
            if let Some(kind) = value.get("role").and_then(|r| r.as_str()) {
                let field = format!("\"role\":\"{kind}\"");
                line = line.replacen(&format!(",{field}"), "", 1).replacen(
                    &format!("{field},"),
                    "",
                    1,
                );
                line.insert_str(1, &format!("{field},"));
            }
            line
        })
        .collect()
}

/// The same object with its leading `"role":"…",` moved to the end.
fn role_last(line: &str) -> String {
    let rest = line
        .strip_prefix("{\"role\":\"")
        .expect("our writer puts the role first");
    let end = rest.find('"').expect("a role without escapes");
    let kind = &rest[..end];
    let body = rest[end + 1..]
        .strip_prefix(',')
        .expect("fields after the role");
    let body = body.strip_suffix('}').expect("one object");
    format!("{{{body},\"role\":\"{kind}\"}}")
}

// ---------------------------------------------------------------------------
// The data set and one pass of each variant.

struct Data {
    concrete: Vec<Concrete>,
    kinds: Vec<Kind>,
    agent: Vec<AgentMessage>,
    /// The same messages without `id` and `turnId`, to tell what the envelope
    /// costs the encoder.
    agent_bare: Vec<AgentMessage>,
    tagged: Vec<Tagged>,
    typetag: Vec<Box<dyn Line>>,
    role_first: Vec<String>,
    role_last: Vec<String>,
    /// `role_first` without `id` and `turnId`, to tell what keeping them costs.
    bare_first: Vec<String>,
    /// Each line of `role_first` and `role_last` inside an app's record
    /// (`{"seq":N,"message":LINE}`, [`AppRecord`]).
    record_first: Vec<String>,
    record_last: Vec<String>,
    unknown: Vec<String>,
    /// The same lines with a 2 kB text field: the size of an average line.
    unknown_long: Vec<String>,
    registry: &'static Registry,
}

impl Data {
    fn new() -> Self {
        let mut rng = Lcg(0x5eed_0a6e_17d5);
        let mut generated = generate(&mut rng, lines());
        // `AGENTMSG_BENCH_ONLY=llm|custom`: only the LLM lines, or only the others.
        if let Ok(only) = std::env::var("AGENTMSG_BENCH_ONLY") {
            let keep_llm = match only.as_str() {
                "llm" => true,
                "custom" => false,
                other => panic!("AGENTMSG_BENCH_ONLY is `llm` or `custom`, not `{other}`"),
            };
            generated.retain(|(c, _, _)| {
                let llm = matches!(c.kind(), Kind::User | Kind::Assistant | Kind::ToolResult);
                llm == keep_llm
            });
        }
        // The representations the encoders read are built line by line, all five
        // copies of a line one after the other, so that each side reads memory
        // laid out the same way. (Built one after the other, a representation
        // whose blocks filled the holes another left was up to 30% slower to
        // encode for reasons that have nothing to do with the encoder.)
        let n = generated.len();
        let (mut concrete, mut agent, mut agent_bare) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let (mut tagged, mut typetag) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (i, (c, id, turn)) in generated.iter().enumerate() {
            let message = c.to_agent(id.clone(), turn.clone());
            // Which copy comes first rotates from line to line. A clone lays the
            // line out in one run (`to_agent` allocated the ids between the
            // message's own blocks).
            for k in 0..5 {
                match (i + k) % 5 {
                    0 => agent.push(message.clone()),
                    1 => agent_bare.push(message.clone().with_id(None).with_turn_id(None).clone()),
                    2 => concrete.push(c.clone()),
                    3 => tagged.push(c.to_tagged()),
                    _ => typetag.push(c.to_typetag()),
                }
            }
        }
        drop(generated);
        let role_first: Vec<String> = agent
            .iter()
            .map(|m| m.to_line().expect("every generated message encodes"))
            .collect();
        let role_last: Vec<String> = role_first.iter().map(|l| role_last(l)).collect();
        let bare_first: Vec<String> = agent_bare
            .iter()
            .map(|m| m.to_line().expect("every generated message encodes"))
            .collect();
        let unknown = unknown_lines(&mut rng, UNKNOWN_LINES);
        let record = |lines: &[String]| -> Vec<String> {
            lines
                .iter()
                .enumerate()
                .map(|(i, line)| format!("{{\"seq\":{i},\"message\":{line}}}"))
                .collect()
        };
        let (record_first, record_last) = (record(&role_first), record(&role_last));
        let data = Self {
            record_first,
            record_last,
            kinds: concrete.iter().map(Concrete::kind).collect(),
            tagged,
            typetag,
            concrete,
            agent_bare,
            agent,
            role_first,
            role_last,
            bare_first,
            unknown_long: unknown
                .iter()
                .map(|line| {
                    let note =
                        serde_json::to_string(&prose(&mut rng, 1800, 2200)).unwrap_or_default();
                    let body = line.strip_suffix('}').unwrap_or(line);
                    format!("{body},\"note\":{note}}}")
                })
                .collect(),
            unknown,
            registry: Registry::global(),
        };
        data.check();
        data
    }

    /// Every variant reads back what was generated, so each one does the full job.
    fn check(&self) {
        for (i, (first, last)) in self.role_first.iter().zip(&self.role_last).enumerate() {
            for line in [first, last] {
                let decoded = decode_line(line, self.registry, DecodeMode::Strict)
                    .unwrap_or_else(|e| panic!("line {i}: {e}: {line}"));
                assert_eq!(decoded, self.agent[i], "line {i}");
                assert_eq!(
                    decode_limit(line, self.kinds[i]),
                    self.concrete[i],
                    "line {i}"
                );
                let tagged: Tagged = serde_json::from_str(line).expect("tagged decodes");
                assert_eq!(
                    serde_json::to_string(&tagged).ok(),
                    serde_json::to_string(&self.tagged[i]).ok()
                );
                serde_json::from_str::<Box<dyn Line>>(line).expect("typetag decodes");
            }
            assert_eq!(self.agent[i].to_line().ok().as_ref(), Some(first));
            for line in [&self.record_first[i], &self.record_last[i]] {
                let record: AppRecord<AgentMessage> =
                    serde_json::from_str(line).unwrap_or_else(|e| panic!("line {i}: {e}"));
                assert_eq!((record.seq, &record.message), (i as u64, &self.agent[i]));
                assert_eq!(decode_record_limit(line, self.kinds[i]), self.concrete[i]);
            }
            let bare = decode_line(&self.bare_first[i], self.registry, DecodeMode::Strict);
            assert_eq!(bare.ok().as_ref(), Some(&self.agent_bare[i]), "line {i}");
        }
        for line in self.unknown.iter().chain(&self.unknown_long) {
            let kept = decode_line(line, self.registry, DecodeMode::Lenient).expect("kept");
            assert_eq!(kept.as_unknown().map(|u| u.raw()), Some(line.as_str()));
        }
        let custom = self.agent.iter().filter(|m| m.is_custom()).count();
        let bytes: usize = self.role_first.iter().map(|l| l.len() + 1).sum();
        println!(
            "transcript: {} lines, {:.1} MB, {:.1}% custom ({} notice, {} bashExecution, {} modelChange, {} compactionSummary)",
            self.agent.len(),
            bytes as f64 / 1e6,
            custom as f64 * 100.0 / self.agent.len() as f64,
            self.count(Kind::Notice),
            self.count(Kind::Bash),
            self.count(Kind::ModelChange),
            self.count(Kind::Compaction),
        );
    }

    fn count(&self, kind: Kind) -> usize {
        self.kinds.iter().filter(|k| **k == kind).count()
    }

    fn bytes(&self, lines: &[String]) -> u64 {
        lines.iter().map(|l| l.len() as u64 + 1).sum()
    }
}

fn parse<T: serde::de::DeserializeOwned>(line: &str) -> T {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("limit: {e}"))
}

fn decode_limit(line: &str, kind: Kind) -> Concrete {
    match kind {
        Kind::User => Concrete::User(parse(line)),
        Kind::Assistant => Concrete::Assistant(parse(line)),
        Kind::ToolResult => Concrete::ToolResult(parse(line)),
        Kind::Notice => Concrete::Notice(parse(line)),
        Kind::Bash => Concrete::Bash(parse(line)),
        Kind::ModelChange => Concrete::ModelChange(parse(line)),
        Kind::Compaction => Concrete::Compaction(parse(line)),
    }
}

fn parse_record<T: serde::de::DeserializeOwned>(line: &str) -> T {
    serde_json::from_str::<AppRecord<T>>(line)
        .unwrap_or_else(|e| panic!("limit: {e}"))
        .message
}

fn decode_record_limit(line: &str, kind: Kind) -> Concrete {
    match kind {
        Kind::User => Concrete::User(parse_record(line)),
        Kind::Assistant => Concrete::Assistant(parse_record(line)),
        Kind::ToolResult => Concrete::ToolResult(parse_record(line)),
        Kind::Notice => Concrete::Notice(parse_record(line)),
        Kind::Bash => Concrete::Bash(parse_record(line)),
        Kind::ModelChange => Concrete::ModelChange(parse_record(line)),
        Kind::Compaction => Concrete::Compaction(parse_record(line)),
    }
}

/// The limit of an app's record: the record with the line's concrete type.
#[inline(never)]
fn pass_record_limit(data: &Data, lines: &[String], r: Range<usize>) {
    for (line, kind) in lines[r.clone()].iter().zip(&data.kinds[r]) {
        black_box(decode_record_limit(black_box(line), *kind));
    }
}

/// An app's record holding an `AgentMessage`, through serde.
#[inline(never)]
fn pass_record_generic(lines: &[String], r: Range<usize>) {
    for line in &lines[r] {
        let _ = black_box(serde_json::from_str::<AppRecord<AgentMessage>>(black_box(
            line,
        )));
    }
}

#[inline(never)]
fn pass_decode_ours(data: &Data, lines: &[String], r: Range<usize>) {
    for line in &lines[r] {
        let _ = black_box(decode_line(
            black_box(line),
            data.registry,
            DecodeMode::Lenient,
        ));
    }
}

#[inline(never)]
fn pass_decode_limit(data: &Data, lines: &[String], r: Range<usize>) {
    for (line, kind) in lines[r.clone()].iter().zip(&data.kinds[r]) {
        black_box(decode_limit(black_box(line), *kind));
    }
}

/// The generic serde path: `AgentMessage`'s own `Deserialize`, as an app that
/// embeds messages in its own structs uses it.
#[inline(never)]
fn pass_decode_generic(lines: &[String], r: Range<usize>) {
    for line in &lines[r] {
        let _ = black_box(serde_json::from_str::<AgentMessage>(black_box(line)));
    }
}

#[inline(never)]
fn pass_decode_tagged(lines: &[String], r: Range<usize>) {
    for line in &lines[r] {
        let _ = black_box(serde_json::from_str::<Tagged>(black_box(line)));
    }
}

#[inline(never)]
fn pass_decode_typetag(lines: &[String], r: Range<usize>) {
    for line in &lines[r] {
        let _ = black_box(serde_json::from_str::<Box<dyn Line>>(black_box(line)));
    }
}

/// The encoders write into a 64 KiB buffer that is "flushed" when full, as a
/// buffered file writer would: the timing is the encoder's, not the memory
/// bandwidth of a 90 MB buffer (which made the ratios swing with the load of
/// the machine).
const FLUSH_AT: usize = 64 * 1024;

fn flush(out: &mut Vec<u8>, written: &mut usize, force: bool) {
    if force || out.len() >= FLUSH_AT {
        black_box(out.as_slice());
        *written += out.len();
        out.clear();
    }
}

/// Returns the bytes written.
/// Writes each item as one line with `write` into `out`, "flushed" every
/// [`FLUSH_AT`] bytes; returns the bytes written. Inlined into each pass, so
/// every variant runs its own loop.
#[inline(always)]
fn encode_lines<T>(
    items: &[T],
    out: &mut Vec<u8>,
    mut write: impl FnMut(&T, &mut Vec<u8>) -> serde_json::Result<()>,
) -> usize {
    let mut written = 0;
    out.clear();
    for item in items {
        let _ = write(item, out);
        out.push(b'\n');
        flush(out, &mut written, false);
    }
    flush(out, &mut written, true);
    written
}

#[inline(never)]
fn pass_encode_ours(data: &Data, r: Range<usize>, out: &mut Vec<u8>) -> usize {
    encode_lines(&data.agent[r], out, |m, out| m.write_line(out))
}

#[inline(never)]
fn pass_encode_bare(data: &Data, r: Range<usize>, out: &mut Vec<u8>) -> usize {
    encode_lines(&data.agent_bare[r], out, |m, out| m.write_line(out))
}

#[inline(never)]
fn pass_encode_limit(data: &Data, r: Range<usize>, out: &mut Vec<u8>) -> usize {
    encode_lines(&data.concrete[r], out, |value, out| match value {
        Concrete::User(m) => serde_json::to_writer(out, m),
        Concrete::Assistant(m) => serde_json::to_writer(out, m),
        Concrete::ToolResult(m) => serde_json::to_writer(out, m),
        Concrete::Notice(m) => serde_json::to_writer(out, m),
        Concrete::Bash(m) => serde_json::to_writer(out, m),
        Concrete::ModelChange(m) => serde_json::to_writer(out, m),
        Concrete::Compaction(m) => serde_json::to_writer(out, m),
    })
}

#[inline(never)]
fn pass_encode_tagged(data: &Data, r: Range<usize>, out: &mut Vec<u8>) -> usize {
    encode_lines(&data.tagged[r], out, |value, out| {
        serde_json::to_writer(out, value)
    })
}

#[inline(never)]
fn pass_encode_typetag(data: &Data, r: Range<usize>, out: &mut Vec<u8>) -> usize {
    encode_lines(&data.typetag[r], out, |value, out| {
        serde_json::to_writer(out, value)
    })
}

#[inline(never)]
fn pass_unknown_ours(data: &Data, r: Range<usize>) {
    kept_unknown_in(data, &data.unknown, r);
}

#[inline(never)]
fn kept_unknown_in(data: &Data, lines: &[String], r: Range<usize>) {
    for line in &lines[r] {
        let _ = black_box(decode_line(
            black_box(line),
            data.registry,
            DecodeMode::Lenient,
        ));
    }
}

#[inline(never)]
fn pass_unknown_copy(data: &Data, r: Range<usize>) {
    copied_unknown_in(&data.unknown, r);
}

#[inline(never)]
fn pass_unknown_long_ours(data: &Data, r: Range<usize>) {
    kept_unknown_in(data, &data.unknown_long, r);
}

#[inline(never)]
fn pass_unknown_long_copy(data: &Data, r: Range<usize>) {
    copied_unknown_in(&data.unknown_long, r);
}

#[inline(never)]
fn copied_unknown_in(lines: &[String], r: Range<usize>) {
    for line in &lines[r] {
        black_box(black_box(line.as_str()).to_owned());
    }
}

// ---------------------------------------------------------------------------
// Criterion's report, then the ratios.

fn criterion_benches(c: &mut Criterion, data: &Data) {
    let mut out = Vec::with_capacity(2 * FLUSH_AT);
    let all = 0..data.agent.len();

    let mut group = c.benchmark_group("decode");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(data.bytes(&data.role_first)));
    for (version, lines) in [
        ("role-first", &data.role_first),
        ("role-last", &data.role_last),
    ] {
        group.bench_function(format!("agentmsg/{version}"), |b| {
            b.iter(|| pass_decode_ours(data, lines, all.clone()))
        });
        group.bench_function(format!("limit/{version}"), |b| {
            b.iter(|| pass_decode_limit(data, lines, all.clone()))
        });
        group.bench_function(format!("tagged-enum/{version}"), |b| {
            b.iter(|| pass_decode_tagged(lines, all.clone()))
        });
        group.bench_function(format!("typetag/{version}"), |b| {
            b.iter(|| pass_decode_typetag(lines, all.clone()))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("encode");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(data.bytes(&data.role_first)));
    group.bench_function("agentmsg", |b| {
        b.iter(|| pass_encode_ours(data, all.clone(), &mut out))
    });
    group.bench_function("limit", |b| {
        b.iter(|| pass_encode_limit(data, all.clone(), &mut out))
    });
    group.bench_function("tagged-enum", |b| {
        b.iter(|| pass_encode_tagged(data, all.clone(), &mut out))
    });
    group.bench_function("typetag", |b| {
        b.iter(|| pass_encode_typetag(data, all.clone(), &mut out))
    });
    group.finish();

    let unknown = 0..data.unknown.len();
    let mut group = c.benchmark_group("unknown");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(data.bytes(&data.unknown)));
    group.bench_function("agentmsg-kept", |b| {
        b.iter(|| pass_unknown_ours(data, unknown.clone()))
    });
    group.bench_function("copy", |b| {
        b.iter(|| pass_unknown_copy(data, unknown.clone()))
    });
    group.finish();
}

fn time(f: &mut dyn FnMut()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Lines per chunk in the interleaved measurement.
const CHUNK: usize = 500;

/// One comparison, measured two ways.
///
/// - `interleaved`: each round walks the transcript in chunks of [`CHUNK`]
///   lines and runs both sides on every chunk back to back (alternating which
///   goes first), so a change of the machine's speed hits both sides alike; the
///   ratio of a round is the sum of one side's times over the other's, and the
///   median of [`RATIO_RUNS`] rounds is reported. This is the number the targets
///   are judged by.
/// - `fastest`: the fastest of [`RATIO_RUNS`] whole passes of each side, as a
///   cross-check (noise only ever adds time, but a whole pass is exposed to
///   slow phases of the machine that the chunks average out).
struct Ratio {
    interleaved: f64,
    fastest: f64,
    ours: Duration,
    baseline: Duration,
}

fn ratio(
    len: usize,
    ours: &mut dyn FnMut(Range<usize>),
    baseline: &mut dyn FnMut(Range<usize>),
) -> Ratio {
    let mut rounds = Vec::with_capacity(RATIO_RUNS);
    for round in 0..RATIO_RUNS {
        let (mut a, mut b) = (Duration::ZERO, Duration::ZERO);
        for (i, start) in (0..len).step_by(CHUNK).enumerate() {
            let r = start..(start + CHUNK).min(len);
            if (round + i) % 2 == 0 {
                a += time(&mut || ours(r.clone()));
                b += time(&mut || baseline(r.clone()));
            } else {
                b += time(&mut || baseline(r.clone()));
                a += time(&mut || ours(r.clone()));
            }
        }
        rounds.push(a.as_secs_f64() / b.as_secs_f64());
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for run in 0..RATIO_RUNS {
        if run % 2 == 0 {
            a.push(time(&mut || ours(0..len)));
            b.push(time(&mut || baseline(0..len)));
        } else {
            b.push(time(&mut || baseline(0..len)));
            a.push(time(&mut || ours(0..len)));
        }
    }
    let (ours, baseline) = (
        a.into_iter().min().unwrap_or_default(),
        b.into_iter().min().unwrap_or_default(),
    );
    Ratio {
        interleaved: median(rounds),
        fastest: ours.as_secs_f64() / baseline.as_secs_f64(),
        ours,
        baseline,
    }
}

/// Whether the ratio row `name` is measured: all of them, or those whose name
/// starts with `AGENTMSG_BENCH_RATIOS` (e.g. `decode/role-first`), to compare two
/// builds quickly.
fn wanted(name: &str) -> bool {
    std::env::var("AGENTMSG_BENCH_RATIOS").map_or(true, |prefix| name.starts_with(&prefix))
}

fn print_ratios(data: &Data) {
    let mut out = Vec::with_capacity(2 * FLUSH_AT);
    let mut out2 = Vec::with_capacity(2 * FLUSH_AT);
    let len = data.agent.len();
    println!();
    println!(
        "Ratios to the limit over {len} lines: median of {RATIO_RUNS} interleaved rounds \
         ({CHUNK}-line chunks), then the fastest of {RATIO_RUNS} whole passes:"
    );
    let mut rows: Vec<(String, Ratio, &str)> = Vec::new();
    for (version, lines, target) in [
        ("role-first", &data.role_first, "<= 1.05x"),
        ("role-last", &data.role_last, "<= 1.3x"),
    ] {
        type Decode = fn(&Data, &[String], Range<usize>);
        let decoders: [(String, Decode, &str); 4] = [
            (format!("decode/{version}"), pass_decode_ours, target),
            (
                format!("decode/{version} serde-generic"),
                |_, lines, r| pass_decode_generic(lines, r),
                "<= 1.3x",
            ),
            (
                format!("decode/{version} tagged-enum"),
                |_, lines, r| pass_decode_tagged(lines, r),
                "baseline",
            ),
            (
                format!("decode/{version} typetag"),
                |_, lines, r| pass_decode_typetag(lines, r),
                "baseline",
            ),
        ];
        for (name, decode, target) in decoders {
            if wanted(&name) {
                let r = ratio(len, &mut |r| decode(data, lines, r), &mut |r| {
                    pass_decode_limit(data, lines, r)
                });
                rows.push((name, r, target));
            }
        }
    }
    // The acceptance check's form: an app's own struct holding the message.
    for (version, lines) in [
        ("role-first", &data.record_first),
        ("role-last", &data.record_last),
    ] {
        let name = format!("decode/{version} serde-generic in an app's struct");
        if wanted(&name) {
            let r = ratio(len, &mut |r| pass_record_generic(lines, r), &mut |r| {
                pass_record_limit(data, lines, r)
            });
            rows.push((name, r, "<= 1.3x"));
        }
    }
    let bare = &data.bare_first;
    let name = "decode/role-first without id/turnId";
    if wanted(name) {
        let r = ratio(len, &mut |r| pass_decode_ours(data, bare, r), &mut |r| {
            pass_decode_limit(data, bare, r)
        });
        rows.push((name.to_owned(), r, "what keeping them costs"));
    }
    type Encode = fn(&Data, Range<usize>, &mut Vec<u8>) -> usize;
    let encoders: [(&str, Encode, &str); 4] = [
        ("encode", pass_encode_ours, "<= 1.05x"),
        (
            "encode without id/turnId",
            pass_encode_bare,
            "what the limit writes",
        ),
        ("encode tagged-enum", pass_encode_tagged, "baseline"),
        ("encode typetag", pass_encode_typetag, "baseline"),
    ];
    for (name, encode, target) in encoders {
        if !wanted(name) {
            continue;
        }
        let r = ratio(
            len,
            &mut |r| {
                let _ = encode(data, r, &mut out);
            },
            &mut |r| {
                let _ = pass_encode_limit(data, r, &mut out2);
            },
        );
        rows.push((name.to_owned(), r, target));
    }
    type Unknown = fn(&Data, Range<usize>);
    let unknowns: [(&str, usize, Unknown, Unknown); 2] = [
        (
            "unknown-kept/copy",
            data.unknown.len(),
            pass_unknown_ours,
            pass_unknown_copy,
        ),
        (
            "unknown-kept/copy, 2 kB lines",
            data.unknown_long.len(),
            pass_unknown_long_ours,
            pass_unknown_long_copy,
        ),
    ];
    for (name, len, kept, copied) in unknowns {
        if wanted(name) {
            let r = ratio(len, &mut |r| kept(data, r), &mut |r| copied(data, r));
            rows.push((name.to_owned(), r, "cost of a copy"));
        }
    }
    for (name, r, target) in rows {
        println!(
            "ratio {name}: {:.2}x  (fastest pass {:.2}x: {:.1} ms vs {:.1} ms; target {target})",
            r.interleaved,
            r.fastest,
            r.ours.as_secs_f64() * 1e3,
            r.baseline.as_secs_f64() * 1e3,
        );
    }
    let ours = pass_encode_ours(data, 0..len, &mut out);
    let limit = pass_encode_limit(data, 0..len, &mut out);
    println!(
        "encoded bytes: agentmsg {ours} (role, id, turnId on every line), limit {limit} (bare values)"
    );
}

/// `AGENTMSG_BENCH_PROFILE=<variant>`: run only that pass, for a profiler
/// (`valgrind --tool=callgrind`).
fn profile(data: &Data, variant: &str) {
    let mut out = Vec::new();
    let all = 0..data.agent.len();
    match variant {
        "decode-first" => pass_decode_ours(data, &data.role_first, all),
        "decode-bare" => pass_decode_ours(data, &data.bare_first, all),
        "limit-bare" => pass_decode_limit(data, &data.bare_first, all),
        "decode-last" => pass_decode_ours(data, &data.role_last, all),
        "generic-first" => pass_decode_generic(&data.role_first, all),
        "generic-last" => pass_decode_generic(&data.role_last, all),
        "record-last" => pass_record_generic(&data.record_last, all),
        "record-limit-last" => pass_record_limit(data, &data.record_last, all),
        "limit-first" => pass_decode_limit(data, &data.role_first, all),
        "limit-last" => pass_decode_limit(data, &data.role_last, all),
        "encode" => {
            let _ = pass_encode_ours(data, all, &mut out);
        }
        "encode-limit" => {
            let _ = pass_encode_limit(data, all, &mut out);
        }
        "unknown" => pass_unknown_ours(data, 0..data.unknown.len()),
        "unknown-copy" => pass_unknown_copy(data, 0..data.unknown.len()),
        "unknown-long" => pass_unknown_long_ours(data, 0..data.unknown_long.len()),
        "unknown-long-copy" => pass_unknown_long_copy(data, 0..data.unknown_long.len()),
        other => eprintln!("unknown variant {other}"),
    }
}

fn main() {
    let data = Data::new();
    if let Ok(variant) = std::env::var("AGENTMSG_BENCH_PROFILE") {
        profile(&data, &variant);
        return;
    }
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    criterion_benches(&mut criterion, &data);
    criterion.final_summary();
    // `cargo test --benches` runs each benchmark once; the ratios need `cargo bench`.
    if bench_mode() {
        print_ratios(&data);
    }
}
