//! Implementation detail of [agentmsg](https://docs.rs/agentmsg): the
//! `#[derive(AgentMessage)]` macro. Depend on `agentmsg`, not on this crate.

mod ast;
mod attr;
mod case;
mod ctxt;
mod expand;
mod fallback;
mod valid;

use proc_macro::TokenStream;

/// Makes a struct an application-defined message kind: implements
/// `agentmsg::CustomMessage` and registers the kind at link time, so persisted
/// transcripts decode back into the struct.
///
/// The struct has named fields and also derives `Debug`, `Clone`, `PartialEq`,
/// `serde::Serialize` and `serde::Deserialize`. It is written as one flat object
/// whose `"role"` is the kind: `{"role":"notice","text":"session resumed"}`.
///
/// On the struct, `#[agent_message(..)]` takes:
/// - `kind = "notice"` (required): the stable discriminator; never derived from
///   the type's name, so renaming the struct does not change stored data. It
///   starts with an ASCII letter; `system`, `user`, `assistant` and `toolResult`
///   are reserved.
/// - `aliases = ["oldNotice"]`: older kinds that also decode into the struct.
/// - `version = 2` and `migrate = path`: the schema version, written as `"v"` when
///   above 1; `path` is a `fn(u32, serde_json::Value) -> Result<serde_json::Value, E>`
///   (`E: Display`) run on stored objects whose `v` is below `version` (no `v`
///   means 1). Objects with a higher `v` are kept undecoded.
/// - `to_llm = …`, the projection to the model; without it the message is UI-only:
///   - `user("[Request from {from}]: {request}")`, `assistant("…")`,
///     `system("…")`: one text message; each `{field}` names a `Display` field,
///     `{{` and `}}` are literal braces;
///   - `user`, `assistant` or `system` alone: one message whose content is the
///     fields marked `#[agent_message(content)]`, in order; each must be a block
///     the role allows (an `AudioContent` is not allowed in an assistant message);
///   - `with(path)`: a `fn(&Self) -> Vec<Message>`.
/// - `crate = path`: where the `agentmsg` crate is, when it is renamed.
///
/// Fields may not use the keys of the line itself (`role`, `id`, `turnId`, `v`),
/// whether by name, `#[serde(rename)]`, `alias` or `rename_all`.
///
/// ```text
/// #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
/// #[agent_message(kind = "screenshot", to_llm = user)]
/// struct Screenshot {
///     #[agent_message(content)] caption: TextContent,
///     #[agent_message(content)] image: ImageContent,
///     path: String,
/// }
/// ```
#[proc_macro_derive(AgentMessage, attributes(agent_message))]
pub fn derive_agent_message(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).into()
}

/// The runtime's module for generated code, named after this crate's version
/// (`__private_0_1_0`), as serde and thiserror version theirs: a derive from
/// one release used with the runtime of another fails to compile at once, on
/// a missing module, instead of on whatever changed inside it. The runtime and
/// this crate are released together, with one version.
fn private_module() -> proc_macro2::Ident {
    let version = env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_");
    quote::format_ident!("__private_{}", version)
}
