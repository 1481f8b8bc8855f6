use agentmsg::{AudioContent, ToolResultMessage};

fn main() {
    let clip = AudioContent {
        data: "UklGRiQAAABXQVZF".to_owned(),
        mime_type: "audio/wav".to_owned(),
    };
    let _ = ToolResultMessage::new("call_1", "record", [clip]);
}
