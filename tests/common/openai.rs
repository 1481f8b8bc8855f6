//! Messages and random transcripts shared by the two OpenAI codec tests.

use agentmsg::message::MediaSource;
use agentmsg::providers::{Request, ToolSpec};
use agentmsg::{
    AssistantContent, AssistantMessage, AudioContent, DocumentContent, ImageContent, Message,
    RedactedThinkingContent, StopReason, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
    UserContent, UserMessage,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// A 1x1 PNG, base64.
pub use super::PNG_1X1 as PNG;

pub fn png() -> ImageContent {
    ImageContent {
        source: MediaSource::Base64 {
            data: PNG.into(),
            mime_type: "image/png".into(),
        },
    }
}

pub fn user(blocks: Vec<UserContent>) -> Message {
    Message::User(UserMessage {
        content: blocks,
        timestamp: 1,
    })
}

pub fn assistant(
    blocks: Vec<AssistantContent>,
    api: &str,
    model: &str,
    stop: StopReason,
) -> Message {
    Message::Assistant(AssistantMessage {
        content: blocks,
        api: api.into(),
        provider: "openai".into(),
        model: model.into(),
        stop_reason: stop,
        timestamp: 2,
        ..AssistantMessage::default()
    })
}

pub fn call(id: &str, name: &str, args: Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall::new(id, name, args))
}

pub fn result(id: &str, name: &str, text: &str) -> Message {
    Message::tool_result(id, name, text)
}

pub fn text(t: &str) -> AssistantContent {
    AssistantContent::Text(TextContent::new(t))
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "read",
            "Read a file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        ToolSpec::new("now", "The time", json!({})),
    ]
}

/// Transcripts covering every block type and the repairs prepare makes, for
/// `api`/`model`; `thinking_here` is that model's own reasoning turn (with its
/// results), in the form each api replays.
pub fn corpus(
    api: &'static str,
    model: &'static str,
    thinking_here: Vec<Message>,
) -> Vec<(&'static str, Request<'static>)> {
    let thinking_foreign = assistant(
        vec![
            AssistantContent::Thinking(
                ThinkingContent::new("Claude thinks.").with_signature("EqQB"),
            ),
            text("Hi from Claude."),
        ],
        "anthropic-messages",
        "claude-opus-4-5",
        StopReason::Stop,
    );
    let long_id = "toolu_01".to_owned() + &"x".repeat(60);
    let mut image_result =
        ToolResultMessage::new("call_img", "screenshot", [TextContent::new("here")]);
    image_result.content.push(png().into());
    let mut error_result = ToolResultMessage::new("call_err", "read", [TextContent::new("ENOENT")]);
    error_result.is_error = true;
    vec![
        (
            "text",
            Request::new(model, vec![Message::user("hello")]).with_system("Be terse."),
        ),
        (
            "system-in-transcript",
            Request::new(
                model,
                vec![Message::system("You are a cat."), Message::user("hi")],
            ),
        ),
        (
            "every-user-block",
            Request::new(
                model,
                vec![user(vec![
                    UserContent::Text(TextContent::new("Look:")),
                    UserContent::Image(png()),
                    UserContent::Image(ImageContent {
                        source: MediaSource::Url("https://example.com/cat.jpg".into()),
                    }),
                    UserContent::Audio(AudioContent {
                        data: "UklGRg==".into(),
                        mime_type: "audio/wav".into(),
                    }),
                    UserContent::Audio(AudioContent {
                        data: "SUQz".into(),
                        mime_type: "audio/mpeg".into(),
                    }),
                    UserContent::Audio(AudioContent {
                        data: "T2dnUw==".into(),
                        mime_type: "audio/ogg".into(),
                    }),
                    UserContent::Document(DocumentContent {
                        source: MediaSource::Base64 {
                            data: "JVBERi0xLjcK".into(),
                            mime_type: "application/pdf".into(),
                        },
                        title: Some("spec.pdf".into()),
                    }),
                    UserContent::Document(DocumentContent {
                        source: MediaSource::Base64 {
                            data: "aGVsbG8=".into(),
                            mime_type: "text/plain".into(),
                        },
                        title: None,
                    }),
                    UserContent::Document(DocumentContent {
                        source: MediaSource::Url("https://example.com/a.pdf".into()),
                        title: None,
                    }),
                    UserContent::Document(DocumentContent {
                        source: MediaSource::Base64 {
                            data: "UEsDBA==".into(),
                            mime_type: "application/zip".into(),
                        },
                        title: None,
                    }),
                ])],
            ),
        ),
        (
            "tool-round-trip",
            Request::new(
                model,
                vec![
                    Message::user("read a.rs"),
                    assistant(
                        vec![
                            text("Reading."),
                            call("call_1", "read", json!({"path": "a.rs"})),
                        ],
                        api,
                        model,
                        StopReason::ToolUse,
                    ),
                    result("call_1", "read", "fn main() {}"),
                    Message::assistant("It is empty."),
                ],
            )
            .with_tools(tools())
            .with_max_tokens(1024),
        ),
        (
            "parallel-tool-calls",
            Request::new(
                model,
                vec![
                    Message::user("read both"),
                    assistant(
                        vec![
                            call("call_a", "read", json!({"path": "a"})),
                            call("call_b", "read", json!({"path": "b"})),
                            call("call_c", "now", json!({})),
                        ],
                        api,
                        model,
                        StopReason::ToolUse,
                    ),
                    result("call_b", "read", "B"),
                    result("call_a", "read", "A"),
                    Message::ToolResult(error_result.clone()),
                ],
            )
            .with_tools(tools()),
        ),
        (
            "tool-result-images",
            Request::new(
                model,
                vec![
                    Message::user("take a screenshot"),
                    assistant(
                        vec![call("call_img", "screenshot", json!({}))],
                        api,
                        model,
                        StopReason::ToolUse,
                    ),
                    Message::ToolResult(image_result),
                ],
            ),
        ),
        (
            "thinking-with-signatures",
            Request::new(
                model,
                [Message::user("q")]
                    .into_iter()
                    .chain(thinking_here)
                    .chain([Message::user("and?"), thinking_foreign, Message::user("ok")])
                    .collect::<Vec<_>>(),
            ),
        ),
        (
            "failed-turns",
            Request::new(
                model,
                vec![
                    Message::user("go"),
                    assistant(
                        vec![
                            text("partial"),
                            call("call_f", "read", json!({"path": "x"})),
                        ],
                        api,
                        model,
                        StopReason::Error,
                    ),
                    result("call_f", "read", "late"),
                    assistant(vec![text("stopped")], api, model, StopReason::Aborted),
                    Message::user("again"),
                ],
            ),
        ),
        (
            "orphaned-calls-and-results",
            Request::new(
                model,
                vec![
                    result("call_ghost", "read", "no call"),
                    Message::user("go"),
                    assistant(
                        vec![call("call_o", "read", json!({"path": "x"}))],
                        api,
                        model,
                        StopReason::ToolUse,
                    ),
                    Message::user("never mind"),
                ],
            ),
        ),
        (
            "ids-too-long",
            Request::new(
                model,
                vec![
                    Message::user("go"),
                    assistant(
                        vec![
                            call(&long_id, "read", json!({"path": "x"})),
                            call("functions.read:0|fc_abc", "read", json!({})),
                        ],
                        "anthropic-messages",
                        "claude-opus-4-5",
                        StopReason::ToolUse,
                    ),
                    result(&long_id, "read", "one"),
                    result("functions.read:0|fc_abc", "read", "two"),
                ],
            ),
        ),
        (
            "empty-and-odd",
            Request::new(
                model,
                vec![
                    user(vec![]),
                    assistant(vec![], api, model, StopReason::Stop),
                    Message::user("unicode ✓ \u{0} \"quotes\""),
                    assistant(
                        vec![call("call_n", "now", Value::Null)],
                        api,
                        model,
                        StopReason::ToolUse,
                    ),
                    result("call_n", "now", ""),
                ],
            ),
        ),
    ]
}

// Random transcripts

pub fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("call_1".to_owned()),
        Just("call_2".to_owned()),
        Just("toolu_".to_owned() + &"y".repeat(70)),
        Just("functions.read:0|fc_9".to_owned()),
        Just(String::new()),
    ]
}

pub fn user_block() -> impl Strategy<Value = UserContent> {
    prop_oneof![
        "[a-z ✓]{0,12}".prop_map(|t| UserContent::Text(TextContent::new(t))),
        Just(UserContent::Image(png())),
        Just(UserContent::Image(ImageContent {
            source: MediaSource::Url("https://example.com/x.png".into())
        })),
        prop_oneof![Just("audio/wav"), Just("audio/mpeg"), Just("audio/ogg")].prop_map(|m| {
            UserContent::Audio(AudioContent {
                data: "AAAA".into(),
                mime_type: m.into(),
            })
        }),
        prop_oneof![
            Just("application/pdf"),
            Just("text/markdown"),
            Just("image/svg+xml")
        ]
        .prop_map(|m| {
            UserContent::Document(DocumentContent {
                source: MediaSource::Base64 {
                    data: "aGk=".into(),
                    mime_type: m.into(),
                },
                title: None,
            })
        }),
    ]
}

pub fn assistant_block() -> impl Strategy<Value = AssistantContent> {
    prop_oneof![
        "[a-z]{0,8}".prop_map(|t| AssistantContent::Text(TextContent::new(t))),
        (any::<bool>(), 0..3u8).prop_map(|(summary, sig)| {
            let text = if summary { "thought" } else { "" };
            let thinking = ThinkingContent::new(text);
            AssistantContent::Thinking(match sig {
                0 => thinking,
                1 => thinking.with_signature("EqQBsig"),
                _ => thinking.with_signature(reasoning_item("rs_p", text)),
            })
        }),
        any::<bool>().prop_map(|r| AssistantContent::RedactedThinking(
            RedactedThinkingContent::new(if r {
                reasoning_item("rs_q", "")
            } else {
                "opaque".to_owned()
            })
        )),
        (id(), "[a-z]{1,6}", any::<Option<bool>>(), any::<bool>()).prop_map(
            |(id, name, arg, fc)| {
                let call = ToolCall::new(id, name, arg.map_or(Value::Null, |a| json!({"a": a})));
                AssistantContent::ToolCall(if fc {
                    call.with_signature("fc_p")
                } else {
                    call
                })
            }
        ),
    ]
}

pub fn reasoning_item(id: &str, summary: &str) -> String {
    let summary: Vec<Value> = if summary.is_empty() {
        vec![]
    } else {
        vec![json!({"type": "summary_text", "text": summary})]
    };
    json!({"type": "reasoning", "id": id, "summary": summary, "encrypted_content": "gAAAAp"})
        .to_string()
}

/// A random message of any role, its assistant messages written by `api`/`model`,
/// another model of the same api, or an Anthropic model.
pub fn message(api: &'static str, model: &'static str) -> impl Strategy<Value = Message> {
    let origin = prop_oneof![
        Just((api, model)),
        Just(("anthropic-messages", "claude-opus-4-5")),
        Just((api, "another-model")),
    ];
    let stop = prop_oneof![
        Just(StopReason::Stop),
        Just(StopReason::ToolUse),
        Just(StopReason::Error),
        Just(StopReason::Aborted),
        Just(StopReason::Length),
    ];
    prop_oneof![
        "[a-z]{0,10}".prop_map(Message::system),
        proptest::collection::vec(user_block(), 0..4).prop_map(user),
        (
            proptest::collection::vec(assistant_block(), 0..5),
            origin,
            stop
        )
            .prop_map(|(blocks, (api, model), stop)| assistant(blocks, api, model, stop)),
        (id(), any::<bool>(), any::<bool>()).prop_map(|(id, image, is_error)| {
            let mut r =
                ToolResultMessage::new(id, "read", [TextContent::new("out")]).with_error(is_error);
            if image {
                r.content.push(png().into());
            }
            Message::ToolResult(r)
        }),
    ]
}

/// Windows of the real pi sessions for `model`: they start and end anywhere, so
/// results lose their calls and calls their results.
pub fn pi_corpus(model: &str) -> Vec<(String, Request<'static>)> {
    let mut out = Vec::new();
    for file in ["before-compaction.jsonl", "large-session.jsonl"] {
        let messages = super::pi_messages(file);
        assert!(
            messages.len() > 100,
            "{file}: only {} messages",
            messages.len()
        );
        let stem = file.trim_end_matches(".jsonl");
        out.push((
            format!("pi-{stem}-all"),
            Request::new(model, messages.clone()).with_tools(tools()),
        ));
        for (n, start) in (0..messages.len()).step_by(97).enumerate() {
            let end = (start + 41).min(messages.len());
            out.push((
                format!("pi-{stem}-window{n}"),
                Request::new(model, messages[start..end].to_vec()),
            ));
        }
    }
    out
}

/// JSON built from the keys and values both OpenAI decoders look at, for the
/// never-panic properties.
pub fn decoder_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (0i64..3).prop_map(Value::from),
        Just(Value::from(i64::MAX)),
        prop_oneof![
            Just("message"),
            Just("reasoning"),
            Just("function_call"),
            Just("stop"),
            Just("tool_calls"),
            Just("response.completed"),
            Just("response.output_text.delta"),
            Just("response.output_item.done"),
            Just("response.function_call_arguments.delta"),
            Just("error"),
            Just("{\"a\":"),
            Just("")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec(
                (
                    prop_oneof![
                        Just("type"),
                        Just("choices"),
                        Just("delta"),
                        Just("message"),
                        Just("content"),
                        Just("tool_calls"),
                        Just("index"),
                        Just("function"),
                        Just("arguments"),
                        Just("output"),
                        Just("output_index"),
                        Just("content_index"),
                        Just("summary_index"),
                        Just("item"),
                        Just("response"),
                        Just("usage"),
                        Just("error"),
                        Just("status"),
                        Just("summary"),
                        Just("finish_reason"),
                        Just("text"),
                        Just("id"),
                        Just("call_id"),
                        Just("name")
                    ],
                    inner
                ),
                0..6,
            )
            .prop_map(|pairs| Value::Object(
                pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

/// The random-transcript property of an OpenAI API: a request of `messages`
/// (with the common tools, `system` and `max_tokens`) encodes to a body that
/// passes the schema and the API's own rules, or fails only when nothing is
/// left to send. A bounded sample of the bodies goes to the SDK check.
pub fn check_random_request(
    checks: &Checks,
    messages: Vec<Message>,
    system: Option<String>,
    max_tokens: Option<u32>,
) -> Result<(), TestCaseError> {
    let mut request = Request::new(checks.model, messages).with_tools(tools());
    request.system = system;
    request.max_tokens = max_tokens;
    let body = match (checks.encode)(&request) {
        Ok(encoded) => encoded.body,
        Err(e) => {
            // Only a transcript with nothing left to send may fail.
            prop_assert!(e.to_string().contains("nothing to send"), "{}", e);
            prop_assert!(request
                .messages
                .iter()
                .all(|m| !matches!(m, Message::User(u) if !u.content.is_empty())));
            return Ok(());
        }
    };
    let mut errors = crate::common::schema_errors(checks.schema, &body);
    errors.extend((checks.rules)(&body, &request));
    prop_assert!(errors.is_empty(), "{:#?}\n{:#}", errors, body);
    // A bounded sample of them for the SDK check.
    let text = serde_json::to_string_pretty(&body).expect("a Value serializes");
    let slot = text
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % 32;
    std::fs::write(
        crate::common::sdk_dir(checks.sdk).join(format!("random-{slot:02}.json")),
        text,
    )
    .expect("write body");
    Ok(())
}

/// One OpenAI API's request checks: its encoder, schema, own rules and SDK
/// folder.
pub struct Checks {
    pub model: &'static str,
    pub encode:
        fn(&Request) -> Result<agentmsg::providers::Encoded, agentmsg::providers::EncodeError>,
    pub schema: &'static str,
    pub rules: fn(&Value, &Request) -> Vec<String>,
    pub sdk: &'static str,
}

impl Checks {
    /// Encodes `request`, checks the body against the schema and the rules
    /// (panicking with every problem, named `name`), writes it for the SDK
    /// check, and returns it.
    pub fn body(&self, name: &str, request: &Request) -> Value {
        let encoded = (self.encode)(request).unwrap_or_else(|e| panic!("{name}: {e}"));
        let body = encoded.body;
        let mut errors = crate::common::schema_errors(self.schema, &body);
        errors.extend((self.rules)(&body, request));
        assert!(errors.is_empty(), "{name}: {errors:#?}\n{body:#}");
        let file = crate::common::sdk_dir(self.sdk).join(format!("{name}.json"));
        std::fs::write(
            &file,
            serde_json::to_string_pretty(&body).expect("serialize"),
        )
        .expect("write body");
        body.into()
    }

    /// Checks every case of `corpus`, then, with the conformance data, every pi
    /// session case: how many, and the data's folder (`None` without it).
    pub fn corpora(
        &self,
        corpus: Vec<(&'static str, Request)>,
    ) -> (usize, Option<std::path::PathBuf>) {
        let mut count = 0;
        for (name, request) in corpus {
            self.body(name, &request);
            count += 1;
        }
        let data = crate::common::conformance_or_skip(Some("the pi-session and recorded cases"));
        if data.is_some() {
            for (name, request) in pi_corpus(self.model) {
                self.body(&name, &request);
                count += 1;
            }
        }
        (count, data)
    }
}
