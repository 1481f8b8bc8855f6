//! Provider parameters (seed, top_k, penalties, service tier) where each API
//! has them, and the two ways to set any other field: `Request::extra_body`
//! and `ClientBuilder::on_payload`; checked on the bodies a loopback server
//! received.

use agentmsg::http::{ApiKey, Client, Endpoint, Retry};
use agentmsg::providers::{Api, Request};
use agentmsg::Message;
use serde_json::{json, Value};

use crate::server::{Canned, Server};
use crate::whole_reply;

/// The body `api` received for a request with every parameter set, and the
/// options the client reported as not taken.
async fn sent(api: Api) -> (Value, Vec<&'static str>) {
    let server = Server::start(vec![Canned::body(200, whole_reply(api, "ok"))]).await;
    let client = Client::builder(
        Endpoint::for_api(api)
            .with_base_url(&server.url())
            .with_key(ApiKey::new("k")),
    )
    .retry(Retry::none())
    .on_payload(|body| {
        body["hooked"] = json!(true);
        if let Some(object) = body.as_object_mut() {
            object.remove("removed_by_hook");
        }
    })
    .build()
    .unwrap();
    let mut request = Request::new(crate::model(api), vec![Message::user("Hi")])
        .with_extra_body("gateway_tag", "t1")
        .with_extra_body("removed_by_hook", 1);
    request.seed = Some(7);
    request.top_k = Some(40);
    request.presence_penalty = Some(0.5);
    request.frequency_penalty = Some(0.25);
    request.service_tier = Some("auto".into());
    let reply = client.complete(&request).await.unwrap();
    let dropped = reply.options.iter().map(|o| o.option).collect();
    (server.received()[0].body.clone(), dropped)
}

#[tokio::test]
async fn each_api_takes_the_parameters_it_has_and_reports_the_others() {
    let (chat, dropped) = sent(Api::OpenaiChat).await;
    assert_eq!(
        (
            &chat["seed"],
            &chat["presence_penalty"],
            &chat["frequency_penalty"],
            &chat["service_tier"]
        ),
        (&json!(7), &json!(0.5), &json!(0.25), &json!("auto"))
    );
    assert!(chat.get("top_k").is_none());
    assert_eq!(dropped, ["top_k"]);

    let (responses, mut dropped) = sent(Api::OpenaiResponses).await;
    assert_eq!(responses["service_tier"], "auto");
    for field in ["seed", "top_k", "presence_penalty", "frequency_penalty"] {
        assert!(responses.get(field).is_none(), "{field}");
    }
    dropped.sort_unstable();
    assert_eq!(
        dropped,
        ["frequency_penalty", "presence_penalty", "seed", "top_k"]
    );

    let (anthropic, mut dropped) = sent(Api::Anthropic).await;
    assert_eq!(
        (&anthropic["top_k"], &anthropic["service_tier"]),
        (&json!(40), &json!("auto"))
    );
    dropped.sort_unstable();
    assert_eq!(dropped, ["frequency_penalty", "presence_penalty", "seed"]);

    let (gemini, dropped) = sent(Api::Gemini).await;
    let config = &gemini["generationConfig"];
    assert_eq!(
        (
            &config["seed"],
            &config["topK"],
            &config["presencePenalty"],
            &config["frequencyPenalty"]
        ),
        (&json!(7), &json!(40), &json!(0.5), &json!(0.25))
    );
    assert_eq!(dropped, ["service_tier"]);

    // The extra field and the hook reach every API's body.
    for body in [&chat, &responses, &anthropic, &gemini] {
        assert_eq!(body["gateway_tag"], "t1", "{body}");
        assert_eq!(body["hooked"], true, "{body}");
        assert!(body.get("removed_by_hook").is_none(), "{body}");
    }
}

#[test]
fn extra_body_merges_objects_replaces_values_and_removes_nulls() {
    let mut request = Request::new("gemini-2.5-flash", vec![Message::user("Hi")])
        .with_extra_body("generationConfig", json!({"responseLogprobs": true}))
        .with_extra_body("contents", json!("replaced"));
    request.temperature = Some(0.5);
    let body = Api::Gemini.encode(&request).unwrap().body;
    assert_eq!(body["generationConfig"]["temperature"], 0.5);
    assert_eq!(body["generationConfig"]["responseLogprobs"], true);
    assert_eq!(body["contents"], "replaced");
    let request = request.with_extra_body("generationConfig", Value::Null);
    let body = Api::Gemini.encode(&request).unwrap().body;
    assert!(body.get("generationConfig").is_none());
}
