//! Implementation detail of [agentmsg](https://docs.rs/agentmsg): the
//! `#[derive(AgentMessage)]` macro. Depend on `agentmsg`, not on this crate.

mod ast;
mod attr;
mod expand;
mod fallback;
mod valid;

use proc_macro::TokenStream;

/// Derives `agentmsg::CustomMessage` and registers the kind; see the `agentmsg`
/// crate for the attributes.
#[proc_macro_derive(AgentMessage, attributes(agent_message))]
pub fn derive_agent_message(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).into()
}
