//! The HTTP client against the least a streamed reply can cost: the same
//! bytes fetched with reqwest from the same loopback server and fed to the
//! stream reader by hand. A synthetic Anthropic reply of 2 MB of text (2,000
//! deltas of 1 kB) in 16 kB chunks; the client adds its request encoding,
//! headers, retries' bookkeeping and the `Stream` of events.
//!
//! After criterion's report the bench prints the median ratio of interleaved
//! runs: `ratio http/client-stream vs reqwest-bytes+reader: 1.0Nx` (goal:
//! within 1.05x).
//!
//! Run: `benches/bench.sh --bench http --features http`.

#[path = "../tests/http/server.rs"]
#[allow(dead_code)]
mod server;
#[path = "../tests/http/synthetic.rs"]
mod synthetic;

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentmsg::http::{ApiKey, Client, Endpoint, Retry, StreamItem};
use agentmsg::providers::{Api, Request, StreamReader};
use agentmsg::Message;
use criterion::{Criterion, Throughput};
use futures_util::StreamExt;

const RATIO_RUNS: usize = 15;

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let deltas = if bench { 2_000 } else { 50 };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(server::Server::start(vec![server::Canned::sse(
        synthetic::anthropic_reply(deltas),
    )]));
    let url = server.url();
    let client = Client::builder(
        Endpoint::for_api(Api::Anthropic)
            .with_base_url(&url)
            .with_key(ApiKey::new("sk-bench")),
    )
    .retry(Retry::none())
    .build()
    .unwrap();
    let request = Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]);
    let raw = reqwest::Client::new();
    let messages_url = format!("{url}/v1/messages");

    let via_client = || {
        runtime.block_on(async {
            let mut stream = client.stream(&request).await.unwrap();
            let mut events = 0usize;
            while let Some(item) = stream.next().await {
                match item.unwrap() {
                    StreamItem::Event(event) => {
                        events += 1;
                        black_box(event);
                    }
                    StreamItem::Reply(reply) => {
                        black_box(reply);
                    }
                    _ => {}
                }
            }
            assert!(events > deltas);
        })
    };
    let via_reqwest = || {
        runtime.block_on(async {
            let mut response = raw
                .post(&messages_url)
                .header("x-api-key", "sk-bench")
                .header("anthropic-version", "2023-06-01")
                .header("content-type", "application/json")
                .body(r#"{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Hi"}]}"#)
                .send()
                .await
                .unwrap();
            let mut reader = StreamReader::new(Api::Anthropic);
            let mut events = 0usize;
            while let Some(chunk) = response.chunk().await.unwrap() {
                for event in reader.feed(&chunk) {
                    events += 1;
                    black_box(event.unwrap());
                }
            }
            for event in reader.end() {
                black_box(event.unwrap());
            }
            black_box(reader.finish().unwrap());
            assert!(events > deltas);
        })
    };

    let mut c = Criterion::default().configure_from_args();
    {
        let mut group = c.benchmark_group("http");
        group.throughput(Throughput::Bytes((deltas * 1020) as u64));
        group.sample_size(20);
        group.measurement_time(Duration::from_secs(5));
        group.bench_function("reqwest-bytes+reader", |b| b.iter(via_reqwest));
        group.bench_function("client-stream", |b| b.iter(via_client));
        group.finish();
    }
    c.final_summary();

    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        f();
        start.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..RATIO_RUNS)
        .map(|i| {
            // Alternate which side runs first.
            if i % 2 == 0 {
                let a = time(&via_client);
                a / time(&via_reqwest)
            } else {
                let b = time(&via_reqwest);
                time(&via_client) / b
            }
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "ratio http/client-stream vs reqwest-bytes+reader: {:.3}x",
        ratios[RATIO_RUNS / 2]
    );
}
