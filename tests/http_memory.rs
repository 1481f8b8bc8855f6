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

#[tokio::test(flavor = "current_thread")]
async fn a_ten_megabyte_reply_is_never_held_whole() {
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
