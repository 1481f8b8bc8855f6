use agentmsg::{AssistantMessage, ImageContent};

fn main() {
    let image = ImageContent::from_url("https://example.com/cat.png");
    let _ = AssistantMessage::new([image]);
}
