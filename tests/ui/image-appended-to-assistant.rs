use agentmsg::{ImageContent, LastAssistant, MediaSource, PromptEditor};

fn main() {
    let mut editor = PromptEditor::new(Vec::new());
    let image = ImageContent {
        source: MediaSource::Url("https://example.com/cat.png".to_owned()),
    };
    let _ = editor.append_to(LastAssistant, [image]);
}
