//! The line decoder: one transcript line, straight into its type.

use std::borrow::Cow;

use serde::de::IgnoredAny;

use super::agent_message::AgentMessage;
use super::codec::envelope::{self, llm_role_first, role_of, role_token, LineForm};
use super::custom::Registry;
use super::failure::{DecodeError, UnknownReason};
use super::unknown::UnknownMessage;
use crate::Role;

/// How a reader treats a line it cannot decode into its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecodeMode {
    /// Keep it as [`AgentMessage::Unknown`] (the default).
    #[default]
    Lenient,
    /// Report it as an error.
    Strict,
}

/// Decodes one transcript line (a flat JSON object, without its newline).
///
/// The kind is read from the `{"role":"` prefix when the role comes first (as the
/// writer puts it), otherwise found by a scan of the top-level keys that does not
/// allocate; the line is then decoded once, straight into its type. In lenient
/// mode an unregistered kind, a newer version or a body that fails to decode is
/// kept as [`AgentMessage::Unknown`] with the exact bytes; in strict mode it is
/// [`DecodeError::Rejected`].
///
/// A line that does not decode only because a string holds a lone UTF-16
/// surrogate escape (`"cut \ud83d"`, half of an emoji cut by a tool) is
/// decoded with U+FFFD in its place; [`replace_lone_surrogates`] tells a
/// reader that wants to say so.
///
/// [`replace_lone_surrogates`]: crate::transcript::replace_lone_surrogates
pub fn decode_line(
    line: &str,
    registry: &Registry,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    let decoded = decode_exact(line, registry, mode);
    let failed = match &decoded {
        Err(_) => true,
        Ok(AgentMessage::Unknown(kept)) => matches!(
            kept.reason(),
            UnknownReason::Invalid { .. } | UnknownReason::Malformed(_)
        ),
        Ok(_) => false,
    };
    if failed && crate::json::surrogates::may_have_surrogates(line) {
        if let Some(fixed) = crate::json::surrogates::replace_lone_surrogates(line) {
            if let Ok(message) = decode_exact(&fixed, registry, mode) {
                if !message.is_unknown() {
                    return Ok(message);
                }
            }
        }
    }
    decoded
}

impl AgentMessage {
    /// Decodes one line with the global registry, leniently (see [`decode_line`]).
    pub fn from_line(line: &str) -> Result<Self, DecodeError> {
        decode_line(line, Registry::global(), DecodeMode::Lenient)
    }
}

fn decode_exact(
    line: &str,
    registry: &Registry,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    // Most lines are LLM messages written by us, role first.
    if let Some(role) = llm_role_first(line) {
        return decode_llm(line, role, mode);
    }
    let kind = match role_of(line) {
        Some(Ok(kind)) => kind,
        Some(Err(())) => {
            serde_json::from_str::<IgnoredAny>(line)
                .map_err(|e| DecodeError::NotJson(e.to_string()))?;
            // A string whose escapes are not Unicode (a lone surrogate) is still
            // a string: say what is wrong with it.
            if let Some(role) = role_token(line).filter(|v| v.starts_with('"')) {
                if let Err(e) = serde_json::from_str::<String>(role) {
                    return Err(DecodeError::RoleNotText(e.to_string()));
                }
            }
            return Err(DecodeError::RoleNotString);
        }
        None => {
            serde_json::from_str::<IgnoredAny>(line)
                .map_err(|e| DecodeError::NotJson(e.to_string()))?;
            return Err(if line.trim_start().starts_with('{') {
                DecodeError::MissingRole
            } else {
                DecodeError::NotJson("expected a JSON object".to_owned())
            });
        }
    };
    if let Some(role) = Role::from_name(&kind) {
        return decode_llm(line, role, mode);
    }
    let reason = match registry.get(&kind) {
        Some(registration) => match registration.decode_line(line) {
            Ok(entry) => return Ok(AgentMessage::Custom(entry)),
            Err(reason) => reason,
        },
        None => unregistered_reason(registry, &kind),
    };
    not_decoded(line, kind, reason, mode)
}

fn invalid(error: &serde_json::Error) -> UnknownReason {
    UnknownReason::Invalid {
        error: error.to_string(),
    }
}

/// A line of `kind` that was not decoded for `reason`: kept (lenient) or an
/// error (strict).
fn not_decoded(
    line: &str,
    kind: Cow<'_, str>,
    reason: UnknownReason,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    match (mode, &reason) {
        (DecodeMode::Strict, _) => Err(DecodeError::Rejected {
            kind: kind.into_owned(),
            reason,
        }),
        // No decoder ran: keep the bytes at the cost of a copy, parse on first use.
        (
            DecodeMode::Lenient,
            UnknownReason::UnknownKind
            | UnknownReason::AmbiguousKind { .. }
            | UnknownReason::NewerVersion { .. },
        ) => UnknownMessage::keep_unparsed(line, kind, reason).map(AgentMessage::Unknown),
        // A decoder ran and failed: tell a syntax error from a body of the wrong shape.
        (DecodeMode::Lenient, _) => {
            let kind = kind.into_owned();
            UnknownMessage::keep(line.to_owned(), kind, reason).map(AgentMessage::Unknown)
        }
    }
}

/// Decodes an LLM line whose role is already known, straight into its type; a
/// line that does not decode is kept or rejected as `mode` says.
fn decode_llm(line: &str, role: Role, mode: DecodeMode) -> Result<AgentMessage, DecodeError> {
    match role {
        Role::User => decode_line_form::<envelope::UserLine>(line, mode),
        Role::Assistant => decode_line_form::<envelope::AssistantLine>(line, mode),
        Role::ToolResult => decode_line_form::<envelope::ToolResultLine>(line, mode),
        Role::System => decode_line_form::<envelope::SystemLine>(line, mode),
    }
}

/// Decodes a line in its role's wire form (the message's fields and the
/// envelope keys, in one derived decoder; see the line forms in `envelope`).
/// Not inlined, one function per role, returning `decode_line`'s own result
/// with the error paths out of line: `benches/README.md` says why.
#[inline(never)]
fn decode_line_form<'de, L: LineForm<'de>>(
    line: &'de str,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    match serde_json::from_str::<L>(line) {
        Ok(form) => match form.into_message() {
            Ok(message) => Ok(AgentMessage::Llm(message)),
            Err(v) => {
                let error = crate::message::unversioned(v, L::ROLE.as_str());
                llm_not_decoded(line, L::ROLE, &error, mode)
            }
        },
        Err(e) => llm_not_decoded(line, L::ROLE, &e, mode),
    }
}

/// An LLM line that did not decode: kept or rejected as `mode` says.
#[cold]
#[inline(never)]
fn llm_not_decoded(
    line: &str,
    role: Role,
    error: &serde_json::Error,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    not_decoded(line, Cow::Borrowed(role.as_str()), invalid(error), mode)
}

pub(crate) fn unregistered_reason(registry: &Registry, kind: &str) -> UnknownReason {
    match registry.duplicate(kind) {
        Some(dup) => UnknownReason::AmbiguousKind {
            first: dup.first,
            second: dup.second,
        },
        None => UnknownReason::UnknownKind,
    }
}
