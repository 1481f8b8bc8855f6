//! Typed tools: the schema from the type, the arguments decoded with the
//! field named when they do not fit.

use agentmsg::agent::{decode_arguments, tool_spec};
use agentmsg::ToolArguments;
use serde_json::json;

use crate::{Act, Add, AddArgs};

#[test]
fn the_spec_comes_from_the_type() {
    let spec = tool_spec(&Add::default());
    assert_eq!(spec.name, "add");
    assert_eq!(spec.description, "Adds two numbers.");
    assert_eq!(
        spec.parameters,
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "number", "format": "double", "description": "The first number."},
                "b": {"type": "number", "format": "double", "description": "The second number."},
            },
            "required": ["a", "b"],
        })
    );
    let act = tool_spec(&Act);
    assert_eq!(
        act.parameters["properties"]["what"]["description"],
        "`fail`, `panic`, `sleep`, `stop` or `json`."
    );
}

#[test]
fn arguments_that_do_not_fit_name_the_field() {
    let args: AddArgs =
        decode_arguments("add", &ToolArguments::from(json!({"a": 1, "b": 2.5}))).unwrap();
    assert_eq!(args.a + args.b, 3.5);
    let error = decode_arguments::<AddArgs>("add", &ToolArguments::from(json!({"a": [], "b": 1})))
        .unwrap_err();
    assert_eq!(error.path, "a");
    assert_eq!(
        error.to_string(),
        "invalid arguments for `add` at `a`: invalid type: sequence, expected f64"
    );
}

#[tokio::test]
async fn a_function_tool_is_described_by_its_argument_type() {
    use agentmsg::agent::{Agent, ScriptedModel};
    use agentmsg::{Message, Session};
    let model = ScriptedModel::new([
        crate::calls(vec![crate::call("c1", "plus", json!({"a": 1, "b": 2}))]),
        crate::text("3"),
    ]);
    let agent = Agent::new(model.clone(), crate::MODEL)
        .tool_fn("plus", |args: AddArgs| async move { Ok(args.a + args.b) });
    let mut session = Session::new();
    agent
        .prompt(&mut session, Message::user("1+2"), |_| {})
        .await
        .unwrap();
    let requests = model.requests();
    let tool = &requests[0]["tools"][0];
    assert_eq!(tool["name"], "plus");
    assert_eq!(tool["description"], "Adds two numbers.");
    assert_eq!(
        tool["input_schema"],
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "number", "format": "double", "description": "The first number."},
                "b": {"type": "number", "format": "double", "description": "The second number."},
            },
            "required": ["a", "b"],
        })
    );
    assert_eq!(crate::tool_results(&session), ["3"]);
}

mod structured {
    use agentmsg::agent::output::{self, OutputError};
    use agentmsg::agent::{Agent, ScriptedModel};
    use agentmsg::providers::{Api, Request};
    use agentmsg::{AssistantMessage, Message, Session};
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    /// A verdict on a pull request.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Verdict {
        /// Whether to merge.
        merge: bool,
        /// The reasons, most important first.
        reasons: Vec<Reason>,
        /// Who should look next.
        reviewer: Option<String>,
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Reason {
        text: String,
        weight: u8,
    }

    #[test]
    fn each_api_is_asked_for_the_type() {
        let format = output::response_format::<Verdict>();
        assert_eq!(format.name, "Verdict");
        assert_eq!(
            format.description.as_deref(),
            Some("A verdict on a pull request.")
        );
        let schema = &format.schema;
        assert_eq!(schema["required"], json!(["merge", "reasons", "reviewer"]));
        assert_eq!(schema["additionalProperties"], false);
        let reason = &schema["properties"]["reasons"]["items"];
        assert_eq!(reason["additionalProperties"], false);
        assert_eq!(reason["required"], json!(["text", "weight"]));
        assert!(reason["properties"]["weight"].get("format").is_none());
        let request = Request::new("gpt-4.1", vec![Message::user("Review")])
            .with_response_format(format.clone());
        let chat = Api::OpenaiChat.encode(&request).unwrap().body;
        assert_eq!(chat["response_format"]["json_schema"]["schema"], *schema);
        assert_eq!(chat["response_format"]["json_schema"]["strict"], true);
        let request = request.for_model("claude-sonnet-4-5");
        let anthropic = Api::Anthropic.encode(&request).unwrap().body;
        assert_eq!(anthropic["output_config"]["format"]["schema"], *schema);
    }

    #[tokio::test]
    async fn the_reply_decodes_into_the_type() {
        let model = ScriptedModel::new([AssistantMessage::new([
            r#"{"merge": true, "reasons": [{"text": "tests pass", "weight": 3}], "reviewer": null}"#,
        ])]);
        let agent = Agent::new(model.clone(), crate::MODEL).output::<Verdict>();
        let outcome = agent
            .prompt(&mut Session::new(), Message::user("Review #42"), |_| {})
            .await
            .unwrap();
        let verdict: Verdict = outcome.output().unwrap();
        assert_eq!(
            verdict,
            Verdict {
                merge: true,
                reasons: vec![Reason {
                    text: "tests pass".into(),
                    weight: 3
                }],
                reviewer: None
            }
        );
        assert_eq!(
            model.requests()[0]["output_config"]["format"]["type"],
            "json_schema"
        );
    }

    #[test]
    fn a_reply_that_does_not_fit_is_a_typed_error() {
        let reply = AssistantMessage::new([
            r#"{"merge": true, "reasons": [{"text": "ok", "weight": 300}], "reviewer": null}"#,
        ]);
        match output::decode::<Verdict>(&reply).unwrap_err() {
            OutputError::DoesNotFit { path, message, .. } => {
                assert_eq!(path, "reasons[0].weight");
                assert!(message.contains("300"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let fenced = AssistantMessage::new([
            "```json\n{\"merge\": false, \"reasons\": [], \"reviewer\": \"ana\"}\n```",
        ]);
        assert_eq!(
            output::decode::<Verdict>(&fenced)
                .unwrap()
                .reviewer
                .as_deref(),
            Some("ana")
        );
        let prose = AssistantMessage::new(["I think we should merge."]);
        assert!(matches!(
            output::decode::<Verdict>(&prose),
            Err(OutputError::NotJson { .. })
        ));
        let empty = AssistantMessage::new(Vec::<String>::new());
        assert!(matches!(
            output::decode::<Verdict>(&empty),
            Err(OutputError::NoText { .. })
        ));
    }
}

mod media {
    use agentmsg::agent::{Agent, ScriptedModel, Tool, ToolError, ToolOutput};
    use agentmsg::{ImageContent, Message, Session, TextContent};
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    /// Takes a screenshot.
    #[derive(Deserialize, JsonSchema)]
    struct Shot {}

    struct Screenshot;

    impl Tool for Screenshot {
        const NAME: &'static str = "screenshot";
        type Args = Shot;
        async fn call(&self, _: Shot) -> Result<ToolOutput, ToolError> {
            let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
            Ok(ToolOutput::image(ImageContent::from_bytes(png)?)
                .with(TextContent::new("the login page")))
        }
    }

    #[tokio::test]
    async fn a_tool_result_carries_an_image() {
        let model = ScriptedModel::new([
            crate::calls(vec![crate::call("c1", "screenshot", json!({}))]),
            crate::text("I see the login page."),
        ]);
        let agent = Agent::new(model.clone(), crate::MODEL).tool(Screenshot);
        agent
            .prompt(&mut Session::new(), Message::user("look"), |_| {})
            .await
            .unwrap();
        let result = &model.requests()[1]["messages"][2]["content"][0];
        assert_eq!(result["type"], "tool_result");
        assert_eq!(result["content"][0]["type"], "image");
        assert_eq!(result["content"][0]["source"]["media_type"], "image/png");
        assert_eq!(result["content"][1]["text"], "the login page");
    }
}

/// A tool whose crate depends on agentmsg alone: the derive through the
/// re-exported schemars.
mod reexported {
    use agentmsg::agent::schemars;

    /// Greets someone.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[schemars(crate = "agentmsg::agent::schemars")]
    struct Greet {
        /// Who to greet.
        name: String,
    }

    #[test]
    fn the_reexported_derive_makes_the_schema() {
        let schema = agentmsg::agent::schema_for::<Greet>();
        assert_eq!(schema["description"], "Greets someone.");
        assert_eq!(schema["properties"]["name"]["description"], "Who to greet.");
        let greet: Greet = agentmsg::agent::decode_arguments(
            "greet",
            &agentmsg::ToolArguments::from(serde_json::json!({"name": "Ada"})),
        )
        .unwrap();
        assert_eq!(greet.name, "Ada");
    }
}
