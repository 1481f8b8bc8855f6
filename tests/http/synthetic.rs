//! A synthetic streamed reply of any size, for the bench and the memory test.

use bytes::Bytes;

/// An Anthropic event stream of `deltas` text deltas of 1 kB, in 16 kB chunks.
pub fn anthropic_reply(deltas: usize) -> Vec<Bytes> {
    let mut sse = String::new();
    sse.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n");
    sse.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    let text = "lorem ipsum ".repeat(85);
    for _ in 0..deltas {
        sse.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"");
        sse.push_str(&text);
        sse.push_str("\"}}\n\n");
    }
    sse.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    );
    sse.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5000}}\n\n");
    sse.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    sse.into_bytes()
        .chunks(16 * 1024)
        .map(Bytes::copy_from_slice)
        .collect()
}
