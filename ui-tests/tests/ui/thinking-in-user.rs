use agentmsg::{ThinkingContent, UserMessage};

fn main() {
    let _ = UserMessage::new([ThinkingContent::new("let me think")]);
}
