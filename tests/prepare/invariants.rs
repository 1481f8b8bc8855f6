//! The invariants of `prepare`, checked over random transcripts (proptest) and
//! over the real pi sessions of the conformance data.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use agentmsg::message::MediaSource;
use agentmsg::project::{
    validate, ChangeKind, IdRule, Prepared, ProblemKind, Provenance, ThinkingPolicy, Validator,
};
use agentmsg::{
    prepare, AssistantContent, AssistantMessage, ImageContent, Message, StopReason, Target,
    TextContent, ThinkingContent, ToolCall, ToolResultContent, ToolResultMessage, UserContent,
    UserMessage,
};
use proptest::prelude::*;

fn json(messages: &[Message]) -> String {
    serde_json::to_string(messages).expect("messages serialize")
}

fn one(message: &Message) -> String {
    serde_json::to_string(message).expect("message serializes")
}

/// Every invariant `prepare` promises, as a list of violations (empty when
/// all hold).
fn violations(input: &[Message], target: &Target, prepared: &Prepared) -> Vec<String> {
    let mut bad = Vec::new();
    let out = &prepared.messages;

    if prepared.provenance.len() != out.len() {
        bad.push(format!(
            "{} origins for {} messages",
            prepared.provenance.len(),
            out.len()
        ));
        return bad;
    }

    // Calls and results: each call's results come right after its turn, one
    // per call; no result stands anywhere else.
    let mut call_ids = BTreeSet::new();
    let mut k = 0;
    while k < out.len() {
        match &out[k] {
            Message::Assistant(a) => {
                if a.stop_reason.is_failure() {
                    bad.push(format!("out[{k}]: a failed turn was kept"));
                }
                let calls: Vec<&str> = a.tool_calls().map(|c| c.id.as_str()).collect();
                for id in &calls {
                    if !call_ids.insert(id.to_string()) {
                        bad.push(format!("out[{k}]: call id `{id}` is used twice"));
                    }
                    if !target.id_rule.accepts(id) {
                        bad.push(format!(
                            "out[{k}]: call id `{id}` breaks {:?}",
                            target.id_rule
                        ));
                    }
                }
                let mut answered = BTreeSet::new();
                for j in 0..calls.len() {
                    match out.get(k + 1 + j) {
                        Some(Message::ToolResult(r)) => {
                            if !calls.contains(&r.tool_call_id.as_str()) {
                                bad.push(format!(
                                    "out[{}]: result `{}` is not for a call of out[{k}]",
                                    k + 1 + j,
                                    r.tool_call_id
                                ));
                            }
                            if !answered.insert(r.tool_call_id.clone()) {
                                bad.push(format!(
                                    "out[{}]: second result for `{}`",
                                    k + 1 + j,
                                    r.tool_call_id
                                ));
                            }
                        }
                        _ => bad.push(format!(
                            "out[{k}]: {} calls but only {j} results follow",
                            calls.len()
                        )),
                    }
                }
                if let Some(Message::ToolResult(r)) = out.get(k + 1 + calls.len()) {
                    bad.push(format!(
                        "out[{}]: result `{}` after the turn's results",
                        k + 1 + calls.len(),
                        r.tool_call_id
                    ));
                }
                k += 1 + calls.len();
            }
            Message::ToolResult(r) => {
                bad.push(format!(
                    "out[{k}]: result `{}` without its turn before it",
                    r.tool_call_id
                ));
                k += 1;
            }
            _ => k += 1,
        }
    }

    // Thinking and images.
    for (k, message) in out.iter().enumerate() {
        match message {
            Message::Assistant(a) => {
                let same = target.produced(&a.provider, &a.api, &a.model);
                for block in &a.content {
                    match block {
                        AssistantContent::Thinking(t) => {
                            if !same {
                                bad.push(format!("out[{k}]: foreign thinking kept"));
                            }
                            if t.signature.as_deref() == Some("") {
                                bad.push(format!("out[{k}]: empty thinking signature"));
                            }
                            if t.signature.is_none() && !target.unsigned_thinking {
                                bad.push(format!(
                                    "out[{k}]: unsigned thinking for a signed-only target"
                                ));
                            }
                        }
                        AssistantContent::RedactedThinking(_) if !same => {
                            bad.push(format!("out[{k}]: foreign redacted thinking kept"));
                        }
                        AssistantContent::ToolCall(c) => {
                            if c.signature.as_deref() == Some("") {
                                bad.push(format!("out[{k}]: empty tool-call signature"));
                            }
                            if c.signature.is_some() && !same {
                                bad.push(format!("out[{k}]: foreign tool-call signature kept"));
                            }
                        }
                        _ => {}
                    }
                }
                if a.content.is_empty() {
                    bad.push(format!("out[{k}]: empty assistant message"));
                }
            }
            Message::User(u) => {
                if !target.vision && u.content.iter().any(|c| matches!(c, UserContent::Image(_))) {
                    bad.push(format!("out[{k}]: image for a target without vision"));
                }
                if u.content.is_empty() {
                    bad.push(format!("out[{k}]: empty user message"));
                }
            }
            Message::ToolResult(r) => {
                if !target.id_rule.accepts(&r.tool_call_id) {
                    bad.push(format!(
                        "out[{k}]: result id `{}` breaks the rule",
                        r.tool_call_id
                    ));
                }
                let images = r
                    .content
                    .iter()
                    .any(|c| matches!(c, ToolResultContent::Image(_)));
                if images && (!target.vision || !target.tool_result_images) {
                    bad.push(format!("out[{k}]: image left in a tool result"));
                }
            }
            Message::System(_) => {}
        }
    }

    // Accounting: what the report does not name is untouched, once, in order.
    let reported: BTreeSet<usize> = prepared.report.iter().map(|c| c.index).collect();
    if let Some(c) = prepared.report.iter().find(|c| c.index >= input.len()) {
        bad.push(format!(
            "report names message {} of {}",
            c.index,
            input.len()
        ));
    }
    let mut seen = BTreeMap::new();
    let mut last_unreported = None;
    for (k, origin) in prepared.provenance.iter().enumerate() {
        match *origin {
            Provenance::Input(i) => {
                *seen.entry(i).or_insert(0) += 1;
                let Some(original) = input.get(i) else {
                    bad.push(format!("out[{k}]: origin {i} is past the input"));
                    continue;
                };
                if !reported.contains(&i) {
                    if one(original) != one(&out[k]) {
                        bad.push(format!(
                            "out[{k}]: input {i} changed but the report does not say so"
                        ));
                    }
                    if last_unreported.is_some_and(|last| last > i) {
                        bad.push(format!("out[{k}]: unreported input {i} moved"));
                    }
                    last_unreported = Some(i);
                }
                // Ids map back to the stored ones.
                if let (Message::Assistant(before), Message::Assistant(after)) = (original, &out[k])
                {
                    for (b, a) in before.tool_calls().zip(after.tool_calls()) {
                        if prepared.ids.stored(&a.id) != b.id {
                            bad.push(format!(
                                "out[{k}]: `{}` maps back to `{}`, not `{}`",
                                a.id,
                                prepared.ids.stored(&a.id),
                                b.id
                            ));
                        }
                    }
                }
                if let (Message::ToolResult(before), Message::ToolResult(after)) =
                    (original, &out[k])
                {
                    if prepared.ids.stored(&after.tool_call_id) != before.tool_call_id {
                        bad.push(format!("out[{k}]: result id does not map back"));
                    }
                }
            }
            Provenance::SyntheticResult(i) => {
                if !prepared
                    .report
                    .for_message(i)
                    .any(|c| c.kind == ChangeKind::SyntheticResult)
                {
                    bad.push(format!("out[{k}]: synthetic result not reported at {i}"));
                }
                match &out[k] {
                    Message::ToolResult(r) if r.is_error && r.text() == "No result provided" => {}
                    _ => bad.push(format!(
                        "out[{k}]: synthetic result is not the error result"
                    )),
                }
            }
            Provenance::MovedImages(i) => {
                if !prepared
                    .report
                    .for_message(i)
                    .any(|c| c.kind == ChangeKind::MovedImages)
                {
                    bad.push(format!("out[{k}]: moved images not reported at {i}"));
                }
            }
        }
    }
    for (i, n) in &seen {
        if *n > 1 {
            bad.push(format!("input {i} appears {n} times"));
        }
    }
    for i in 0..input.len() {
        if !seen.contains_key(&i) && !reported.contains(&i) {
            bad.push(format!("input {i} vanished without a report"));
        }
    }

    // Deterministic and idempotent.
    let again = prepare(input, target);
    if json(&again.messages) != json(out)
        || again.report != prepared.report
        || again.ids != prepared.ids
    {
        bad.push("a second run gave another result".to_owned());
    }
    let twice = prepare(out, target);
    if json(&twice.messages) != json(out) {
        bad.push("prepare(prepare(x)) differs from prepare(x)".to_owned());
    }
    if !twice.report.is_empty() {
        bad.push(format!(
            "preparing prepared messages changed things:\n{}",
            twice.report
        ));
    }
    if !validate(out).is_empty() {
        bad.push(format!(
            "prepared messages do not validate: {:?}",
            validate(out)
        ));
    }
    bad
}

// ---------------------------------------------------------------------------
// Random transcripts.

const PROVIDERS: [(&str, &str, &str); 4] = [
    ("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
    ("openai", "openai-responses", "gpt-5.1-codex"),
    ("openai", "openai-completions", "gpt-4o-mini"),
    ("google", "google-generative-ai", "gemini-2.5-pro"),
];

fn id_pool() -> Vec<String> {
    vec![
        "call_1".to_owned(),
        "call_2".to_owned(),
        "toolu_01A".to_owned(),
        "functions.write_todos:0".to_owned(),
        "functions.write_todos_0".to_owned(),
        String::new(),
        "x".repeat(45),
        format!("call_q1|fc_{}", "Ab+/=".repeat(88)),
        "a b".to_owned(),
        "é".repeat(41),
    ]
}

fn signature() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some(String::new())),
        Just(Some("EqQBsig".to_owned()))
    ]
}

fn image() -> impl Strategy<Value = ImageContent> {
    prop_oneof![
        Just(ImageContent {
            source: MediaSource::Base64 {
                data: "iVBORw0KGgo=".to_owned(),
                mime_type: "image/png".to_owned()
            }
        }),
        Just(ImageContent {
            source: MediaSource::Url("https://example.com/cat.jpg".to_owned())
        }),
    ]
}

fn assistant_block() -> impl Strategy<Value = AssistantContent> {
    prop_oneof![
        "[a-z ]{0,8}".prop_map(|t| AssistantContent::Text(TextContent::new(t))),
        ("[a-z ]{0,8}", signature()).prop_map(|(t, s)| AssistantContent::Thinking(
            ThinkingContent {
                thinking: t,
                signature: s
            }
        )),
        "[a-z]{0,4}".prop_map(|d| AssistantContent::RedactedThinking(
            agentmsg::RedactedThinkingContent::new(d)
        )),
        (0..10usize, signature()).prop_map(|(i, s)| {
            let mut call = ToolCall::new(id_pool()[i].clone(), "read", serde_json::json!({"i": i}));
            call.signature = s;
            AssistantContent::ToolCall(call)
        }),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    let stop = prop_oneof![
        4 => Just(StopReason::ToolUse),
        2 => Just(StopReason::Stop),
        1 => Just(StopReason::Error),
        1 => Just(StopReason::Aborted),
        1 => Just(StopReason::Length),
    ];
    prop_oneof![
        1 => "[a-z]{1,6}".prop_map(Message::system),
        3 => (prop::collection::vec(
                prop_oneof![
                    "[a-z ]{1,6}".prop_map(|t| UserContent::Text(TextContent::new(t))),
                    image().prop_map(UserContent::Image),
                ],
                0..3,
            ))
            .prop_map(|content| Message::User(UserMessage { content, timestamp: 7 })),
        4 => (prop::collection::vec(assistant_block(), 0..4), stop, 0..4usize).prop_map(
            |(content, stop_reason, p)| {
                let (provider, api, model) = PROVIDERS.get(p).copied().unwrap_or(("", "", ""));
                Message::Assistant(AssistantMessage {
                    content,
                    stop_reason,
                    timestamp: 11,
                    ..AssistantMessage::default()
                }
                .with_origin(api, provider, model))
            }
        ),
        5 => (0..10usize, prop::collection::vec(
                prop_oneof![
                    "[a-z]{0,5}".prop_map(|t| ToolResultContent::Text(TextContent::new(t))),
                    image().prop_map(ToolResultContent::Image),
                ],
                0..3,
            ), any::<bool>())
            .prop_map(|(i, content, is_error)| Message::ToolResult(ToolResultMessage {
                tool_call_id: id_pool()[i].clone(),
                tool_name: "read".to_owned(),
                content,
                is_error,
                timestamp: 13,
                details: None,
            })),
    ]
}

/// A well-formed turn: an assistant message with calls, then results for some
/// of them (in any order, some with images).
fn turn() -> impl Strategy<Value = Vec<Message>> {
    (
        prop::collection::vec((0..10usize, any::<bool>()), 1..4),
        0..4usize,
        prop::collection::vec(image(), 0..2),
        any::<bool>(),
    )
        .prop_map(|(calls, p, images, reverse)| {
            let (provider, api, model) = PROVIDERS.get(p).copied().unwrap_or(("", "", ""));
            let content = calls
                .iter()
                .map(|(i, _)| {
                    AssistantContent::ToolCall(ToolCall::new(
                        id_pool()[*i].clone(),
                        "look",
                        serde_json::json!({}),
                    ))
                })
                .collect();
            let mut turn = vec![Message::Assistant(
                AssistantMessage {
                    content,
                    stop_reason: StopReason::ToolUse,
                    timestamp: 17,
                    ..AssistantMessage::default()
                }
                .with_origin(api, provider, model),
            )];
            let mut results: Vec<Message> = calls
                .iter()
                .filter(|(_, answered)| *answered)
                .map(|(i, _)| {
                    let mut content = vec![ToolResultContent::Text(TextContent::new("seen"))];
                    content.extend(images.iter().cloned().map(ToolResultContent::Image));
                    Message::ToolResult(ToolResultMessage {
                        tool_call_id: id_pool()[*i].clone(),
                        tool_name: "look".to_owned(),
                        content,
                        is_error: false,
                        timestamp: 19,
                        details: None,
                    })
                })
                .collect();
            if reverse {
                results.reverse();
            }
            turn.extend(results);
            turn
        })
}

/// A transcript: well-formed turns mixed with arbitrary messages.
fn transcript(max: usize) -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec(
        prop_oneof![2 => message().prop_map(|m| vec![m]), 1 => turn()],
        0..max,
    )
    .prop_map(|chunks| chunks.into_iter().flatten().collect())
}

fn target() -> impl Strategy<Value = Target> {
    (
        0..4usize,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(p, vision, images, as_text, unsigned)| {
            let (provider, api, model) = PROVIDERS[p];
            Target::new(provider, api, model)
                .vision(vision)
                .tool_result_images(images)
                .unsigned_thinking(unsigned)
                .thinking(if as_text {
                    ThinkingPolicy::AsText
                } else {
                    ThinkingPolicy::Drop
                })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn prepare_keeps_every_promise(input in transcript(10), target in target()) {
        let prepared = prepare(&input, &target);
        let bad = violations(&input, &target, &prepared);
        prop_assert!(bad.is_empty(), "{}\ninput: {}\noutput: {}\nreport:\n{}", bad.join("\n"), json(&input), json(&prepared.messages), prepared.report);
    }

    #[test]
    fn every_id_rule_holds(input in transcript(8), rule in prop_oneof![
        Just(IdRule::Anthropic), Just(IdRule::OpenAiChat), Just(IdRule::OpenAiResponses),
        Just(IdRule::Gemini), Just(IdRule::Mistral), Just(IdRule::Any)
    ]) {
        let target = Target::new("openai", "openai-completions", "gpt-4o-mini").id_rule(rule);
        let prepared = prepare(&input, &target);
        let bad = violations(&input, &target, &prepared);
        prop_assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn arbitrary_ids_map_into_every_rule(ids in prop::collection::vec(".{0,90}", 1..6), rule in prop_oneof![
        Just(IdRule::Anthropic), Just(IdRule::OpenAiChat), Just(IdRule::OpenAiResponses),
        Just(IdRule::Gemini), Just(IdRule::Mistral), Just(IdRule::Any)
    ]) {
        let calls = ids
            .iter()
            .map(|id| AssistantContent::ToolCall(ToolCall::new(id.clone(), "t", serde_json::json!({}))))
            .collect();
        let mut input = vec![Message::user("go"), Message::Assistant(AssistantMessage {
            content: calls,
            stop_reason: StopReason::ToolUse,
            ..AssistantMessage::default()
        })];
        input.extend(ids.iter().map(|id| Message::tool_result(id.clone(), "t", "ok")));
        let target = Target::new("openai", "openai-completions", "gpt-4o").id_rule(rule);
        let prepared = prepare(&input, &target);
        let bad = violations(&input, &target, &prepared);
        prop_assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn validate_finds_what_prepare_repairs(input in transcript(8)) {
        // A target that takes every id and image: only the structural rules change things.
        let target = Target::new("", "", "").id_rule(IdRule::Any).vision(true).tool_result_images(true);
        let problems = validate(&input);
        let prepared = prepare(&input, &target);
        for problem in &problems {
            prop_assert!(prepared.report.touches(problem.index), "{problem} but prepare changed nothing there:\n{}", prepared.report);
        }
        let structural = [ChangeKind::SkippedFailedTurn, ChangeKind::DroppedResult, ChangeKind::SyntheticResult, ChangeKind::ReorderedResult];
        for change in prepared.report.iter().filter(|c| structural.contains(&c.kind)) {
            prop_assert!(problems.iter().any(|p| p.index == change.index), "{change} but validate found nothing: {problems:?}");
        }
        // validate changes nothing and is deterministic.
        prop_assert_eq!(validate(&input), problems);
    }

    #[test]
    fn the_validator_reports_at_the_indexes_it_is_given(input in transcript(14)) {
        // `validate` is the validator fed one message at a time; given indexes
        // of its own (line numbers, say), it finds the same problems at them.
        let expected = validate(&input);
        let mut validator = Validator::new();
        for (i, message) in input.iter().enumerate() {
            validator.push_at(3 * i + 1, message);
        }
        let renumbered: Vec<_> = expected
            .into_iter()
            .map(|mut p| {
                p.index = 3 * p.index + 1;
                p
            })
            .collect();
        prop_assert_eq!(validator.finish(), renumbered);
    }
}

#[test]
fn validate_reports_bad_media_and_pairing_in_message_order() {
    let bad = |what: &str| ImageContent {
        source: MediaSource::Base64 {
            data: format!("{what}!!"),
            mime_type: "image/png".to_owned(),
        },
    };
    let mut call = ToolCall::new("c1", "read", serde_json::json!({}));
    call.signature = Some(String::new());
    let input = vec![
        Message::User(UserMessage {
            content: vec![UserContent::Image(bad("a")), UserContent::Image(bad("b"))],
            timestamp: 0,
        }),
        Message::Assistant(AssistantMessage {
            content: vec![
                AssistantContent::ToolCall(call.clone()),
                AssistantContent::ToolCall(call),
            ],
            stop_reason: StopReason::ToolUse,
            ..AssistantMessage::default()
        }),
        Message::user("between"),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c1".to_owned(),
            tool_name: "read".to_owned(),
            content: vec![ToolResultContent::Image(bad("c"))],
            is_error: false,
            timestamp: 0,
            details: None,
        }),
        Message::User(UserMessage {
            content: vec![],
            timestamp: 0,
        }),
    ];
    let found: Vec<(usize, ProblemKind)> = validate(&input)
        .into_iter()
        .map(|p| (p.index, p.kind))
        .collect();
    use ProblemKind::*;
    assert_eq!(
        found,
        [
            (0, InvalidMedia),
            (0, InvalidMedia),
            (1, EmptySignature),
            (1, EmptySignature),
            (1, DuplicateCallId),
            (1, MissingResult),
            (3, MisplacedResult),
            (3, InvalidMedia),
            (4, EmptyMessage),
        ]
    );
}

/// The random transcripts above reach every rule: each kind of change shows up.
#[test]
fn random_transcripts_exercise_every_rule() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let mut runner = TestRunner::deterministic();
    let strategy = (transcript(10), target());
    let mut seen: BTreeMap<ChangeKind, usize> = BTreeMap::new();
    for _ in 0..400 {
        let (input, target) = strategy.new_tree(&mut runner).expect("a value").current();
        for change in prepare(&input, &target).report.iter() {
            *seen.entry(change.kind).or_default() += 1;
        }
    }
    for kind in [
        ChangeKind::DroppedThinking,
        ChangeKind::ThinkingAsText,
        ChangeKind::SkippedFailedTurn,
        ChangeKind::DroppedResult,
        ChangeKind::SyntheticResult,
        ChangeKind::ReorderedResult,
        ChangeKind::MappedId,
        ChangeKind::ImagePlaceholder,
        ChangeKind::MovedImages,
        ChangeKind::DroppedEmptyMessage,
    ] {
        assert!(
            seen.get(&kind).copied().unwrap_or(0) > 0,
            "{kind} never happens: {seen:?}"
        );
    }
    println!("changes over 400 random transcripts: {seen:?}");
}

// ---------------------------------------------------------------------------
// The real pi sessions.

fn pi_messages(name: &str) -> (Vec<Message>, usize) {
    let path = common::conformance_dir().join("transcripts/pi").join(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut messages = Vec::new();
    let mut custom = 0;
    for (n, line) in text.lines().enumerate() {
        let entry: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", n + 1));
        if entry["type"] != "message" {
            continue;
        }
        let message = &entry["message"];
        match message["role"].as_str() {
            Some("user" | "assistant" | "toolResult" | "system") => messages.push(
                serde_json::from_value::<Message>(message.clone())
                    .unwrap_or_else(|e| panic!("{name}:{}: {e}", n + 1)),
            ),
            _ => custom += 1,
        }
    }
    (messages, custom)
}

#[test]
fn real_pi_sessions_keep_every_promise() {
    common::require_conformance!();
    let kinds = [
        ChangeKind::DroppedThinking,
        ChangeKind::ThinkingAsText,
        ChangeKind::SkippedFailedTurn,
        ChangeKind::DroppedResult,
        ChangeKind::SyntheticResult,
        ChangeKind::ReorderedResult,
        ChangeKind::MappedId,
        ChangeKind::ImagePlaceholder,
        ChangeKind::MovedImages,
        ChangeKind::DroppedEmptyMessage,
    ];
    let mut total_changes = 0;
    for name in ["before-compaction.jsonl", "large-session.jsonl"] {
        let (input, custom) = pi_messages(name);
        assert!(input.len() > 800, "{name}: only {} messages", input.len());
        let mut models: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
        for a in input.iter().filter_map(Message::as_assistant) {
            *models.entry((&a.provider, &a.api, &a.model)).or_default() += 1;
        }
        let (provider, api, model) = models
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(m, _)| *m)
            .expect("assistant messages");
        let targets = [
            ("same model", Target::new(provider, api, model)),
            (
                "other claude",
                Target::new("anthropic", "anthropic-messages", "claude-haiku-4-5"),
            ),
            (
                "chat, no vision",
                Target::new("openai", "openai-completions", "gpt-4o-mini").vision(false),
            ),
            (
                "responses, as text",
                Target::new("openai", "openai-responses", "gpt-5.1-codex")
                    .thinking(ThinkingPolicy::AsText),
            ),
            (
                "gemini",
                Target::new("google", "google-generative-ai", "gemini-2.5-pro"),
            ),
        ];
        let problems = validate(&input);
        println!(
            "{name}: {} LLM messages ({custom} custom), validate: {} problems",
            input.len(),
            problems.len()
        );
        for (label, target) in &targets {
            let prepared = prepare(&input, target);
            let bad = violations(&input, target, &prepared);
            assert!(bad.is_empty(), "{name} / {label}:\n{}", bad.join("\n"));
            let counts: Vec<String> = kinds
                .iter()
                .map(|k| (k, prepared.report.count(*k)))
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!("{k}: {n}"))
                .collect();
            println!(
                "  {label}: {} → {} messages; {}",
                input.len(),
                prepared.messages.len(),
                counts.join(", ")
            );
            total_changes += prepared.report.len();
            // The sessions hold aborted and errored turns: they are never replayed.
            assert!(prepared.report.count(ChangeKind::SkippedFailedTurn) > 0);
        }
    }
    assert!(total_changes > 0);
}

#[test]
fn same_model_keeps_signed_thinking_of_the_real_session() {
    common::require_conformance!();
    let (input, _) = pi_messages("before-compaction.jsonl");
    let signed_in = input
        .iter()
        .filter_map(Message::as_assistant)
        .filter(|a| !a.stop_reason.is_failure())
        .flat_map(|a| a.thinking())
        .filter(|t| t.signature().is_some())
        .count();
    assert!(signed_in > 0);
    let prepared = prepare(
        &input,
        &Target::new("anthropic", "anthropic-messages", "claude-opus-4-5"),
    );
    let signed_out = prepared
        .messages
        .iter()
        .filter_map(Message::as_assistant)
        .flat_map(|a| a.thinking())
        .filter(|t| t.signature().is_some())
        .count();
    assert_eq!(signed_in, signed_out);
    let other = prepare(
        &input,
        &Target::new("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
    );
    assert_eq!(
        other
            .messages
            .iter()
            .filter_map(Message::as_assistant)
            .flat_map(|a| a.thinking())
            .count(),
        0
    );
}
