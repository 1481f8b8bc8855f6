//! `any_provider`: one name for "a provider feature is on", the condition of
//! the `providers` module (and with it of the HTTP client, the agent loop and
//! the compaction's summariser), so the list of provider features is written
//! here once instead of in every cfg that needs it. The facade's `build.rs`
//! says the same of its own features (a crate's cfgs read only its own).

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
