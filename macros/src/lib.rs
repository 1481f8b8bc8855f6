//! Implementation detail of [agentmsg](https://docs.rs/agentmsg): the
//! `#[derive(AgentMessage)]` macro. Depend on `agentmsg`, not on this crate.

use proc_macro::TokenStream;

/// Derives `agentmsg::CustomMessage`; see the `agentmsg` crate.
#[proc_macro_derive(AgentMessage, attributes(agent_message))]
pub fn derive_agent_message(input: TokenStream) -> TokenStream {
    let _ = input;
    TokenStream::new()
}
