use agentmsg::{AssistantMessage, AudioContent};

fn main() {
    let clip = AudioContent {
        data: "SUQz".to_owned(),
        mime_type: "audio/mpeg".to_owned(),
    };
    let _ = AssistantMessage::new([clip]);
}
