//! Every `#[agent_message(..)]` attribute parsed once into typed values, and the
//! parts of `#[serde(..)]` that decide a field's keys.

use proc_macro2::TokenTree;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{Attribute, Error, Ident, LitInt, LitStr, Path, Token};

use crate::case::RenameRule;
use crate::ctxt::{Attr, Ctxt};

const AGENT_MESSAGE: &str = "agent_message";
const SERDE: &str = "serde";

const KIND: &str = "kind";
const ALIASES: &str = "aliases";
const VERSION: &str = "version";
const MIGRATE: &str = "migrate";
const TO_LLM: &str = "to_llm";
const CRATE: &str = "crate";
const CONTENT: &str = "content";
const TIMESTAMP: &str = "timestamp";
const WITH: &str = "with";

/// The role a projection produces.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    System,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }
}

/// A role keyword as written, kept for its span.
pub struct RoleKw {
    pub role: Role,
    pub ident: Ident,
}

/// The `to_llm = …` projection.
pub enum ToLlm {
    /// `to_llm = user("[Request from {from}]: {request}")`
    Template { role: RoleKw, template: LitStr },
    /// `to_llm = user`, with `#[agent_message(content)]` fields
    Content { role: RoleKw },
    /// `to_llm = with(Approval::render)`
    With { path: Path },
}

/// The container attributes.
pub struct Container {
    pub kind: Option<LitStr>,
    /// A `kind` key was written, even if its value did not parse (so a missing
    /// kind is not reported on top of the malformed one).
    pub kind_written: bool,
    pub aliases: Option<Vec<LitStr>>,
    pub version: Option<(LitInt, u32)>,
    pub migrate: Option<Path>,
    pub to_llm: Option<ToLlm>,
    pub krate: Option<Path>,
    /// `#[serde(rename_all = "…")]`, for each direction.
    pub rename_all: Vec<RenameAll>,
}

/// A `#[serde(rename_all = "…")]` rule as written.
pub struct RenameAll {
    pub lit: LitStr,
    /// `None` for a rule serde does not know (serde reports it).
    pub rule: Option<RenameRule>,
}

/// The field attributes.
pub struct Field {
    /// `#[agent_message(content)]`
    pub content: Option<Ident>,
    /// `#[agent_message(timestamp)]`
    pub timestamp: Option<Ident>,
    /// `#[serde(rename = "…")]` or `rename(serialize = "…", deserialize = "…")`.
    pub renames: Vec<LitStr>,
    /// `#[serde(alias = "…")]`.
    pub aliases: Vec<LitStr>,
    /// `#[serde(flatten)]`
    pub flatten: bool,
}

fn unknown(path: &Path, place: &str) -> Error {
    let name = path
        .get_ident()
        .map_or_else(|| quote::quote!(#path).to_string(), Ident::to_string);
    Error::new_spanned(
        path,
        format!("unknown agent_message attribute `{name}`{place}"),
    )
}

pub fn container(cx: &Ctxt, attrs: &[Attribute]) -> Container {
    let mut kind = Attr::none(cx, KIND);
    let mut kind_written = false;
    let mut aliases = Attr::none(cx, ALIASES);
    let mut version = Attr::none(cx, VERSION);
    let mut migrate = Attr::none(cx, MIGRATE);
    let mut to_llm = Attr::none(cx, TO_LLM);
    let mut krate = Attr::none(cx, CRATE);
    let mut rename_all = Vec::new();
    for attr in attrs {
        if attr.path().is_ident(SERDE) {
            serde_container(attr, &mut rename_all);
            continue;
        }
        if !attr.path().is_ident(AGENT_MESSAGE) {
            continue;
        }
        let parsed = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            // #[agent_message(kind = "notice")]
            if path.is_ident(KIND) {
                kind_written = true;
                let lit: LitStr = meta.value()?.parse().map_err(|e: Error| {
                    Error::new(
                        e.span(),
                        "the kind is a string: #[agent_message(kind = \"notice\")]",
                    )
                })?;
                kind.set(path, lit);
            // #[agent_message(aliases = ["oldNotice", "note"])]
            } else if path.is_ident(ALIASES) {
                let input = meta.value()?;
                let content;
                syn::bracketed!(content in input);
                let list = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
                aliases.set(path, list.into_iter().collect());
            // #[agent_message(version = 2)]
            } else if path.is_ident(VERSION) {
                let lit: LitInt = meta.value()?.parse()?;
                let value = lit.base10_parse::<u32>()?;
                version.set(path, (lit, value));
            // #[agent_message(migrate = approval_from_v1)]
            } else if path.is_ident(MIGRATE) {
                migrate.set(path, meta.value()?.parse()?);
            // #[agent_message(to_llm = user("…{field}…"))]
            // #[agent_message(to_llm = user)]
            // #[agent_message(to_llm = with(Self::render))]
            } else if path.is_ident(TO_LLM) {
                to_llm.set(path, parse_to_llm(meta.value()?)?);
            // #[agent_message(crate = my_agentmsg)]
            } else if path.is_ident(CRATE) {
                krate.set(path, meta.value()?.call(Path::parse_mod_style)?);
            } else if path.is_ident(CONTENT) {
                return Err(Error::new_spanned(
                    path,
                    "#[agent_message(content)] goes on a field, not on the struct",
                ));
            } else {
                return Err(unknown(
                    path,
                    "; expected `kind`, `aliases`, `version`, `migrate`, `to_llm` or `crate`",
                ));
            }
            Ok(())
        });
        if let Err(error) = parsed {
            cx.syn_error(error);
        }
    }
    Container {
        kind: kind.get(),
        kind_written,
        aliases: aliases.get(),
        version: version.get(),
        migrate: migrate.get(),
        to_llm: to_llm.get(),
        krate: krate.get(),
        rename_all,
    }
}

fn parse_to_llm(input: ParseStream) -> syn::Result<ToLlm> {
    let ident: Ident = input.call(syn::ext::IdentExt::parse_any)?;
    if ident == WITH {
        let content;
        syn::parenthesized!(content in input);
        let path: Path = content.parse()?;
        if !content.is_empty() {
            return Err(content.error("expected one path: `to_llm = with(path::to::function)`"));
        }
        return Ok(ToLlm::With { path });
    }
    let role = match ident.to_string().as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => {
            return Err(Error::new(
                ident.span(),
                format!(
                    "unknown projection `{other}`; expected `user`, `assistant`, `system` (each with an optional \"template\") or `with(path)`"
                ),
            ))
        }
    };
    let role = RoleKw { role, ident };
    if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let template: LitStr = content.parse()?;
        if !content.is_empty() {
            return Err(content.error("expected one template string"));
        }
        Ok(ToLlm::Template { role, template })
    } else {
        Ok(ToLlm::Content { role })
    }
}

pub fn field(cx: &Ctxt, attrs: &[Attribute]) -> Field {
    let mut content = Attr::none(cx, CONTENT);
    let mut timestamp = Attr::none(cx, TIMESTAMP);
    let mut serde = Serde::default();
    for attr in attrs {
        if attr.path().is_ident(SERDE) {
            serde_field(attr, &mut serde);
            continue;
        }
        if !attr.path().is_ident(AGENT_MESSAGE) {
            continue;
        }
        let parsed = attr.parse_nested_meta(|meta| {
            // #[agent_message(content)]
            if let Some(ident) = meta.path.get_ident().filter(|ident| *ident == CONTENT) {
                content.set(&meta.path, ident.clone());
                Ok(())
            // #[agent_message(timestamp)]
            } else if let Some(ident) = meta.path.get_ident().filter(|ident| *ident == TIMESTAMP) {
                timestamp.set(&meta.path, ident.clone());
                Ok(())
            } else if [KIND, ALIASES, VERSION, MIGRATE, TO_LLM, CRATE]
                .iter()
                .any(|name| meta.path.is_ident(name))
            {
                skip_value(meta.input)?;
                Err(Error::new_spanned(
                    &meta.path,
                    "this agent_message attribute goes on the struct, not on a field",
                ))
            } else {
                Err(unknown(
                    &meta.path,
                    " on a field; expected `content` or `timestamp`",
                ))
            }
        });
        if let Err(error) = parsed {
            cx.syn_error(error);
        }
    }
    Field {
        content: content.get(),
        timestamp: timestamp.get(),
        renames: serde.renames,
        aliases: serde.aliases,
        flatten: serde.flatten,
    }
}

/// `rename_all` of `#[serde(..)]`; anything malformed is left to serde to report.
fn serde_container(attr: &Attribute, rename_all: &mut Vec<RenameAll>) {
    let _ = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("rename_all") {
            let mut lits = Vec::new();
            let parsed = directional(&meta, &mut lits);
            rename_all.extend(lits.into_iter().map(|lit| RenameAll {
                rule: RenameRule::from_name(&lit.value()),
                lit,
            }));
            parsed
        } else {
            skip_value(meta.input)
        }
    });
}

/// What `#[serde(..)]` on a field says about its keys.
#[derive(Default)]
struct Serde {
    renames: Vec<LitStr>,
    aliases: Vec<LitStr>,
    flatten: bool,
}

/// The keys of `#[serde(..)]` on a field; anything malformed is left to serde.
fn serde_field(attr: &Attribute, out: &mut Serde) {
    let _ = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("rename") {
            directional(&meta, &mut out.renames)
        } else if meta.path.is_ident("alias") {
            out.aliases.push(meta.value()?.parse()?);
            Ok(())
        } else if meta.path.is_ident("flatten") {
            out.flatten = true;
            Ok(())
        } else {
            skip_value(meta.input)
        }
    });
}

/// `name = "x"` or `name(serialize = "x", deserialize = "y")`.
fn directional(meta: &syn::meta::ParseNestedMeta, into: &mut Vec<LitStr>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        into.push(meta.value()?.parse()?);
        return Ok(());
    }
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") || inner.path.is_ident("deserialize") {
            into.push(inner.value()?.parse()?);
            Ok(())
        } else {
            skip_value(inner.input)
        }
    })
}

/// Skips `= value` or `(..)` up to the next comma.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    while !input.is_empty() && !input.peek(Token![,]) {
        input.parse::<TokenTree>()?;
    }
    Ok(())
}
