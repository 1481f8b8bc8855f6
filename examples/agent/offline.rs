//! The model: Anthropic when `ANTHROPIC_API_KEY` is set, else a scripted
//! model that calls both tools, then answers. The scripted model goes
//! through the real Anthropic encoder and stream decoder.

use std::sync::Arc;

use agentmsg::agent::{Model, ScriptedModel};
use agentmsg::{AssistantMessage, ToolCall};
use serde_json::json;

pub fn model_or_scripted() -> Arc<dyn Model> {
    if let Ok(client) = agentmsg::http::Client::anthropic() {
        return Arc::new(client);
    }
    println!("[no ANTHROPIC_API_KEY: a scripted model answers]");
    Arc::new(ScriptedModel::new([
        AssistantMessage::new([
            ToolCall::new("t1", "add", json!({"a": 2, "b": 40})),
            ToolCall::new("t2", "length", json!({"text": "the quick brown fox"})),
        ]),
        AssistantMessage::new([r#"{"sum": 42, "length": 19}"#]),
    ]))
}
