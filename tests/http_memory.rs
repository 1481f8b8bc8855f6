//! A streamed reply holds memory for the message and the event being read,
//! never the whole body: the client's peak over a 10 MB reply is that of the
//! stream reader fed the same bytes by hand, which keeps no body.

#[path = "http/server.rs"]
#[allow(dead_code)]
mod server;
#[path = "http/synthetic.rs"]
mod synthetic;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use agentmsg::http::{ApiKey, Client, Endpoint, Retry, StreamItem};
use agentmsg::providers::{Api, Request, StreamReader};
use agentmsg::Message;
use futures_util::StreamExt;

/// Counts live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; the
// counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                let grown = new_size - layout.size();
                let live = LIVE.fetch_add(grown, Ordering::Relaxed) + grown;
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The peak of live bytes while `f` runs, above what was live before it.
async fn peak_of<F: std::future::Future<Output = ()>>(f: F) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    f.await;
    PEAK.load(Ordering::Relaxed) - before
}

/// The tests one at a time: the counters are the process's.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn block_on<F: std::future::Future<Output = ()>>(f: F) {
    let _serial = serial();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f);
}

#[test]
fn a_ten_megabyte_reply_is_never_held_whole() {
    block_on(a_ten_megabyte_reply());
}

async fn a_ten_megabyte_reply() {
    const DELTAS: usize = 10_000;
    let chunks = synthetic::anthropic_reply(DELTAS);
    let body: usize = chunks.iter().map(|c| c.len()).sum();
    let server = server::Server::start(vec![server::Canned::sse(chunks)]).await;
    let url = server.url();
    let client = Client::builder(
        Endpoint::for_api(Api::Anthropic)
            .with_base_url(&url)
            .with_key(ApiKey::new("sk-memory")),
    )
    .retry(Retry::none())
    .build()
    .unwrap();
    let request = Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]);

    // The stream reader fed the bytes as they come: the message, no body.
    let raw = reqwest::Client::new();
    let by_hand = peak_of(async {
        let mut response = raw
            .post(format!("{url}/v1/messages"))
            .body("{}")
            .send()
            .await
            .unwrap();
        let mut reader = StreamReader::new(Api::Anthropic);
        while let Some(chunk) = response.chunk().await.unwrap() {
            for event in reader.feed(&chunk) {
                event.unwrap();
            }
        }
        let (message, _) = reader.finish().unwrap();
        assert!(message.text_content().len() > 10_000_000);
    })
    .await;

    let through_client = peak_of(async {
        let mut stream = client.stream(&request).await.unwrap();
        let mut text = 0;
        while let Some(item) = stream.next().await {
            if let StreamItem::Reply(reply) = item.unwrap() {
                text = reply.message.text_content().len();
            }
        }
        assert!(text > 10_000_000);
    })
    .await;
    eprintln!(
        "body {body} bytes; peak by hand {by_hand} bytes, through the client {through_client} bytes"
    );
    // Holding the body too would add its 10 MB.
    assert!(
        through_client < by_hand + body / 4,
        "the client's peak {through_client} is past the reader's {by_hand} by more than a quarter of the body ({body})"
    );
}

#[test]
fn a_gigabyte_error_body_is_read_only_to_its_cap_on_each_try() {
    block_on(a_gigabyte_error_body());
}

async fn a_gigabyte_error_body() {
    const MIB: usize = 1 << 20;
    // 1 GiB of body: one 1 MiB buffer sent 1024 times (the server holds it once).
    let block = bytes::Bytes::from(vec![b'x'; MIB]);
    let canned = server::Canned {
        status: 500,
        headers: vec![("content-type".into(), "text/plain".into())],
        chunks: vec![block; 1024],
        end: server::End::Complete,
    };
    let server = server::Server::start(vec![canned]).await;
    let client = Client::builder(
        Endpoint::for_api(Api::OpenaiChat)
            .with_base_url(&server.url())
            .with_key(ApiKey::new("sk-memory")),
    )
    .retry(Retry::with_max_retries(2).with_backoff(
        std::time::Duration::from_millis(1),
        std::time::Duration::from_millis(2),
    ))
    .build()
    .unwrap();
    let request = Request::new("gpt-4.1", vec![Message::user("Hi")]);
    let mut error = None;
    let peak = peak_of(async {
        error = Some(client.complete(&request).await.unwrap_err());
    })
    .await;
    let error = error.unwrap();
    eprintln!("a 1 GiB error body, 3 tries: peak {peak} bytes");
    let api = error.api_error().expect("an API error");
    assert_eq!((api.status, api.retries), (500, 2));
    assert_eq!(server.received().len(), 3);
    let text = error.to_string();
    assert!(text.contains("over 64 KiB"), "{text}");
    assert!(text.len() < 4000, "the message holds the body's start only");
    // The cap (64 KiB) and the transport's buffers, never the body.
    assert!(peak < 4 * MIB, "peak {peak} bytes for a capped error body");
}
