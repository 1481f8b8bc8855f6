use agentmsg::{PromptMessage, ThinkingContent};

fn main() {
    let _ = PromptMessage::user([ThinkingContent::new("secret")]);
}
