//! The model catalog: every entry dated and sourced, dated ids found, and the
//! decoders pricing what they decode.

use agentmsg::providers::{anthropic, gemini, openai_chat, Catalog};

#[test]
fn the_builtin_list_covers_the_four_apis_with_generated_limits() {
    let catalog = Catalog::builtin();
    assert!(catalog.models.len() >= 100, "{}", catalog.models.len());
    // Where the list came from, and when: the script that regenerates it.
    let source = catalog.source.as_deref().unwrap();
    assert!(source.starts_with("npm:@mariozechner/pi-ai@"), "{source}");
    assert_eq!(catalog.date.as_deref().map(str::len), Some(10));
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    ] {
        assert!(catalog.models.iter().any(|m| m.api == api), "{api}");
    }
    for model in &catalog.models {
        assert!(model.context_window > 0, "{}", model.id);
        assert!(model.max_output > 0, "{}", model.id);
        assert!(
            model.prices.is_none(),
            "{}: prices come from the database",
            model.id
        );
        let ids = catalog.models.iter().filter(|m| m.id == model.id).count();
        assert_eq!(ids, 1, "{} twice", model.id);
    }
    // Spot checks against the providers' published limits.
    let limits = |id: &str| {
        catalog
            .model(id)
            .map(|m| (m.context_window, m.max_output, m.reasoning, m.images))
    };
    assert_eq!(
        limits("claude-sonnet-4-5"),
        Some((200_000, 64_000, true, true))
    );
    assert_eq!(limits("gpt-4.1"), Some((1_047_576, 32_768, false, true)));
    assert_eq!(limits("gemini-2.5-pro").map(|l| l.0), Some(1_048_576));
}

#[test]
fn a_model_is_built_in_code_and_added() {
    use agentmsg::message::ModelPricing;
    use agentmsg::providers::ModelInfo;
    let model = ModelInfo::new("acme-1", "acme", "openai-completions")
        .with_limits(32_000, 4_096)
        .with_reasoning(true)
        .with_images(false)
        .with_note("no long-prompt tier");
    assert_eq!(
        serde_json::to_value(&model).unwrap(),
        serde_json::json!({"id": "acme-1", "provider": "acme", "api": "openai-completions",
            "contextWindow": 32000, "maxOutput": 4096, "reasoning": true, "images": false,
            "note": "no long-prompt tier"})
    );
    let catalog = Catalog::builtin().clone().with_model(model.clone());
    assert_eq!(catalog.models.len(), Catalog::builtin().models.len() + 1);
    assert_eq!(catalog.model("acme-1"), Some(&model));
    // Unpriced until a price is given; then that price is used.
    let mut reply = agentmsg::AssistantMessage {
        model: "acme-1".into(),
        provider: "acme".into(),
        usage: agentmsg::Usage::new(1_000_000, 1_000_000),
        ..Default::default()
    };
    assert_eq!(catalog.cost_of(&reply), None);
    let priced = catalog.with_model(model.with_prices(
        ModelPricing::new(1.0, 2.0, 0.0, 0.0),
        "2026-01-01",
        "https://acme.example/pricing",
    ));
    assert!(priced.fill_cost(&mut reply));
    assert_eq!(reply.usage.cost.unwrap().total, 3.0);
    // A model of the same id replaces the one there.
    let replaced = priced.with_model(ModelInfo::new("acme-1", "acme", "openai-responses"));
    assert_eq!(replaced.model("acme-1").unwrap().api, "openai-responses");
    assert_eq!(replaced.models.len(), Catalog::builtin().models.len() + 1);
}

#[test]
fn dated_and_routed_ids_find_their_model_and_others_none() {
    let catalog = Catalog::builtin();
    let id = |name: &str| catalog.model(name).map(|m| m.id.as_str());
    // A snapshot the list names is found as itself; one it does not name
    // finds its alias.
    assert_eq!(id("gpt-4o-2024-08-06"), Some("gpt-4o-2024-08-06"));
    assert_eq!(id("gpt-4o-2099-01-01"), Some("gpt-4o"));
    assert_eq!(id("claude-opus-4-7-20990101"), Some("claude-opus-4-7"));
    assert_eq!(id("gpt-5-mini-2025-08-07"), Some("gpt-5-mini"));
    assert_eq!(id("openai/gpt-4.1"), Some("gpt-4.1"));
    assert_eq!(id("gpt-5"), Some("gpt-5"));
    assert_eq!(
        id("gpt-5-turbo"),
        None,
        "a suffix that is not a date is another model"
    );
    assert_eq!(id("llama-3.3-70b"), None);
}

/// A reply of `model` at `timestamp`, with this usage (input without the cache).
fn reply(
    provider: &str,
    model: &str,
    timestamp: u64,
    usage: agentmsg::Usage,
) -> agentmsg::AssistantMessage {
    agentmsg::AssistantMessage {
        provider: provider.into(),
        model: model.into(),
        timestamp,
        usage,
        ..Default::default()
    }
}

#[cfg(feature = "prices")]
#[test]
fn decoders_price_a_known_model_from_the_database() {
    let message = anthropic::decode_response(
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
            "content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn",
            "usage":{"input_tokens":100000,"output_tokens":20000,"cache_read_input_tokens":10000,
                     "cache_creation_input_tokens":1000}}"#,
    )
    .unwrap();
    // $3 / $15 / $0.30 / $3.75 per million tokens.
    let cost = message.usage.cost.expect("priced");
    assert!((cost.input - 0.3).abs() < 1e-9, "{cost:?}");
    assert!((cost.output - 0.3).abs() < 1e-9, "{cost:?}");
    assert!((cost.cache_read - 0.003).abs() < 1e-9, "{cost:?}");
    assert!((cost.cache_write - 0.00375).abs() < 1e-9, "{cost:?}");
    assert!((cost.total - 0.60675).abs() < 1e-9, "{cost:?}");

    let message = openai_chat::decode_response(
        r#"{"id":"c","model":"gpt-4.1-2025-04-14","created":1,"choices":[{"index":0,
            "message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":2000000,"completion_tokens":1000000,"total_tokens":3000000}}"#,
    )
    .unwrap();
    let cost = message.usage.cost.expect("priced");
    assert!((cost.total - (4.0 + 8.0)).abs() < 1e-9, "{cost:?}");

    // The library's own recorded stream's model, missing from the old list.
    let usage = agentmsg::Usage::new(1_000_000, 0);
    let cost = Catalog::builtin().cost_of(&reply(
        "anthropic",
        "claude-sonnet-4-20250514",
        1_750_000_000_000,
        usage,
    ));
    assert!((cost.expect("priced").total - 3.0).abs() < 1e-9, "{cost:?}");
}

#[cfg(feature = "prices")]
#[test]
fn a_reply_is_priced_at_the_rates_of_its_own_date() {
    // Claude Opus 4.6 charged $10 per million input tokens past 200,000
    // until 2026-03-13 and $5 flat from then: the database keeps both.
    let at = |ms: u64| {
        Catalog::builtin()
            .cost_of(&reply(
                "anthropic",
                "claude-opus-4-6",
                ms,
                agentmsg::Usage::new(300_000, 0),
            ))
            .map(|c| c.total)
    };
    let february_2026 = 1_769_904_000_000;
    let april_2026 = 1_775_001_600_000;
    assert_eq!(
        at(february_2026).map(|t| (t * 1e6).round() / 1e6),
        Some(3.0)
    );
    assert_eq!(at(april_2026).map(|t| (t * 1e6).round() / 1e6), Some(1.5));
}

#[test]
fn an_unknown_model_costs_unknown_not_zero() {
    let unknown = gemini::decode_response(
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"STOP"}],
            "usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1,"totalTokenCount":6},
            "modelVersion":"some-future-model"}"#,
    )
    .unwrap();
    assert_eq!(unknown.usage.cost, None, "an unknown model is not priced");
    let summary = [agentmsg::AgentMessage::from(agentmsg::Message::Assistant(
        unknown,
    ))];
    let summary = agentmsg::transcript::MessageQuery::summarize(summary.iter());
    assert_eq!(summary.total_cost(), None);
    assert_eq!(summary.unpriced, 1);
    let text = summary.to_string();
    assert!(
        text.contains("cost: unknown (1 reply without a price: some-future-model)"),
        "{text}"
    );
    assert!(!text.contains("$0.0"), "{text}");
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
    assert_eq!(catalog.model("gpt-4.1").unwrap().prices.unwrap().input, 1.0);
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
    use agentmsg::project::ChangeKind;
    use agentmsg::providers::{anthropic, gemini, openai_chat, openai_responses, Request};
    use agentmsg::Message;
    // About 150,000 tokens (four characters a token) after a short question:
    // past gpt-4o's window of 128,000, within Claude's 200,000.
    let long = "word ".repeat(120_000);
    let messages = vec![Message::user("hi"), Message::user(long)];
    let over = |report: &agentmsg::project::Report| {
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

/// A reply's one-hour cache writes (`cache_creation.ephemeral_1h_input_tokens`)
/// are kept by the decoder and priced at the one-hour rate (twice the input
/// rate for Claude), the rest of the writes at the five-minute rate.
#[cfg(feature = "prices")]
#[test]
fn one_hour_cache_writes_are_priced_at_their_rate() {
    let message = anthropic::decode_response(
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
            "content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn",
            "usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":30000,
                     "cache_creation":{"ephemeral_5m_input_tokens":20000,"ephemeral_1h_input_tokens":10000}}}"#,
    )
    .unwrap();
    assert_eq!(message.usage.cache_write, 30_000);
    assert_eq!(message.usage.cache_write_1h, 10_000);
    // $3.75 per million five-minute writes, $6 per million one-hour writes
    // (below the 200k-token tier).
    let cost = message.usage.cost.expect("priced");
    assert!((cost.cache_write - (0.075 + 0.06)).abs() < 1e-9, "{cost:?}");
    assert!((cost.total - 0.135).abs() < 1e-9, "{cost:?}");
    assert!(cost.input.abs() < 1e-9, "{cost:?}");
}
