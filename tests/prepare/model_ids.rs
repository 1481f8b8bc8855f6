//! A reply names the snapshot that answered; the next request names the alias.
//! Reasoning goes back to the alias it was asked for, and to nothing else.

use agentmsg::project::ChangeKind;
use agentmsg::{
    prepare, AssistantContent, AssistantMessage, Message, StopReason, Target, ThinkingContent,
};

fn reply(api: &str, provider: &str, model: &str) -> Vec<Message> {
    vec![
        Message::user("hi"),
        AssistantMessage::new([
            AssistantContent::from(ThinkingContent::new("hmm").with_signature("sig")),
            AssistantContent::from(agentmsg::TextContent::new("hello")),
        ])
        .with_origin(api, provider, model)
        .with_stop_reason(StopReason::Stop)
        .into(),
        Message::user("again"),
    ]
}

fn dropped(messages: &[Message], target: &Target) -> usize {
    prepare(messages, target)
        .report
        .count(ChangeKind::DroppedThinking)
}

#[test]
fn a_dated_snapshot_is_the_alias_it_was_asked_for() {
    let anthropic = Target::new("anthropic", "anthropic-messages", "claude-sonnet-4-5");
    let stored = reply(
        "anthropic-messages",
        "anthropic",
        "claude-sonnet-4-5-20250929",
    );
    assert_eq!(dropped(&stored, &anthropic), 0);

    let openai = Target::new("openai", "openai-responses", "gpt-4o");
    let stored = reply("openai-responses", "openai", "gpt-4o-2024-08-06");
    assert_eq!(dropped(&stored, &openai), 0);

    let gemini = Target::new("google", "google-generative-ai", "gemini-2.5-pro");
    let stored = reply("google-generative-ai", "google", "models/gemini-2.5-pro");
    assert_eq!(dropped(&stored, &gemini), 0);
}

#[test]
fn another_model_of_the_same_family_is_not_the_same_model() {
    let target = Target::new("anthropic", "anthropic-messages", "claude-sonnet-4-5");
    for other in [
        "claude-sonnet-4",
        "claude-sonnet-4-5-mini",
        "claude-opus-4-5-20251101",
        "claude-sonnet-4-5-2025092",
    ] {
        let stored = reply("anthropic-messages", "anthropic", other);
        assert_eq!(dropped(&stored, &target), 1, "{other}");
    }
    // Same model, other provider or api: still foreign.
    let stored = reply(
        "anthropic-messages",
        "bedrock",
        "claude-sonnet-4-5-20250929",
    );
    assert_eq!(dropped(&stored, &target), 1);
}

#[cfg(feature = "anthropic")]
#[test]
fn another_provider_of_the_api_gets_its_own_reasoning_back() {
    use agentmsg::providers::{anthropic, Request};
    // A reply written by the same model, served through Bedrock's Anthropic API.
    let stored = reply("anthropic-messages", "bedrock", "claude-sonnet-4-5");
    let request = Request::new("claude-sonnet-4-5", stored);
    let as_anthropic = anthropic::encode_request(&request).unwrap();
    assert_eq!(as_anthropic.report.count(ChangeKind::DroppedThinking), 1);
    let as_bedrock = anthropic::encode_request(&request.with_provider("bedrock")).unwrap();
    assert_eq!(as_bedrock.report.count(ChangeKind::DroppedThinking), 0);
    assert_eq!(
        as_bedrock.body["messages"][1]["content"][0]["type"],
        "thinking"
    );
}

#[test]
fn claude_is_one_model_on_anthropic_bedrock_and_vertex() {
    // Anthropic: a thinking signature made on the Claude API, Bedrock or
    // Vertex AI verifies on the others; each spells the model its own way.
    let anthropic = ("anthropic-messages", "anthropic");
    let bedrock = ("bedrock-converse-stream", "amazon-bedrock");
    let same = [
        (anthropic, "claude-sonnet-4-5"),
        (anthropic, "claude-sonnet-4-5-20250929"),
        (anthropic, "claude-sonnet-4-5@20250929"),
        (bedrock, "anthropic.claude-sonnet-4-5-20250929-v1:0"),
        (bedrock, "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
        (bedrock, "global.anthropic.claude-sonnet-4-5-20250929-v1:0"),
        (
            bedrock,
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ),
    ];
    for ((api, provider), model) in same {
        let stored = reply(api, provider, model);
        for ((target_api, target_provider), target_model) in same {
            let target = Target::new(target_provider, target_api, target_model);
            assert_eq!(
                dropped(&stored, &target),
                0,
                "{provider}/{model} to {target_provider}/{target_model}"
            );
        }
        // Not another Claude, on any platform, nor another provider's model.
        for ((target_api, target_provider), target_model) in [
            (anthropic, "claude-opus-4-1"),
            (anthropic, "claude-sonnet-4@20250514"),
            (bedrock, "us.anthropic.claude-opus-4-1-20250805-v1:0"),
            (bedrock, "anthropic.claude-sonnet-4-20250514-v1:0"),
            (bedrock, "meta.llama3-70b-instruct-v1:0"),
            // An application inference profile names no model.
            (
                bedrock,
                "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123",
            ),
            (("google-generative-ai", "google"), "gemini-2.5-pro"),
            (("anthropic-messages", "bedrock"), "claude-sonnet-4-5"),
        ] {
            let target = Target::new(target_provider, target_api, target_model);
            assert_eq!(
                dropped(&stored, &target),
                1,
                "{provider}/{model} to {target_provider}/{target_model}"
            );
        }
    }
}
