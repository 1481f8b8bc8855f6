//! Opening a session of 100,000 entries and building one context, against
//! `JsonlReader` reading the same file (the goal: within 1.2x), and `context`
//! at a leaf with a short path in that big session against the same path in a
//! small one (linear in the path, not the file).
//!
//! The headline ratios read files (`Session::open` against a `JsonlReader`
//! over a `BufReader<File>`, the file in the page cache); the others read
//! bytes already in memory (`Session::read` copies them into the session).
//!
//! The transcript is made by a small LCG, so every run sees the same bytes:
//! user prompts, assistant turns with a tool call (some with thinking), tool
//! results, every line with an `id` (UUID) and a `turnId`; the tree form has
//! every line's `parentId` written out, with a branch every 50 entries.
//!
//! Run: `benches/bench.sh --bench session`. After criterion's report it prints the
//! ratios (median of interleaved rounds), e.g. `ratio open+context/linear: 1.10x`.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use agentmsg::{
    AgentMessage, AssistantContent, AssistantMessage, JsonlReader, Message, MessageId, ParentId,
    Session, StopReason, ThinkingContent, ToolCall, ToolResultMessage, TurnId, Usage, UserMessage,
};
use criterion::{Criterion, Throughput};

const ENTRIES: usize = 100_000;
const RATIO_RUNS: usize = 9;

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }
    fn words(&mut self, lo: u64, hi: u64) -> String {
        let n = self.range(lo, hi);
        self.text(n)
    }
    fn text(&mut self, words: u64) -> String {
        const WORDS: &[&str] = &[
            "the", "parser", "reads", "a", "line", "of", "json", "and", "writes", "it", "back",
            "fn", "main", "session", "tree",
        ];
        (0..words)
            .map(|_| WORDS[self.next() as usize % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }
    fn id(&mut self) -> MessageId {
        MessageId::from(format!(
            "{:08x}-{:04x}-7{:03x}-8{:03x}-{:012x}",
            self.next() as u32,
            self.next() as u16,
            self.next() % 0x1000,
            self.next() % 0x1000,
            self.next() << 16 | self.next()
        ))
    }
}

/// The messages of the bench's session, in order.
fn messages(rng: &mut Lcg) -> Vec<AgentMessage> {
    let mut out = Vec::with_capacity(ENTRIES);
    let mut turn = TurnId::from("t0");
    let mut ms = 1_765_000_000_000u64;
    while out.len() < ENTRIES {
        ms += rng.range(100, 5000);
        let message: Message = match out.len() % 3 {
            0 => {
                turn = TurnId::from(format!("t{}", out.len()));
                Message::User(UserMessage::new([rng.words(5, 60)]).with_timestamp(ms))
            }
            1 => {
                let mut content = Vec::new();
                if rng.range(0, 4) == 0 {
                    content.push(AssistantContent::Thinking(ThinkingContent {
                        thinking: rng.text(40),
                        signature: Some("EqQBCkgIARABGAIiQ".repeat(8)),
                    }));
                }
                content.push(AssistantContent::Text(rng.words(5, 40).into()));
                content.push(AssistantContent::ToolCall(ToolCall::new(
                    format!("call_{}", out.len()),
                    "read",
                    serde_json::json!({"path": format!("src/{}.rs", rng.range(0, 100))}),
                )));
                Message::Assistant(
                    AssistantMessage::new(content)
                        .with_origin("anthropic-messages", "anthropic", "claude-sonnet-4-5")
                        .with_stop_reason(StopReason::ToolUse)
                        .with_usage(Usage {
                            input: rng.range(10, 900),
                            output: rng.range(10, 400),
                            ..Usage::default()
                        })
                        .with_timestamp(ms),
                )
            }
            _ => Message::ToolResult(
                ToolResultMessage::new(
                    format!("call_{}", out.len() - 1),
                    "read",
                    [rng.words(20, 200)],
                )
                .with_timestamp(ms),
            ),
        };
        out.push(AgentMessage::from(message).with_turn_id(Some(turn.clone())));
    }
    out
}

/// The file: linear (no `parentId`), or a tree (every `parentId` written, a
/// branch every 50 entries).
fn file(messages: &[AgentMessage], tree: bool, rng: &mut Lcg) -> Vec<u8> {
    let mut out = Vec::with_capacity(messages.len() * 400);
    let mut ids: Vec<MessageId> = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        let id = rng.id();
        let parent = match (tree, i) {
            (false, _) => ParentId::Previous,
            (true, 0) => ParentId::Root,
            (true, i) if i % 50 == 0 => ParentId::Id(ids[i - 2].clone()),
            (true, i) => ParentId::Id(ids[i - 1].clone()),
        };
        message
            .clone()
            .with_id(Some(id.clone()))
            .with_parent_id(parent)
            .write_line(&mut out)
            .unwrap();
        out.push(b'\n');
        ids.push(id);
    }
    out
}

fn read_all(bytes: &[u8]) -> usize {
    JsonlReader::new(bytes).read_all().unwrap().messages.len()
}

fn read_all_file(path: &Path) -> usize {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    JsonlReader::new(file).read_all().unwrap().messages.len()
}

fn open_file_and_context(path: &Path) -> usize {
    let session = Session::open(path).unwrap();
    session.context(None).unwrap().messages.len()
}

fn open_and_context(bytes: &[u8]) -> usize {
    let session = Session::read(bytes).unwrap();
    session.context(None).unwrap().messages.len()
}

fn open_and_into_context(bytes: &[u8]) -> usize {
    Session::read(bytes)
        .unwrap()
        .into_context(None)
        .unwrap()
        .messages
        .len()
}

fn open_only(bytes: &[u8]) -> usize {
    Session::read(bytes).unwrap().entries().len()
}

fn time(f: &mut dyn FnMut()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// The median over rounds of `ours / baseline`, each round running both,
/// alternating which goes first.
fn ratio(ours: &mut dyn FnMut(), baseline: &mut dyn FnMut()) -> f64 {
    let mut rounds = Vec::with_capacity(RATIO_RUNS);
    for round in 0..RATIO_RUNS {
        let (a, b) = if round % 2 == 0 {
            let a = time(ours);
            (a, time(baseline))
        } else {
            let b = time(baseline);
            (time(ours), b)
        };
        rounds.push(a.as_secs_f64() / b.as_secs_f64());
    }
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}

fn main() {
    let mut rng = Lcg(42);
    let messages = messages(&mut rng);
    let linear = file(&messages, false, &mut rng);
    let tree = file(&messages, true, &mut rng);
    // A short path in the big session: the last 100 entries under a new root,
    // and the same 100 entries alone.
    let mut short_big = linear.clone();
    let small_messages = &messages[..100];
    let mut small = Vec::new();
    for (i, message) in small_messages.iter().enumerate() {
        let parent = if i == 0 {
            ParentId::Root
        } else {
            ParentId::Previous
        };
        let id = MessageId::from(format!("short-{i}"));
        message
            .clone()
            .with_id(Some(id.clone()))
            .with_parent_id(parent.clone())
            .write_line(&mut short_big)
            .unwrap();
        short_big.push(b'\n');
        message
            .clone()
            .with_id(Some(id))
            .with_parent_id(parent)
            .write_line(&mut small)
            .unwrap();
        small.push(b'\n');
    }
    // Check before measuring: the same messages, the whole path, the short path.
    assert_eq!(read_all(&linear), ENTRIES);
    assert_eq!(open_and_context(&linear), ENTRIES);
    assert_eq!(open_and_into_context(&linear), ENTRIES);
    assert_eq!(open_and_context(&tree), ENTRIES - (ENTRIES - 1) / 50);
    let dir = tempfile::tempdir().unwrap();
    let linear_path = dir.path().join("linear.jsonl");
    let tree_path = dir.path().join("tree.jsonl");
    std::fs::write(&linear_path, &linear).unwrap();
    std::fs::write(&tree_path, &tree).unwrap();
    assert_eq!(read_all_file(&linear_path), ENTRIES);
    assert_eq!(open_file_and_context(&linear_path), ENTRIES);
    let big_session = Session::read(&short_big).unwrap();
    let small_session = Session::read(&small).unwrap();
    assert_eq!(big_session.context(None).unwrap().messages.len(), 100);
    assert_eq!(small_session.context(None).unwrap().messages.len(), 100);

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    {
        let mut group = criterion.benchmark_group("session");
        group.throughput(Throughput::Bytes(linear.len() as u64));
        group.bench_function("jsonl_reader/file/linear", |b| {
            b.iter(|| read_all_file(black_box(&linear_path)))
        });
        group.bench_function("open+context/file/linear", |b| {
            b.iter(|| open_file_and_context(black_box(&linear_path)))
        });
        group.bench_function("jsonl_reader/linear", |b| {
            b.iter(|| read_all(black_box(&linear)))
        });
        group.bench_function("open+context/linear", |b| {
            b.iter(|| open_and_context(black_box(&linear)))
        });
        group.bench_function("open+into_context/linear", |b| {
            b.iter(|| open_and_into_context(black_box(&linear)))
        });
        group.bench_function("open/linear", |b| b.iter(|| open_only(black_box(&linear))));
        group.bench_function("jsonl_reader/tree", |b| {
            b.iter(|| read_all(black_box(&tree)))
        });
        group.bench_function("open+context/tree", |b| {
            b.iter(|| open_and_context(black_box(&tree)))
        });
        group.finish();
        let mut group = criterion.benchmark_group("context");
        group.bench_function("short-path/big-session", |b| {
            b.iter(|| big_session.context(None).unwrap())
        });
        group.bench_function("short-path/small-session", |b| {
            b.iter(|| small_session.context(None).unwrap())
        });
        group.finish();
    }
    criterion.final_summary();
    if std::env::args().any(|a| a == "--bench") {
        for (name, path) in [("linear", &linear_path), ("tree", &tree_path)] {
            let r = ratio(
                &mut || {
                    black_box(open_file_and_context(path));
                },
                &mut || {
                    black_box(read_all_file(path));
                },
            );
            println!("ratio open+context/file/{name} vs jsonl_reader/file: {r:.2}x");
        }
        // The floor, in one run: what reading the file costs, what the
        // reader costs over the bytes in memory, and what the session costs
        // over the same bytes (`Session::read` copies them into the session,
        // as `Session::open` reads the file into it). Medians of interleaved
        // rounds, in milliseconds.
        let bytes = std::fs::read(&linear_path).unwrap();
        type Case<'a> = (&'a str, &'a mut dyn FnMut(), Vec<f64>);
        let mut floor: [Case<'_>; 4] = [
            (
                "file read into memory (fs::read)",
                &mut || {
                    black_box(std::fs::read(&linear_path).unwrap().len());
                },
                Vec::new(),
            ),
            (
                "reader over that memory (JsonlReader)",
                &mut || {
                    black_box(read_all(&bytes));
                },
                Vec::new(),
            ),
            (
                "session over the same memory (Session::read)",
                &mut || {
                    black_box(open_only(&bytes));
                },
                Vec::new(),
            ),
            (
                "session from the file (Session::open)",
                &mut || {
                    black_box(Session::open(&linear_path).unwrap().entries().len());
                },
                Vec::new(),
            ),
        ];
        for round in 0..RATIO_RUNS {
            let n = floor.len();
            for k in 0..n {
                // Each round starts with the next case, so none is always first.
                let (_, f, times) = &mut floor[(round + k) % n];
                times.push(time(*f).as_secs_f64() * 1e3);
            }
        }
        let median = |times: &mut Vec<f64>| {
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        };
        let medians: Vec<(String, f64)> = floor
            .iter_mut()
            .map(|(name, _, times)| ((*name).to_owned(), median(times)))
            .collect();
        let reader = medians[1].1;
        for (name, ms) in &medians {
            println!(
                "floor {name}: {ms:.1} ms ({:.2}x the reader over memory)",
                ms / reader
            );
        }
        if std::env::var_os("AGENTMSG_BENCH_PHASES").is_some() {
            let r = ratio(
                &mut || {
                    black_box(Session::open(&linear_path).unwrap().entries().len());
                },
                &mut || {
                    black_box(read_all_file(&linear_path));
                },
            );
            println!("phase open/file/linear vs jsonl_reader/file: {r:.2}x");
            let r = ratio(
                &mut || {
                    black_box(std::fs::read(&linear_path).unwrap().len());
                },
                &mut || {
                    black_box(read_all_file(&linear_path));
                },
            );
            println!("phase fs::read vs jsonl_reader/file: {r:.2}x");
            let r = ratio(
                &mut || {
                    let v: Vec<[u8; 616]> = vec![[1u8; 616]; ENTRIES];
                    black_box(v.len());
                },
                &mut || {
                    black_box(read_all_file(&linear_path));
                },
            );
            println!("phase 616-byte x 100k vec vs jsonl_reader/file: {r:.2}x");
        }
        type BytesCase<'a> = (&'a str, fn(&[u8]) -> usize, &'a [u8]);
        let cases: [BytesCase<'_>; 5] = [
            ("open+context/linear", open_and_context, &linear),
            ("open+into_context/linear", open_and_into_context, &linear),
            ("open/linear", open_only, &linear),
            ("open+context/tree", open_and_context, &tree),
            ("open+into_context/tree", open_and_into_context, &tree),
        ];
        for (name, ours, bytes) in cases {
            let r = ratio(
                &mut || {
                    black_box(ours(bytes));
                },
                &mut || {
                    black_box(read_all(bytes));
                },
            );
            println!("ratio {name} vs jsonl_reader: {r:.2}x");
        }
        let r = ratio(
            &mut || {
                black_box(big_session.context(None).unwrap());
            },
            &mut || {
                black_box(small_session.context(None).unwrap());
            },
        );
        println!(
            "ratio context of a 100-entry path, {}-entry session vs 100-entry session: {r:.2}x",
            ENTRIES + 100
        );
    }
}
