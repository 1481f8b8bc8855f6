//! `any_provider`: one name for "a provider feature is on", the condition on
//! which the runtime builds `providers`, `http` and `agent` (its own
//! `build.rs`), for this crate's re-exports of them (a crate's cfgs read only
//! its own features, which forward to the runtime's).

fn main() {
    cfg_aliases::cfg_aliases! {
        any_provider: {
            any(
                feature = "openai-chat",
                feature = "openai-responses",
                feature = "anthropic",
                feature = "gemini",
                feature = "bedrock"
            )
        },
    }
}
