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
