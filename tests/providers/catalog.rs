//! The model catalog: every entry dated and sourced, dated ids found, and the
//! decoders pricing what they decode.

use agentmsg::providers::{anthropic, gemini, openai_chat, Catalog};

#[test]
fn the_builtin_catalog_covers_the_four_providers_with_dated_sourced_prices() {
    let catalog = Catalog::builtin();
    assert!(catalog.models.len() >= 15);
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    ] {
        assert!(catalog.models.iter().any(|m| m.api == api), "{api}");
    }
    for model in &catalog.models {
        let date = model.price_date.as_bytes();
        assert!(
            date.len() == 10 && date[4] == b'-' && date[7] == b'-',
            "{}: {}",
            model.id,
            model.price_date
        );
        assert!(model.source.starts_with("https://"), "{}", model.id);
        assert!(
            model.prices.input > 0.0 && model.prices.output >= model.prices.input,
            "{}",
            model.id
        );
        assert!(model.context_window > model.max_output, "{}", model.id);
        let ids = catalog.models.iter().filter(|m| m.id == model.id).count();
        assert_eq!(ids, 1, "{} twice", model.id);
    }
}

#[test]
fn dated_and_routed_ids_find_their_model_and_others_none() {
    let catalog = Catalog::builtin();
    let id = |name: &str| catalog.model(name).map(|m| m.id.as_str());
    assert_eq!(id("claude-sonnet-4-5-20250929"), Some("claude-sonnet-4-5"));
    assert_eq!(id("gpt-4o-2024-08-06"), Some("gpt-4o"));
    assert_eq!(id("gpt-5-mini-2025-08-07"), Some("gpt-5-mini"));
    assert_eq!(id("openai/gpt-4.1"), Some("gpt-4.1"));
    assert_eq!(id("gpt-5"), Some("gpt-5"));
    assert_eq!(
        id("gpt-5-codex"),
        None,
        "a suffix that is not a date is another model"
    );
    assert_eq!(id("llama-3.3-70b"), None);
}

#[test]
fn decoders_fill_the_cost_when_the_model_is_known() {
    let message = anthropic::decode_response(
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
            "content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn",
            "usage":{"input_tokens":1000000,"output_tokens":200000,"cache_read_input_tokens":100000,
                     "cache_creation_input_tokens":10000}}"#,
    )
    .unwrap();
    let cost = message.usage.cost.expect("priced");
    assert!((cost.input - 3.0).abs() < 1e-9, "{cost:?}");
    assert!((cost.output - 3.0).abs() < 1e-9, "{cost:?}");
    assert!((cost.cache_read - 0.03).abs() < 1e-9, "{cost:?}");
    assert!((cost.cache_write - 0.0375).abs() < 1e-9, "{cost:?}");
    assert!((cost.total - 6.0675).abs() < 1e-9, "{cost:?}");

    let message = openai_chat::decode_response(
        r#"{"id":"c","model":"gpt-4.1-2025-04-14","created":1,"choices":[{"index":0,
            "message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":2000000,"completion_tokens":1000000,"total_tokens":3000000}}"#,
    )
    .unwrap();
    let cost = message.usage.cost.expect("priced");
    assert!((cost.total - (4.0 + 8.0)).abs() < 1e-9, "{cost:?}");

    let unknown = gemini::decode_response(
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"STOP"}],
            "usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1,"totalTokenCount":6},
            "modelVersion":"some-future-model"}"#,
    )
    .unwrap();
    assert_eq!(unknown.usage.cost, None, "an unknown model is not priced");
}

#[test]
fn a_json_file_overrides_and_extends_the_catalog() {
    let catalog = Catalog::builtin()
        .extended(
            r#"{"models":[{"id":"gpt-4.1","provider":"openai","api":"openai-completions",
                "contextWindow":1047576,"maxOutput":32768,"reasoning":false,"images":true,
                "prices":{"input":1.0,"output":4.0,"cacheRead":0.25,"cacheWrite":0.0},
                "priceDate":"2026-01-01","source":"https://example.com/negotiated"}]}"#,
        )
        .unwrap();
    assert_eq!(catalog.models.len(), Catalog::builtin().models.len());
    assert_eq!(catalog.model("gpt-4.1").unwrap().prices.input, 1.0);
    let mut message = agentmsg::AssistantMessage {
        model: "gpt-4.1".into(),
        usage: agentmsg::Usage::new(1_000_000, 0),
        ..Default::default()
    };
    assert!(catalog.fill_cost(&mut message));
    assert_eq!(message.usage.cost.unwrap().total, 1.0);
    assert!(
        !catalog.fill_cost(&mut message),
        "a cost is never overwritten"
    );
    let error = Catalog::builtin()
        .extended("{\"models\": [{\"id\": 1}]}")
        .unwrap_err();
    assert!(error.to_string().contains("line 1"), "{error}");
}

#[test]
fn a_context_past_the_catalog_window_is_reported_by_every_encoder_and_still_sent() {
    use agentmsg::providers::{anthropic, gemini, openai_chat, openai_responses, Request};
    use agentmsg::{ChangeKind, Message};
    // About 150,000 tokens (four characters a token) after a short question:
    // past gpt-4o's window of 128,000, within Claude's 200,000.
    let long = "word ".repeat(120_000);
    let messages = vec![Message::user("hi"), Message::user(long)];
    let over = |report: &agentmsg::Report| {
        report
            .iter()
            .filter(|c| c.kind == ChangeKind::OverContextWindow)
            .map(|c| (c.index, c.detail.clone()))
            .collect::<Vec<_>>()
    };
    let encoded =
        openai_chat::encode_request(&Request::new("gpt-4o-2024-08-06", messages.clone())).unwrap();
    let found = over(&encoded.report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, 1);
    assert!(
        found[0]
            .1
            .contains("128000-token window of `gpt-4o-2024-08-06`"),
        "{found:?}"
    );
    assert!(found[0].1.contains("about 150001 tokens"), "{found:?}");
    // The body is sent as it is: the report warns, nothing is cut.
    assert_eq!(encoded.body["messages"].as_array().unwrap().len(), 2);
    // Claude's window holds it; a model the catalog does not know has no window.
    let claude = anthropic::encode_request(
        &Request::new("claude-sonnet-4-5", messages.clone()).with_max_tokens(1000),
    )
    .unwrap();
    assert!(over(&claude.report).is_empty());
    let unknown =
        openai_responses::encode_request(&Request::new("my-local-model", messages.clone()))
            .unwrap();
    assert!(over(&unknown.report).is_empty());
    let gemini = gemini::encode_request(&Request::new("gemini-2.5-pro", messages)).unwrap();
    assert!(over(&gemini.report).is_empty());
}
