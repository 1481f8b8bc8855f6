//! Bytes allocated to turn a 1,000-message session context into request
//! bodies for two providers, counted by a global allocator (one test in this
//! binary, so no other test's allocations are counted).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use agentmsg::providers::{anthropic, openai_chat, Request};
use agentmsg::{to_llm, AssistantMessage, Message, Session, StopReason, ToolCall};

struct Counting;

thread_local! {
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call goes to the system allocator unchanged; the counter is a
// thread-local `Cell` with a const initializer, so counting never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.with(|b| b.set(b.get() + layout.size() as u64));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.with(|b| b.set(b.get() + new_size as u64));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocated<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = BYTES.with(Cell::get);
    let out = f();
    (out, BYTES.with(Cell::get) - before)
}

/// 1,000 messages: a user question, then turns of a tool call and its result,
/// and a closing answer.
fn session() -> Session {
    let mut session = Session::new();
    session
        .append(Message::user("Count the words of every file under src/.").into())
        .unwrap();
    for i in 0..333 {
        let call = ToolCall::new(
            format!("toolu_{i:04}"),
            "read",
            serde_json::json!({"path": format!("src/file_{i}.rs")}),
        );
        let reply = AssistantMessage::new([call])
            .with_origin("anthropic", "anthropic-messages", "claude-sonnet-4-5")
            .with_stop_reason(StopReason::ToolUse);
        session.append(Message::Assistant(reply).into()).unwrap();
        let text = format!("fn f{i}() {{ println!(\"{}\"); }}", "word ".repeat(20));
        let result = Message::tool_result(format!("toolu_{i:04}"), "read", text);
        session.append(result.into()).unwrap();
        if session.entries().len() >= 999 {
            break;
        }
    }
    while session.entries().len() < 1000 {
        session.append(Message::assistant("Done.").into()).unwrap();
    }
    session
}

/// Bytes allocated by each step: making the first request, encoding it for
/// Anthropic, making the second request, encoding it for OpenAI Chat.
fn steps(context: &agentmsg::session::SessionContext<'_>, borrow: bool) -> [u64; 4] {
    if borrow {
        let (first, a) = allocated(|| Request::new("claude-sonnet-4-5", context));
        let (_, b) = allocated(|| anthropic::encode_request(&first).unwrap());
        let (second, c) = allocated(|| first.for_model("gpt-4.1"));
        let (_, d) = allocated(|| openai_chat::encode_request(&second).unwrap());
        [a, b, c, d]
    } else {
        // What a program had to write before requests borrowed.
        let (first, a) = allocated(|| {
            let messages: Vec<Message> = to_llm(&context.messages)
                .into_iter()
                .map(std::borrow::Cow::into_owned)
                .collect();
            Request::new("claude-sonnet-4-5", messages)
        });
        let (_, b) = allocated(|| anthropic::encode_request(&first).unwrap());
        let (second, c) =
            allocated(|| Request::new("gpt-4.1", first.messages.clone().into_owned()));
        let (_, d) = allocated(|| openai_chat::encode_request(&second).unwrap());
        [a, b, c, d]
    }
}

#[test]
fn encoding_a_context_for_two_providers_copies_no_message() {
    let session = session();
    let context = session.context(None).unwrap();
    assert_eq!(context.messages.len(), 1000);
    let message_bytes = (1000 * std::mem::size_of::<Message>()) as u64;
    let reference_bytes = (1000 * std::mem::size_of::<std::borrow::Cow<'_, Message>>()) as u64;

    let owned = steps(&context, false);
    let borrowed = steps(&context, true);
    for (name, s) in [("owned", owned), ("borrowed", borrowed)] {
        println!(
            "{name}: first request {} B, anthropic encode {} B, second request {} B, \
             openai encode {} B; total {} B",
            s[0],
            s[1],
            s[2],
            s[3],
            s.iter().sum::<u64>()
        );
    }
    // The borrowed first request holds only the projection's list of
    // references; the second request copies no message, only its model id.
    assert!(borrowed[0] <= reference_bytes + 64, "{borrowed:?}");
    assert!(borrowed[2] < 64, "{borrowed:?}");
    // Encoding is the same work either way.
    assert!(borrowed[1] <= owned[1], "{borrowed:?} {owned:?}");
    assert!(borrowed[3] <= owned[3], "{borrowed:?} {owned:?}");
    assert!(owned[2] > message_bytes, "{owned:?}");
}
