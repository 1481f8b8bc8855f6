//! Typed, persisted, provider-neutral transcripts for LLM agents.
//!
//! An agent keeps a transcript: the messages it exchanges with a model (user,
//! assistant, tool results) and the application's own entries that live beside
//! them (notices, summaries, approvals, UI state). agentmsg gives that transcript
//! one typed shape, one JSON Lines format on disk, and a way to every provider's
//! wire format. The format is a superset of the message JSON of
//! [pi](https://github.com/badlogic/pi-mono), so pi sessions decode as they are.
//!
//! # Messages and content blocks
//!
//! A [`Message`] is one of four roles: [`SystemMessage`], [`UserMessage`],
//! [`AssistantMessage`] and [`ToolResultMessage`]. Each holds the content blocks
//! its role allows, as an enum of its own: [`UserContent`] (text, image, audio,
//! document), [`AssistantContent`] (text, image, thinking, redacted thinking, tool
//! call, a provider's own block),
//! [`ToolResultContent`] (text, image); a system message holds text. Every block
//! is a struct ([`TextContent`], [`ImageContent`], [`AudioContent`],
//! [`DocumentContent`], [`ThinkingContent`], [`RedactedThinkingContent`],
//! [`ToolCall`], [`ProviderBlock`]), and [`Content`] is any of them.
//!
//! ```
//! use agentmsg::{AssistantContent, AssistantMessage, Message, Role, StopReason, ThinkingContent, ToolCall, UserMessage};
//! use serde_json::json;
//!
//! let question = UserMessage::new(["Which files are in src?"]);
//! let reply = AssistantMessage::new([
//!     AssistantContent::from(ThinkingContent::new("I should list the directory.")),
//!     AssistantContent::from(ToolCall::new("call_1", "ls", json!({"path": "src"}))),
//! ])
//! .with_origin("anthropic-messages", "anthropic", "claude-opus-4-5");
//! let result = Message::tool_result("call_1", "ls", "lib.rs\nmain.rs");
//!
//! let transcript: Vec<Message> = vec![question.into(), reply.into(), result];
//! assert_eq!(transcript[1].role(), Role::Assistant);
//! let reply = transcript[1].as_assistant().unwrap();
//! assert_eq!(reply.tool_calls().next().map(|c| c.name.as_str()), Some("ls"));
//! assert_eq!(reply.stop_reason, StopReason::ToolUse);
//! ```
//!
//! # Role rules
//!
//! The constructors take any blocks allowed in their role (and strings, as text).
//! A block that the role does not allow does not compile, and the error names the
//! block and the role:
//!
//! ```compile_fail,E0277
//! use agentmsg::{ThinkingContent, UserMessage};
//!
//! // error: `ThinkingContent` cannot appear in a user message
//! let user = UserMessage::new([ThinkingContent::new("let me think")]);
//! ```
//!
//! ```compile_fail,E0277
//! use agentmsg::{AssistantMessage, DocumentContent};
//!
//! // error: `DocumentContent` cannot appear in an assistant message
//! let reply = AssistantMessage::new([DocumentContent::from_url("https://example.com/a.pdf")]);
//! ```
//!
//! At run time, the same rules hold: converting a [`Content`] into a role's enum
//! is a `TryFrom` whose [`RoleError`](crate::message::RoleError) names both, and decoding a block in the
//! wrong role fails with the same words.
//!
//! ```
//! use agentmsg::{Content, Message, ThinkingContent, UserContent};
//!
//! let block = Content::from(ThinkingContent::new("hmm"));
//! let err = UserContent::try_from(block).unwrap_err();
//! assert_eq!(err.to_string(), "`thinking` blocks cannot appear in user messages");
//!
//! let line = r#"{"role":"user","content":[{"type":"thinking","thinking":"hmm"}]}"#;
//! let err = serde_json::from_str::<Message>(line).unwrap_err();
//! assert!(err.to_string().starts_with("`thinking` blocks cannot appear in user messages"));
//! ```
//!
//! # Media
//!
//! Images, audio and documents are built from bytes, files, base64 or URLs. The
//! MIME type is read from the data itself (PNG, JPEG, GIF, WEBP; MP3, OGG, FLAC,
//! WAV; PDF), and data that is none of these is a [`MediaError`](crate::message::MediaError) showing the bytes
//! it saw.
//!
//! ```
//! use agentmsg::{AudioContent, ImageContent, UserMessage};
//! use agentmsg::message::MediaError;
//!
//! let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
//! let image = ImageContent::from_bytes(png)?;
//! assert_eq!(image.mime_type(), Some("image/png"));
//! let user = UserMessage::with_images("What is this?", [image]);
//! assert_eq!(user.content.len(), 2);
//!
//! let err = AudioContent::from_bytes(png).unwrap_err();
//! assert_eq!(err.to_string(), "expected audio data, but the bytes are PNG image (image/png)");
//! # Ok::<(), MediaError>(())
//! ```
//!
//! # Usage and cost
//!
//! An assistant message carries its [`Usage`]: input, output (reasoning
//! included), cache reads and writes, and the [`Cost`] when known. Usages add up,
//! and [`Usage::estimated_cost`] prices them with a [`ModelPricing`](crate::message::ModelPricing).
//!
//! ```
//! use agentmsg::Usage;
//! use agentmsg::message::ModelPricing;
//!
//! let turns = [Usage::new(1_000, 200), Usage::new(3_000, 400)];
//! let total: Usage = turns.iter().sum();
//! assert_eq!((total.input, total.output), (4_000, 600));
//! let cost = total.estimated_cost(&ModelPricing::new(3.0, 15.0, 0.3, 3.75));
//! assert!((cost.total - 0.021).abs() < 1e-12);
//! assert_eq!(total.cache_hit_rate(), 0.0);
//! ```
//!
//! An error reply tells whether the prompt overflowed the model's context window,
//! whatever the provider's wording: [`AssistantMessage::is_context_overflow`].
//!
//! # The transcript format
//!
//! A transcript is JSON Lines: one message object per line, tagged by `"role"`,
//! with camelCase fields and Unix-millisecond timestamps. Content blocks are tagged
//! by `"type"`. Each line may carry an `"id"` (a UUIDv7 from [`MessageId::new`])
//! and a `"turnId"`, flattened into the same object; [`LlmMessage`] reads and
//! writes them, and a line without them reads as `None`.
//!
//! ```
//! use agentmsg::{LlmMessage, Message, MessageId, TurnId};
//!
//! let lines = r#"{"role":"system","content":[{"type":"text","text":"You are terse."}],"timestamp":1765233665292}
//! {"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1765233665292,"id":"0193a4b2-7c1e-7000-8000-000000000001","turnId":"t1"}
//! {"role":"assistant","content":[{"type":"text","text":"Hello."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":12,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"stop","timestamp":1765233669389}"#;
//!
//! for line in lines.lines() {
//!     let message: LlmMessage = serde_json::from_str(line)?;
//!     // Written back, each line is the same bytes.
//!     assert_eq!(serde_json::to_string(&message)?, line);
//! }
//!
//! let second: LlmMessage = serde_json::from_str(lines.lines().nth(1).unwrap())?;
//! assert_eq!(second.id, Some(MessageId::from("0193a4b2-7c1e-7000-8000-000000000001")));
//! assert_eq!(second.turn_id, Some(TurnId::from("t1")));
//! assert_eq!(second.message, Message::User(agentmsg::UserMessage::new(["hi"]).with_timestamp(1765233665292)));
//!
//! // pi's older forms are read too: a string as content, `thinkingSignature`.
//! let pi = r#"{"role":"user","content":"hi","timestamp":1}"#;
//! let message: Message = serde_json::from_str(pi)?;
//! assert_eq!(serde_json::to_string(&message)?, r#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}"#);
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! | block `type` | fields | allowed in |
//! |---|---|---|
//! | `text` | `text` | system, user, assistant, toolResult |
//! | `image` | `data` (base64) + `mimeType`, or `url` | user, toolResult |
//! | `audio` | `data` (base64) + `mimeType` | user |
//! | `document` | `data` + `mimeType`, or `url`; optional `title` | user |
//! | `thinking` | `thinking`, optional `signature` | assistant |
//! | `redactedThinking` | `data` | assistant |
//! | `toolCall` | `id`, `name`, `arguments` (an object), optional `signature` | assistant |
//!
//! An assistant line adds `api`, `provider`, `model`, `usage`, `stopReason` (one
//! of the 11 [`StopReason`]s), and optionally `responseId` and `errorMessage`; a
//! tool result adds `toolCallId`, `toolName`, `isError` and `details`, which is
//! for the application and never sent to a model.
//!
//! # Custom messages
//!
//! An application's own entries live in the same transcript. `#[derive(AgentMessage)]`
//! gives a struct a stable kind (its `"role"` on disk), a decoder registered at link
//! time (so a stored transcript reads back into the application's types), and a
//! projection to the model that is declared, never guessed. Without `to_llm` a
//! message is UI-only: it is kept, shown, persisted, and never reaches a model.
//!
//! ```
//! use agentmsg::{AgentMessage, ImageContent, Message, TextContent};
//!
//! #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
//! #[agent_message(kind = "notice")] // UI-only
//! struct Notice { text: String }
//!
//! #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
//! #[agent_message(kind = "agentCall", to_llm = user("[Request from {from}]: {request}"))]
//! struct AgentCall { from: String, request: String }
//!
//! #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
//! #[agent_message(kind = "screenshot", to_llm = user)] // its content fields become the content
//! struct Screenshot {
//!     #[agent_message(content)] caption: TextContent,
//!     #[agent_message(content)] image: ImageContent,
//!     path: String,
//! }
//!
//! let transcript: Vec<agentmsg::AgentMessage> = vec![
//!     Message::user("Ask the researcher about Rust.").into(),
//!     Notice { text: "researcher started".into() }.into(),
//!     AgentCall { from: "planner".into(), request: "Rust trends".into() }.into(),
//! ];
//!
//! // One flat object per line, the kind written first, and after the fields the
//! // time the message was made (Unix milliseconds; set here to show it).
//! assert!(transcript[1].timestamp().is_some());
//! let line = transcript[1].clone().with_timestamp(1765238302057).to_line()?;
//! assert_eq!(line, r#"{"role":"notice","text":"researcher started","timestamp":1765238302057}"#);
//! let back = agentmsg::AgentMessage::from_line(&line).unwrap();
//! assert_eq!(back.downcast_ref::<Notice>(), Some(&Notice { text: "researcher started".into() }));
//!
//! // What the model sees: the notice is dropped, the call is rendered as declared.
//! let projected = agentmsg::to_llm(&transcript);
//! assert_eq!(projected.len(), 2);
//! assert_eq!(projected[1].as_user().unwrap().text(), "[Request from planner]: Rust trends");
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! A type that keeps its time in a field of its own marks it
//! `#[agent_message(timestamp)]` (a `u64` or `Option<u64>` of Unix
//! milliseconds, as pi's kinds do); its line then has that field and no second
//! `timestamp`.
//!
//! The compiler checks what it can: a missing or reserved kind, a field named
//! like an envelope key (`role`, `id`, `turnId`, `v`, and `timestamp` unless
//! it is marked as the message's time), a template placeholder
//! that names no field, or a content field the projected role may not carry:
//!
//! ```compile_fail
//! use agentmsg::{AgentMessage, ThinkingContent};
//!
//! #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
//! #[agent_message(kind = "musing", to_llm = user)]
//! struct Musing {
//!     // error: `ThinkingContent` cannot appear in a user message
//!     #[agent_message(content)] thought: ThinkingContent,
//! }
//! ```
//!
//! `version = N` with `migrate = path` upgrades stored objects of older versions;
//! `aliases = ["old"]` claims kinds a type was stored under before. The built-in
//! kinds [`CompactionSummary`](crate::custom::CompactionSummary), [`BranchSummary`](crate::custom::BranchSummary) and [`ExtensionMessage`](crate::custom::ExtensionMessage) are
//! defined with the same derive.
//!
//! # Reading and writing transcripts
//!
//! [`JsonlReader`] streams any `BufRead` (JSON Lines or a JSON array), with line
//! numbers. Nothing is lost: a line of an unregistered kind, of a newer version,
//! or that fails to decode is kept as [`AgentMessage::Unknown`] with its exact
//! bytes and the reason, and so is a line that is no transcript line at all (not
//! UTF-8, not an object, no `"role"`, a fragment a crash left); [`JsonlWriter`]
//! writes those bytes back unchanged. A strict mode turns each into an error
//! naming the line; a torn last line (a crash mid-write) is reported, with its
//! bytes, after every line before it. [`JsonlWriter::append`] writes whole lines
//! under the file's advisory lock, so writers in several processes never
//! interleave, and ends a line a crash tore before it appends (see the
//! [`jsonl` notes on concurrent writers](crate::transcript::AppendFile)). Keeping a line that no
//! type claims costs about a copy of it: it is parsed only when asked
//! ([`UnknownMessage::validate`](crate::transcript::UnknownMessage::validate), `id`), and
//! `agentmsg check` does ask.
//!
//! A line that *does* decode is read into its type, and a key the type does not
//! have (a field a newer pi writes, a typo) is skipped: writing the message back
//! drops it. [`dropped_fields`](crate::transcript::dropped_fields) names such keys (`agentmsg check` warns of them),
//! so that nothing is lost without a word.
//!
//! ```
//! use agentmsg::{JsonlReader, JsonlWriter, Message};
//!
//! let stored = concat!(
//!     r#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}"#, "\n",
//!     r#"{"role":"fromTheFuture","payload":[1,2,3]}"#, "\n",
//! );
//! let transcript = JsonlReader::new(stored.as_bytes()).read_all()?;
//! assert_eq!(transcript.messages.len(), 2);
//! assert!(transcript.messages[1].is_unknown());
//!
//! let mut writer = JsonlWriter::new(Vec::new());
//! writer.write_all(&transcript.messages)?;
//! assert_eq!(String::from_utf8(writer.into_inner()?).unwrap(), stored);
//!
//! // Strict mode names the line.
//! let err = JsonlReader::new(stored.as_bytes()).strict().read_all().unwrap_err();
//! assert!(err.to_string().contains("line 2"), "{err}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Preparing a request for one model
//!
//! [`to_llm`] gives what a model may see of a transcript; [`prepare`] makes it
//! safe to send to one [`Target`], deterministically, and says what it changed:
//! thinking and signatures go back only to the model that wrote them, failed
//! turns are skipped, orphaned tool calls get an error result, stray and duplicate
//! results are dropped, tool-call ids are mapped to what the target accepts (and
//! back, through [`IdMap`](crate::project::IdMap)), images are replaced for models without vision.
//! [`validate`](crate::project::validate) reports the same problems and changes nothing; [`PromptEditor`](crate::project::PromptEditor)
//! lets a hook adjust a prepared request without inventing ids.
//!
//! ```
//! use agentmsg::{prepare, AssistantMessage, Message, StopReason, Target, ToolCall};
//! use agentmsg::project::ChangeKind;
//! use serde_json::json;
//!
//! // The agent crashed after the model asked for a tool.
//! let messages = vec![
//!     Message::user("Read a.rs"),
//!     AssistantMessage::new([ToolCall::new("functions.read:0", "read", json!({"path": "a.rs"}))])
//!         .with_origin("openai-completions", "openai", "gpt-5")
//!         .into(),
//! ];
//! let target = Target::new("anthropic", "anthropic-messages", "claude-sonnet-4-5");
//! let prepared = prepare(&messages, &target);
//! assert_eq!(prepared.messages.len(), 3); // a synthetic error result was added
//! assert_eq!(prepared.report.count(ChangeKind::SyntheticResult), 1);
//! assert_eq!(prepared.report.count(ChangeKind::MappedId), 1); // `.` and `:` are refused
//! let result = prepared.messages[2].as_tool_result().unwrap();
//! assert_eq!(prepared.ids.stored(&result.tool_call_id), "functions.read:0");
//! ```
//!
//! # Providers
//!
//! [`providers`] encodes a request for OpenAI Chat Completions, OpenAI Responses,
//! Anthropic Messages and Gemini (one Cargo feature each, all on by default), and
//! decodes each one's responses and streams back into an [`AssistantMessage`]
//! with usage, stop reason and replayable reasoning. Each encoder runs
//! [`prepare`] for its own target, so any projection can be handed over.
//!
//! ```
//! # #[cfg(feature = "anthropic")] {
//! use agentmsg::providers::{anthropic, Request, ToolSpec};
//! use agentmsg::Message;
//! use serde_json::json;
//!
//! let request = Request::new("claude-sonnet-4-5", vec![Message::user("What is in a.rs?")])
//!     .with_system("You are terse.")
//!     .with_tools(vec![ToolSpec::new("read", "Read a file", json!({
//!         "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]
//!     }))]);
//! let encoded = anthropic::encode_request(&request).unwrap();
//! assert_eq!(encoded.body["system"][0]["text"], "You are terse.");
//! assert_eq!(encoded.body["tools"][0]["name"], "read");
//!
//! let reply = anthropic::decode_response(r#"{"id":"msg_1","type":"message","role":"assistant",
//!     "model":"claude-sonnet-4-5","content":[{"type":"text","text":"A main function."}],
//!     "stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":5}}"#).unwrap();
//! assert_eq!(reply.text_content(), "A main function.");
//! assert_eq!(reply.usage.output, 5);
//! # }
//! ```
//!
//! # The agent loop
//!
//! With the `agent` feature, `agentmsg::agent` runs the loop: each turn sends
//! the session's context, streams the reply, runs the tools it asks for (their
//! arguments a Rust type, their schemas generated by `schemars`) and appends
//! everything to the session, until the model stops, a tool ends the run, the
//! turn limit or a cancellation. A UI gets one stream of events; a reply can be
//! asked for as a Rust type. The scripted model answers through the real
//! codecs, so an agent's tests run offline:
//!
//! ```
//! # #[cfg(all(feature = "agent", feature = "anthropic"))]
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use agentmsg::agent::{Agent, ScriptedModel};
//! use agentmsg::{AssistantMessage, Message, Session, ToolCall};
//!
//! /// Adds two numbers.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add { a: f64, b: f64 }
//!
//! let model = ScriptedModel::new([
//!     AssistantMessage::new([ToolCall::new("t1", "add", serde_json::json!({"a": 2, "b": 40}))]),
//!     AssistantMessage::new(["42."]),
//! ]);
//! let agent = Agent::new(model, "claude-sonnet-4-5")
//!     .tool_fn("add", |x: Add| async move { Ok(x.a + x.b) });
//! let mut session = Session::new();
//! let outcome = agent.prompt(&mut session, Message::user("2 + 40?"), |_event| {}).await?;
//! assert_eq!(outcome.turns, 2);
//! assert_eq!(session.entries().len(), 4); // the prompt, a call, its result, the answer
//! # Ok::<(), agentmsg::agent::AgentError>(())
//! # }).unwrap();
//! ```
//!
//! # Which `*Message` is which
//!
//! | type | what it is |
//! |---|---|
//! | [`Message`] | what a model sees: one of the four roles below, as every provider's wire format carries it |
//! | [`SystemMessage`], [`UserMessage`], [`AssistantMessage`], [`ToolResultMessage`] | the four roles of a [`Message`], each with the content blocks it allows |
//! | [`AgentMessage`](enum@AgentMessage) | one line of a transcript: an [`LlmMessage`], an application's own entry ([`AppMessage`](crate::custom::AppMessage)), or a line kept but not decoded ([`UnknownMessage`](crate::transcript::UnknownMessage)) |
//! | [`LlmMessage`] | a [`Message`] as a transcript line holds it, with its `id` and `turnId` |
//! | [`AppMessage`](crate::custom::AppMessage) | an application's entry as a transcript line holds it: a boxed [`CustomMessage`] with its `id`, `turnId` and `timestamp` |
//! | [`CustomMessage`] (trait) | what an application's own kind implements, by `#[derive(AgentMessage)]`: its kind (the line's `role`) and its projection to what a model sees, if any; [`DynCustomMessage`](crate::custom::DynCustomMessage) is its object-safe side |
//! | [`UnknownMessage`](crate::transcript::UnknownMessage) | a line of a kind nobody registered (or that did not decode), kept byte for byte |
//! | [`ExtensionMessage`](crate::custom::ExtensionMessage), [`InjectedMessage`](crate::custom::InjectedMessage) | built-in custom kinds: an untyped UI-only entry, and pi's `custom` entry that may reach the model |
//! | [`ContextMessage`](crate::session::ContextMessage) | a message of a session's context at a leaf: an entry's, borrowed, or one the context made (a summary) |
//! | [`PromptMessage`](crate::project::PromptMessage) | a bare user or assistant message for a [`PromptEditor`](crate::project::PromptEditor), content only |
//!
//! # The `agentmsg` command
//!
//! The `agentmsg-cli` crate installs `agentmsg`: `check` (every problem with its
//! line number), `stats` (counts, tokens, cost, cache hit rate), `project` (the
//! request body for one provider), `repair` (a repaired copy), `import` (a pi
//! session, a Claude Code log or a Codex rollout, into a file or a store),
//! `schema` (the JSON Schema of a transcript line), `context` (what the model
//! sees at a leaf), `tree` (the session tree), `decode` (a provider's response
//! or stream), `sessions` (a store's sessions; `sessions copy FROM TO`) and
//! `export --html`. Every command that reads a file also reads a store's
//! session (`DIR#ID`, `sqlite:PATH#ID`, `postgres://…#ID`). The command is a
//! library function too (`agentmsg_cli::run`), so an application builds its
//! own `agentmsg` that knows its custom kinds.

pub use agentmsg_macros::AgentMessage;

// The core names, as the runtime has them at its root.
pub use agentmsg_runtime::{
    prepare, to_llm, AgentMessage, AssistantContent, AssistantMessage, AudioContent, Content, Cost,
    CustomMessage, DocumentContent, ImageContent, JsonlReader, JsonlWriter, LlmMessage, Message,
    MessageId, ParentId, ProviderBlock, RedactedThinkingContent, Role, Session, StopReason,
    SystemMessage, Target, TextContent, ThinkingContent, ToolArguments, ToolCall,
    ToolResultContent, ToolResultMessage, TurnId, Usage, UserContent, UserMessage,
};

// The modules, one concept each.
// The runtime builds its loop only with a provider to send to.
#[cfg(all(feature = "agent", any_provider))]
pub use agentmsg_runtime::agent;
#[cfg(feature = "html")]
pub use agentmsg_runtime::export;
// The runtime builds its client only with a provider to send to.
#[cfg(all(feature = "http", any_provider))]
pub use agentmsg_runtime::http;
#[cfg(any_provider)]
pub use agentmsg_runtime::providers;
#[cfg(feature = "usage-report")]
pub use agentmsg_runtime::usage_report;
pub use agentmsg_runtime::{
    custom, import, lines, message, project, session, store, time, transcript,
};

#[doc(hidden)]
pub use agentmsg_runtime::__private_0_1_0;

/// The README's examples, run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
