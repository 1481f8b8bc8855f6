//! The rules across attributes and fields; what `expand` needs, checked.

use syn::LitStr;

use crate::ast::{Container, Field};
use crate::attr::{Role, ToLlm};
use crate::ctxt::Ctxt;

/// Keys of a transcript line that a custom type's fields may not use.
const RESERVED_KEYS: [&str; 5] = ["role", "id", "turnId", "parentId", "v"];
/// Kinds that belong to the LLM messages.
const RESERVED_KINDS: [&str; 4] = ["system", "user", "assistant", "toolResult"];
/// Kinds that agentmsg defines itself. Another type claiming one would make both
/// undecodable (a duplicate kind), so only the runtime (`crate = crate`) may.
const BUILTIN_KINDS: [&str; 6] = [
    "compactionSummary",
    "branchSummary",
    "extension",
    "bashExecution",
    "custom",
    "hookMessage",
];

/// The projection, checked.
pub enum Projection<'a> {
    /// UI-only.
    None,
    /// The template with its placeholders' fields (each once).
    Template {
        role: Role,
        template: &'a LitStr,
        fields: Vec<&'a Field<'a>>,
    },
    /// The content fields, in order.
    Content {
        role: Role,
        fields: Vec<&'a Field<'a>>,
    },
    /// `with(path)`.
    With { path: &'a syn::Path },
}

/// What `expand` writes, all checked.
pub struct Plan<'a> {
    pub kind: &'a LitStr,
    pub aliases: Vec<&'a LitStr>,
    pub version: u32,
    pub migrate: Option<&'a syn::Path>,
    pub projection: Projection<'a>,
    /// The field marked `#[agent_message(timestamp)]`.
    pub timestamp: Option<&'a Field<'a>>,
}

pub fn check<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Result<Plan<'a>, ()> {
    let generics = &cont.original.generics;
    if !generics.params.is_empty() {
        cx.error_spanned_by(
            generics,
            "#[derive(AgentMessage)] does not support generic types: each kind decodes into one concrete type",
        );
    }

    let kind = match &cont.attrs.kind {
        Some(kind) => {
            check_kind(cx, kind, "kind", builtin(cont));
            Some(kind)
        }
        None if cont.attrs.kind_written => None,
        None => {
            cx.error_spanned_by(
                cont.ident,
                format!(
                    "missing #[agent_message(kind = \"…\")] on `{}`: the kind is what a transcript stores, so it is never derived from the type's name",
                    cont.ident
                ),
            );
            None
        }
    };

    let mut aliases = Vec::new();
    for alias in cont.attrs.aliases.iter().flatten() {
        check_kind(cx, alias, "alias", builtin(cont));
        if kind.is_some_and(|kind| kind.value() == alias.value()) {
            cx.error_spanned_by(alias, format!("alias `{}` repeats the kind", alias.value()));
        } else if aliases.iter().any(|a: &&LitStr| a.value() == alias.value()) {
            cx.error_spanned_by(alias, format!("duplicate alias `{}`", alias.value()));
        } else {
            aliases.push(alias);
        }
    }

    let version = match &cont.attrs.version {
        Some((lit, 0)) => {
            cx.error_spanned_by(lit, "versions start at 1");
            1
        }
        Some((_, version)) => *version,
        None => 1,
    };
    if let Some(migrate) = &cont.attrs.migrate {
        if version <= 1 {
            cx.error_spanned_by(
                migrate,
                "`migrate` needs `version` above 1: it upgrades stored objects whose `v` is below `version` (no `v` means 1)",
            );
        }
    }

    let mut timestamp: Option<&Field> = None;
    for field in &cont.fields {
        check_keys(cx, cont, field);
        if let Some(ident) = &field.attrs.timestamp {
            if timestamp.is_some() {
                cx.error_spanned_by(
                    ident,
                    "a second #[agent_message(timestamp)] field: a message has one time",
                );
            } else {
                timestamp = Some(field);
            }
        }
    }

    let projection = projection(cx, cont);
    // A missing or malformed kind was reported above.
    let Some(kind) = kind else {
        return Err(());
    };
    Ok(Plan {
        kind,
        aliases,
        version,
        migrate: cont.attrs.migrate.as_ref(),
        projection,
        timestamp,
    })
}

/// Whether the type is one of the runtime's own (`crate = crate` names the crate
/// being compiled, which only the runtime can do and still compile).
fn builtin(cont: &Container) -> bool {
    cont.attrs
        .krate
        .as_ref()
        .is_some_and(|path| path.leading_colon.is_none() && path.is_ident("crate"))
}

fn check_kind(cx: &Ctxt, lit: &LitStr, what: &str, builtin: bool) {
    let value = lit.value();
    let mut chars = value.chars();
    let message = match chars.next() {
        None => Some(format!(
            "empty {what}: write #[agent_message({what} = \"notice\")]"
        )),
        Some(first) if !first.is_ascii_alphabetic() => Some(format!(
            "malformed {what} `{value}`: it must start with an ASCII letter"
        )),
        Some(_) => chars
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/')))
            .map(|c| {
                format!(
                    "malformed {what} `{value}`: `{c}` is not allowed; use ASCII letters, digits, `_`, `-`, `.`, `:` and `/`"
                )
            }),
    };
    let message = message.or_else(|| {
        RESERVED_KINDS.contains(&value.as_str()).then(|| {
            format!(
                "`{value}` is a reserved kind (system, user, assistant and toolResult are the LLM messages); choose another {what}"
            )
        })
    });
    let message = message.or_else(|| {
        (!builtin && BUILTIN_KINDS.contains(&value.as_str())).then(|| {
            format!(
                "`{value}` is a built-in kind of agentmsg (compactionSummary, branchSummary, extension, and pi's bashExecution and custom, read also as hookMessage, are reserved): claiming it too would leave its lines to neither type; choose another {what}"
            )
        })
    });
    if let Some(message) = message {
        cx.error_spanned_by(lit, message);
    }
}

fn check_keys(cx: &Ctxt, cont: &Container, field: &Field) {
    if field.attrs.flatten {
        return;
    }
    // `timestamp` is the envelope's key for the message's time, unless the
    // type keeps its time in this field.
    let marked = field.attrs.timestamp.is_some();
    let reserved = |key: &str| RESERVED_KEYS.contains(&key) || (key == "timestamp" && !marked);
    let explain = |key: &str| {
        if key == "timestamp" {
            "the line's timestamp is the message's time, in Unix milliseconds; mark the field #[agent_message(timestamp)] if it is that time (u64 or Option<u64>)"
        } else {
            "role, id, turnId, parentId and v are the keys of the transcript line itself"
        }
    };
    for lit in field.attrs.renames.iter().chain(&field.attrs.aliases) {
        let key = lit.value();
        if reserved(&key) {
            cx.error_spanned_by(
                lit,
                format!(
                    "field `{}` uses the reserved key `{key}` ({}); choose another name",
                    field.name(),
                    explain(&key)
                ),
            );
        }
    }
    if !field.attrs.renames.is_empty() {
        return;
    }
    let name = field.name();
    let mut keys = vec![(name.clone(), None)];
    for rename_all in &cont.attrs.rename_all {
        if let Some(rule) = rename_all.rule {
            keys.push((rule.apply_to_field(&name), Some(&rename_all.lit)));
        }
    }
    if !cont.attrs.rename_all.is_empty() {
        keys.remove(0);
    }
    for (key, rule) in keys {
        if reserved(&key) {
            let how = match rule {
                Some(rule) => format!(" (after rename_all = \"{}\")", rule.value()),
                None => String::new(),
            };
            cx.error_spanned_by(
                field.ident,
                format!(
                    "field `{name}` uses the reserved key `{key}`{how} ({}); rename it with #[serde(rename = \"…\")]",
                    explain(&key)
                ),
            );
            return;
        }
    }
}

fn projection<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Projection<'a> {
    let content: Vec<&Field> = cont
        .fields
        .iter()
        .filter(|f| f.attrs.content.is_some())
        .collect();
    let misplaced = |why: &str| {
        for field in &content {
            if let Some(ident) = &field.attrs.content {
                cx.error_spanned_by(
                    ident,
                    format!("#[agent_message(content)] needs `to_llm = user`, `to_llm = assistant` or `to_llm = system` on the struct{why}"),
                );
            }
        }
    };
    match &cont.attrs.to_llm {
        None => {
            misplaced("; without `to_llm` the message is UI-only");
            Projection::None
        }
        Some(ToLlm::With { path }) => {
            misplaced("; `with(path)` projects the message itself");
            Projection::With { path }
        }
        Some(ToLlm::Template { role, template }) => {
            misplaced("; a template projects the message itself");
            let fields = placeholders(cx, cont, template);
            Projection::Template {
                role: role.role,
                template,
                fields,
            }
        }
        Some(ToLlm::Content { role }) => {
            if content.is_empty() {
                cx.error_spanned_by(
                    &role.ident,
                    format!(
                        "`to_llm = {}` needs at least one #[agent_message(content)] field; or write a template: `to_llm = {}(\"…{{field}}…\")`",
                        role.role.name(),
                        role.role.name()
                    ),
                );
            }
            Projection::Content {
                role: role.role,
                fields: content,
            }
        }
    }
}

/// The fields a template names, each once, in order of first use.
fn placeholders<'a>(cx: &Ctxt, cont: &'a Container<'a>, template: &LitStr) -> Vec<&'a Field<'a>> {
    let text = template.value();
    let mut names: Vec<String> = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
            }
            '}' => {
                cx.error_spanned_by(
                    template,
                    "unmatched `}` in template; write `}}` for a literal brace",
                );
                return Vec::new();
            }
            '{' => {
                let mut name = String::new();
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '}' {
                        closed = true;
                        break;
                    }
                    name.push(c);
                }
                if !closed {
                    cx.error_spanned_by(
                        template,
                        "unclosed `{` in template; write `{{` for a literal brace",
                    );
                    return Vec::new();
                }
                let is_ident = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !is_ident {
                    cx.error_spanned_by(
                        template,
                        format!("template placeholder `{{{name}}}` must name a field: `{{field}}`, without format options"),
                    );
                    continue;
                }
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            _ => {}
        }
    }
    let mut fields = Vec::new();
    for name in names {
        match cont.fields.iter().find(|f| f.name() == name) {
            Some(field) => fields.push(field),
            None => {
                let known: Vec<String> = cont.fields.iter().map(Field::name).collect();
                cx.error_spanned_by(
                    template,
                    format!(
                        "template placeholder `{{{name}}}` names no field of `{}`; its fields are: {}",
                        cont.ident,
                        known.join(", ")
                    ),
                );
            }
        }
    }
    fields
}
