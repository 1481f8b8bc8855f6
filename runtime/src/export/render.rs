//! One entry of a session as an `<article>`: every string from the
//! transcript escaped, Markdown rendered without raw HTML, media inlined
//! only when its bytes are an image.

use std::fmt::Write as _;

use base64::Engine as _;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use std::collections::HashMap;

use super::escape::{html, html_string, safe_link, text};
use super::numbers::{reply_cost, ReplyCost};
use super::tool::{self, Called, ToolKind};
use crate::message::{MediaFormat, MediaSource};
use crate::session::{Entry, EntryKind};
use crate::{
    AgentMessage, AssistantContent, AssistantMessage, ImageContent, Message, ProviderBlock,
    TextContent, ToolResultContent, UserContent,
};

/// What the page's script needs to know of an entry besides its markup.
pub(super) struct Rendered {
    /// The `<article>`.
    pub html: String,
    /// A failed tool result or a failed reply.
    pub error: bool,
    /// An app-only line, drawn as one quiet line (the page folds a run of
    /// them into one row).
    pub quiet: bool,
    /// A reply's cost, as its usage line says it (the chart's numbers use
    /// it: pricing a reply from the catalog once, not twice).
    pub cost: Option<ReplyCost>,
}

/// The id an entry is linked by: its own (`id`), or `line-N` (its
/// `line_no`).
pub(super) fn anchor(id: Option<&crate::MessageId>, line_no: usize) -> String {
    id.map_or_else(|| format!("line-{line_no}"), |id| id.to_string())
}

/// `text` percent-encoded for a URL fragment (what `encodeURIComponent`
/// keeps is kept).
fn fragment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The calls made so far whose results have not been drawn, by call id:
/// what a result needs of its call.
pub(super) type Calls = HashMap<String, Called>;

/// Past this many calls without a result, the oldest are forgotten (their
/// results are drawn as plain text).
const MAX_OPEN_CALLS: usize = 10_000;

/// Renders `entry`, whose line is `line`; `cost` is a reply's cost when it
/// is known already (the page's first pass priced it).
pub(super) fn entry(
    entry: &Entry,
    line: &[u8],
    label: Option<&str>,
    cost: Option<ReplyCost>,
    calls: &mut Calls,
) -> Rendered {
    let mut body = String::new();
    let mut error = false;
    let mut role = "meta";
    let mut who = String::new();
    let mut result_of: Option<(&str, &str)> = None;
    let mut kind = entry.kind().name();
    let mut quiet = false;
    let mut gist = String::new();
    let known = cost;
    let mut cost = None;
    match entry.kind() {
        EntryKind::Message(message) => match message {
            AgentMessage::Llm(m) => match &m.message {
                Message::User(u) => {
                    role = "user";
                    kind = "user";
                    user_blocks(&mut body, &u.content);
                }
                Message::System(s) => {
                    role = "system";
                    for t in &s.content {
                        text_block(&mut body, t);
                    }
                }
                Message::Assistant(a) => {
                    role = "assistant";
                    error = matches!(
                        a.stop_reason,
                        crate::StopReason::Error | crate::StopReason::Aborted
                    );
                    who = model_name(a);
                    if calls.len() > MAX_OPEN_CALLS {
                        calls.clear();
                    }
                    let priced = known.unwrap_or_else(|| reply_cost(a));
                    assistant(&mut body, a, calls, true, priced);
                    cost = Some(priced);
                }
                Message::ToolResult(r) => {
                    role = "tool";
                    error = r.is_error;
                    result_of = Some((&r.tool_call_id, &r.tool_name));
                    tool_result(&mut body, r, calls.remove(&r.tool_call_id).as_ref());
                }
            },
            AgentMessage::Custom(_) => {
                role = "custom";
                if let Some(ext) = message.downcast_ref::<crate::custom::ExtensionMessage>() {
                    kind = &ext.kind;
                    quiet = true;
                    gist = gist_of(&ext.data);
                } else if entry.as_compaction().is_none()
                    && message
                        .downcast_ref::<crate::custom::BranchSummary>()
                        .is_none()
                    && crate::to_llm(std::slice::from_ref(message)).is_empty()
                {
                    quiet = true;
                    gist = serde_json::from_slice::<serde_json::Value>(line)
                        .map(|v| gist_of(&v))
                        .unwrap_or_default();
                } else {
                    custom(&mut body, line, entry, message);
                }
            }
            AgentMessage::Unknown(u) => {
                role = "custom";
                quiet = true;
                gist = format!("not decoded: {}", u.reason());
            }
        },
        EntryKind::Compaction(c) => {
            role = "compaction";
            compaction(&mut body, c);
        }
        EntryKind::BranchSummary(b) => {
            role = "summary";
            kind = "branchSummary";
            body.push_str("<p class=\"note\">summary of an abandoned branch</p>");
            summary(&mut body, &b.summary);
        }
        EntryKind::CustomMessage(c) => {
            role = "custom";
            let _ = write!(
                body,
                "<p class=\"note\">extension message <code>{}</code></p>",
                html_string(&c.custom_type)
            );
            raw_line(&mut body, line);
        }
        EntryKind::Label { target, label } => {
            quiet = true;
            gist = format!(
                "on <a href=\"#{}\">{}</a>: {}",
                html_string(&fragment(target.as_str())),
                html_string(target.as_str()),
                label
                    .as_deref()
                    .map_or_else(|| "(cleared)".to_owned(), html_string)
            );
        }
        EntryKind::SessionInfo { name } => {
            quiet = true;
            gist = format!(
                "session name: {}",
                html_string(name.as_deref().unwrap_or("(none)"))
            );
        }
        EntryKind::ModelChange { provider, model_id } => {
            quiet = true;
            gist = format!("{}/{}", html_string(provider), html_string(model_id));
        }
        EntryKind::ThinkingLevelChange { level } => {
            quiet = true;
            gist = html_string(level);
        }
        EntryKind::Custom { .. } | EntryKind::Other { .. } | EntryKind::Header => {
            quiet = true;
            gist = serde_json::from_slice::<serde_json::Value>(line)
                .map(|v| gist_of(&v))
                .unwrap_or_default();
        }
    }
    if entry.as_compaction().is_some() && role != "compaction" {
        role = "compaction";
        quiet = false;
    }
    if role == "compaction" {
        kind = "compaction";
    }
    let mut out = String::with_capacity(body.len() + line.len() + 256);
    let _ = write!(
        out,
        "<article class=\"entry r-{role}{}{}\" data-kind=\"{}\"",
        if error { " error" } else { "" },
        if quiet { " quiet" } else { "" },
        html_string(kind),
    );
    if let Some((call, tool)) = result_of {
        let _ = write!(
            out,
            " data-result-of=\"{}\" data-tool=\"{}\"",
            html_string(call),
            html_string(tool)
        );
    }
    out.push('>');
    if quiet {
        out.push_str("<details class=\"line\"><summary>");
    } else {
        out.push_str("<header>");
    }
    // The page writes the entry's id (`data-entry-id`), its kind's name
    // and its permalink from the tree: each is written once.
    if !gist.is_empty() {
        let _ = write!(out, " <span class=\"gist\">{gist}</span>");
    }
    if !who.is_empty() {
        let _ = write!(out, " <span class=\"who\">{}</span>", html_string(&who));
    }
    // The page writes the entry's time from the tree.
    if let Some(label) = label {
        let _ = write!(out, " <span class=\"label\">{}</span>", html_string(label));
    }
    // The page adds the permalink (`#ID`) and the entry's index.
    if quiet {
        // The line as written: what the page shows of it is a gist.
        out.push_str("</summary><pre class=\"raw\"><code>");
        text(&mut out, &String::from_utf8_lossy(line));
        out.push_str("</code></pre></details>");
    } else {
        out.push_str("</header>");
    }
    out.push_str(&body);
    out.push_str("</article>");
    Rendered {
        html: out,
        error,
        quiet,
        cost,
    }
}

fn model_name(a: &AssistantMessage) -> String {
    match (a.provider.is_empty(), a.model.is_empty()) {
        (_, true) => a.provider.clone(),
        (true, false) => a.model.clone(),
        (false, false) => format!("{}/{}", a.provider, a.model),
    }
}

fn user_blocks(out: &mut String, blocks: &[UserContent]) {
    for block in blocks {
        match block {
            UserContent::Text(t) => text_block(out, t),
            UserContent::Image(img) => image(out, img),
            UserContent::Audio(a) => {
                let _ = write!(
                    out,
                    "<p class=\"media\">audio ({}), {}</p>",
                    html_string(&a.mime_type),
                    size_of_base64(&a.data)
                );
            }
            UserContent::Document(d) => {
                let name = d.title.as_deref().unwrap_or("untitled");
                let what = match &d.source {
                    MediaSource::Base64 { data, mime_type } => {
                        format!("{}, {}", html_string(mime_type), size_of_base64(data))
                    }
                    MediaSource::Url(url) => format!("at {}", link(url)),
                };
                let _ = write!(
                    out,
                    "<p class=\"media\">document <b>{}</b> ({what})</p>",
                    html_string(name)
                );
            }
        }
    }
}

/// A reply: its blocks, then its tokens, cost and stop reason; those
/// numbers are written by the page from the tree when `numbers_in_tree`
/// (the reply is an entry's message), here otherwise.
fn assistant(
    out: &mut String,
    a: &AssistantMessage,
    calls: &mut Calls,
    numbers_in_tree: bool,
    cost: ReplyCost,
) {
    for block in &a.content {
        match block {
            AssistantContent::Text(t) => text_block(out, t),
            AssistantContent::Image(img) => image(out, img),
            AssistantContent::Thinking(t) => {
                let _ = write!(
                    out,
                    "<details class=\"thinking\"><summary>thinking ({} characters)</summary><div class=\"md\">",
                    t.thinking.chars().count()
                );
                markdown_inner(out, &t.thinking);
                out.push_str("</div></details>");
            }
            AssistantContent::RedactedThinking(r) => {
                let _ = write!(
                    out,
                    "<p class=\"note\">redacted thinking ({} bytes, encrypted)</p>",
                    r.data.len()
                );
            }
            AssistantContent::ToolCall(call) => {
                let _ = write!(
                    out,
                    // The page writes the call's head (its tool's name and
                    // id) from these.
                    "<div class=\"call\" data-call=\"{}\" data-tool=\"{}\">",
                    html_string(&call.id),
                    html_string(&call.name),
                );
                let called = tool::call(out, &call.name, &call.arguments.to_value(), a.timestamp);
                calls.insert(call.id.clone(), called);
                out.push_str("<div class=\"slot\"></div></div>");
            }
            AssistantContent::ProviderBlock(p) => provider_block(out, p),
        }
    }
    if let Some(e) = &a.error_message {
        let _ = write!(
            out,
            "<p class=\"errmark\">{}: {}</p>",
            html_string(&format!("{:?}", a.stop_reason)),
            html_string(e)
        );
    }
    let u = &a.usage;
    let stop = html_string(&format!("{:?}", a.stop_reason));
    if numbers_in_tree {
        let priced = matches!(cost, ReplyCost::Estimated(_));
        let _ = write!(
            out,
            "<p class=\"usage\" data-stop=\"{stop}\"{}></p>",
            if priced { " data-priced" } else { "" }
        );
        return;
    }
    let cost = match cost {
        ReplyCost::Known(c) => format!("${c:.4}"),
        ReplyCost::Estimated(c) => format!("${c:.4} (priced from the price database)"),
        ReplyCost::Unknown => "<span class=\"unknown\">cost unknown</span>".to_owned(),
    };
    let _ = write!(
        out,
        "<p class=\"usage\">{} in, {} out, {} cache read, {} cache write; {cost}; stop: {stop}</p>",
        u.input, u.output, u.cache_read, u.cache_write,
    );
}

fn provider_block(out: &mut String, p: &ProviderBlock) {
    let _ = write!(
        out,
        "<details class=\"provider\" open><summary>{} <span class=\"note\">({})</span></summary>",
        html_string(&p.type_name()),
        html_string(&p.api)
    );
    if let Some(img) = p.image() {
        image(out, &img);
    }
    let value = p.block.to_value();
    folded_list(out, &value);
    let pretty = serde_json::to_string_pretty(&value).unwrap_or_default();
    out.push_str("<pre class=\"args\">");
    html(out, &pretty);
    out.push_str("</pre></details>");
}

/// The sources a provider block or a citation list names (`title`, `url`,
/// `cited_text` of each object found), as a list.
fn folded_list(out: &mut String, value: &serde_json::Value) {
    let mut items = Vec::new();
    collect_sources(value, &mut items, 0);
    if items.is_empty() {
        return;
    }
    out.push_str("<ul class=\"sources\">");
    for item in items.iter().take(50) {
        out.push_str("<li>");
        out.push_str(item);
        out.push_str("</li>");
    }
    out.push_str("</ul>");
}

fn collect_sources(value: &serde_json::Value, items: &mut Vec<String>, depth: usize) {
    if depth > 8 || items.len() >= 50 {
        return;
    }
    match value {
        serde_json::Value::Object(map) => {
            let text = |k: &str| map.get(k).and_then(serde_json::Value::as_str);
            if let Some(url) = text("url").or_else(|| text("uri")) {
                let mut item = link(url);
                if let Some(title) = text("title") {
                    item = format!("{} — {item}", html_string(title));
                }
                if let Some(cited) = text("cited_text") {
                    let _ = write!(item, "<blockquote>{}</blockquote>", html_string(cited));
                }
                items.push(item);
                return;
            }
            for v in map.values() {
                collect_sources(v, items, depth + 1);
            }
        }
        serde_json::Value::Array(list) => {
            for v in list {
                collect_sources(v, items, depth + 1);
            }
        }
        _ => {}
    }
}

/// A link to `url` when it is safe to follow, else its text.
fn link(url: &str) -> String {
    if safe_link(url) && !url.starts_with('#') {
        format!(
            "<a href=\"{0}\" rel=\"noopener noreferrer\">{0}</a>",
            html_string(url)
        )
    } else {
        format!("<code>{}</code>", html_string(url))
    }
}

fn text_block(out: &mut String, t: &TextContent) {
    markdown(out, &t.text);
    if let Some(citations) = &t.citations {
        out.push_str("<div class=\"citations\"><span class=\"note\">citations</span>");
        let value = citations.to_value();
        folded_list(out, &value);
        out.push_str("</div>");
    }
}

fn compaction(out: &mut String, c: &crate::custom::CompactionSummary) {
    let _ = write!(
        out,
        "<p class=\"note\">compaction: {} tokens before; kept from {}</p>",
        c.tokens_before,
        c.first_kept_id.as_ref().map_or_else(
            || "nothing".to_owned(),
            |f| format!(
                "<a href=\"#{}\">{}</a>",
                html_string(&fragment(f.as_str())),
                html_string(f.as_str())
            )
        )
    );
    summary(out, &c.summary);
}

/// A summary as Markdown, folded past 800 bytes.
fn summary(out: &mut String, text: &str) {
    if text.len() <= 800 {
        markdown(out, text);
        return;
    }
    let _ = write!(
        out,
        "<details class=\"summary\"><summary>summary ({} characters)</summary>",
        text.chars().count()
    );
    markdown(out, text);
    out.push_str("</details>");
}

fn custom(out: &mut String, line: &[u8], entry: &Entry, message: &AgentMessage) {
    if let Some(c) = entry.as_compaction() {
        compaction(out, c);
        return;
    }
    if let Some(b) = message.downcast_ref::<crate::custom::BranchSummary>() {
        out.push_str("<p class=\"note\">summary of an abandoned branch</p>");
        markdown(out, &b.summary);
        return;
    }
    let sent = crate::to_llm(std::slice::from_ref(message));
    if sent.is_empty() {
        out.push_str("<p class=\"note\">shown to people only; never sent to a model</p>");
    } else {
        out.push_str("<p class=\"note\">sent to the model as:</p>");
        for m in &sent {
            match m.as_ref() {
                Message::User(u) => user_blocks(out, &u.content),
                Message::System(s) => s.content.iter().for_each(|t| text_block(out, t)),
                Message::Assistant(a) => assistant(out, a, &mut Calls::new(), false, reply_cost(a)),
                Message::ToolResult(r) => {
                    for block in &r.content {
                        if let ToolResultContent::Text(t) = block {
                            out.push_str("<pre class=\"out\">");
                            html(out, &t.text);
                            out.push_str("</pre>");
                        }
                    }
                }
            }
        }
    }
    if sent.is_empty() {
        raw_line(out, line);
    }
}

/// A tool's result, drawn for its call (when it was made earlier in the
/// file): a shell's exit and time, a read's file highlighted, a search's
/// results; its details (which no model sees) folded.
fn tool_result(out: &mut String, r: &crate::ToolResultMessage, called: Option<&Called>) {
    // The page writes "result of TOOL" (`data-tool` on the entry).
    let mut head = String::new();
    if r.is_error {
        head.push_str("<span class=\"errmark\">error</span>");
    }
    if let Some(c) = called.filter(|c| c.kind == ToolKind::Shell) {
        let outcome = tool::shell_outcome(c, &r.text(), r.timestamp, r.is_error);
        if !outcome.is_empty() {
            let _ = write!(
                head,
                " <span class=\"outcome\">{}</span>",
                html_string(&outcome)
            );
        }
    }
    let _ = write!(out, "<div class=\"resulthead\">{head}</div>");
    for block in &r.content {
        match block {
            ToolResultContent::Text(t) => tool::result_text(out, called, &t.text),
            ToolResultContent::Image(img) => image(out, img),
        }
    }
    if let Some(details) = &r.details {
        tool::details(out, details);
    }
}

/// A line's gist: the first short texts of its usual keys (`type`,
/// `subtype`, `hookEvent`, `content`…), at most 160 characters.
fn gist_of(value: &serde_json::Value) -> String {
    const KEYS: &[&str] = &[
        "type",
        "subtype",
        "hookEvent",
        "hookName",
        "level",
        "name",
        "status",
        "content",
        "text",
        "message",
        "command",
        "summary",
    ];
    let mut parts: Vec<String> = Vec::new();
    let mut look = |v: &serde_json::Value| {
        for key in KEYS {
            if let Some(text) = v.get(*key).and_then(serde_json::Value::as_str) {
                let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
                if !one.is_empty() && !parts.contains(&one) {
                    parts.push(one);
                }
            }
        }
    };
    look(value);
    for inner in ["data", "payload", "message", "toolUseResult"] {
        if let Some(v) = value.get(inner).filter(|v| v.is_object()) {
            look(v);
            if let Some(v) = v.get("data").filter(|v| v.is_object()) {
                look(v);
            }
        }
    }
    let joined = parts.join(" · ");
    let mut short: String = joined.chars().take(160).collect();
    if joined.chars().count() > 160 {
        short.push('…');
    }
    html_string(&short)
}

/// The entry's line as written, folded.
fn raw_line(out: &mut String, line: &[u8]) {
    out.push_str("<details><summary>its line</summary><pre class=\"raw\"><code>");
    text(out, &String::from_utf8_lossy(line));
    out.push_str("</code></pre></details>");
}

/// An image: inline when its bytes are an image format the runtime knows
/// (the sniffed type is written, never the declared one), else named.
fn image(out: &mut String, img: &ImageContent) {
    match &img.source {
        MediaSource::Base64 { data, mime_type } => match sniff_image(data) {
            Some(format) => {
                let _ = write!(
                    out,
                    "<img class=\"inline\" alt=\"image\" src=\"data:{};base64,{}\">",
                    format.mime_type(),
                    data
                );
                if !mime_type.eq_ignore_ascii_case(format.mime_type()) {
                    let _ = write!(
                        out,
                        "<p class=\"note\">declared as {}</p>",
                        html_string(mime_type)
                    );
                }
            }
            None => {
                let _ = write!(
                    out,
                    "<p class=\"media\">image not shown: declared {}, {}, its bytes are no known image format</p>",
                    html_string(mime_type),
                    size_of_base64(data)
                );
            }
        },
        MediaSource::Url(url) => {
            let _ = write!(out, "<p class=\"media\">image at {}</p>", link(url));
        }
    }
}

/// The image format of base64 `data`, when all of it is base64 and its first
/// bytes are an image format.
fn sniff_image(data: &str) -> Option<MediaFormat> {
    if data.is_empty()
        || !data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
    {
        return None;
    }
    let head = &data[..data.len().min(64) / 4 * 4];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(head)
        .ok()?;
    let format = MediaFormat::sniff(&bytes)?;
    format.mime_type().starts_with("image/").then_some(format)
}

fn size_of_base64(data: &str) -> String {
    let len = data.trim_end_matches('=').len() * 3 / 4;
    match len {
        0..=1023 => format!("{len} bytes"),
        1024..=1_048_575 => format!("{:.1} kB", len as f64 / 1024.0),
        _ => format!("{:.1} MB", len as f64 / 1_048_576.0),
    }
}

fn markdown(out: &mut String, text: &str) {
    out.push_str("<div class=\"md\">");
    markdown_inner(out, text);
    out.push_str("</div>");
}

/// Markdown as HTML: raw HTML becomes text, links are kept only when safe,
/// and images become links (the page fetches nothing).
fn markdown_inner(out: &mut String, text: &str) {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(text, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        })
        | Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: if safe_link(&dest_url) {
                dest_url
            } else {
                CowStr::Borrowed("#")
            },
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    pulldown_cmark::html::push_html(out, events);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(text: &str) -> String {
        let mut out = String::new();
        markdown_inner(&mut out, text);
        out
    }

    #[test]
    fn markdown_shows_raw_html_as_text() {
        let out = md("hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn markdown_keeps_only_safe_links_and_fetches_no_image() {
        let out = md("[a](javascript:alert(1)) [b](https://x.test/) ![c](https://x.test/i.png)");
        assert!(!out.contains("javascript:"), "{out}");
        assert!(out.contains("href=\"https://x.test/\""), "{out}");
        assert!(!out.contains("<img"), "{out}");
    }

    #[test]
    fn an_image_is_inlined_only_when_its_bytes_are_one() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\n0000IHDR");
        let mut out = String::new();
        image(
            &mut out,
            &ImageContent {
                source: MediaSource::Base64 {
                    data: png.clone(),
                    mime_type: "image/png\" onerror=\"alert(1)".into(),
                },
            },
        );
        assert!(out.contains("src=\"data:image/png;base64,"), "{out}");
        assert!(!out.contains("onerror=\""), "{out}");
        let html_bytes =
            base64::engine::general_purpose::STANDARD.encode(b"<script>alert(1)</script>");
        let mut out = String::new();
        image(
            &mut out,
            &ImageContent {
                source: MediaSource::Base64 {
                    data: html_bytes,
                    mime_type: "image/png".into(),
                },
            },
        );
        assert!(!out.contains("<img"), "{out}");
    }
}
