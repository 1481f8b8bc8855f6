use agentmsg::{ToolCall, UserMessage};

fn main() {
    let call = ToolCall::new("call_1", "read", serde_json::json!({"path": "a.rs"}));
    let _ = UserMessage::new(vec![call]);
}
