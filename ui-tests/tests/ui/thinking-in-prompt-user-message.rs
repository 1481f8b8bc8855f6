use agentmsg::ThinkingContent;
use agentmsg::project::PromptMessage;

fn main() {
    let _ = PromptMessage::user([ThinkingContent::new("secret")]);
}
