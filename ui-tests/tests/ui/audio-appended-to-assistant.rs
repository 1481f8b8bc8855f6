use agentmsg::AudioContent;
use agentmsg::project::{LastAssistant, PromptEditor};

fn main() {
    let mut editor = PromptEditor::new(Vec::new());
    let clip = AudioContent {
        data: "SUQz".to_owned(),
        mime_type: "audio/mpeg".to_owned(),
    };
    let _ = editor.append_to(LastAssistant, [clip]);
}
