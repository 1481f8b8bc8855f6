//! `any_provider`: one name for "a provider feature is on", the condition of
//! the `providers` module (and with it of the HTTP client, the agent loop and
//! the compaction's summariser), so the list of provider features is written
//! here once instead of in every cfg that needs it. The facade's `build.rs`
//! says the same of its own features (a crate's cfgs read only its own).
//!
//! The export page's script and style (`src/export/page.js`, `page.css`,
//! the readable source) are written to `OUT_DIR` without their comments and
//! needless whitespace (`src/export/minify.rs`), which is what every page
//! carries.

#[path = "src/export/minify.rs"]
mod minify;

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (source, minified, minify) in [
        (
            "src/export/page.js",
            "page.min.js",
            minify::script as fn(&str) -> String,
        ),
        ("src/export/page.css", "page.min.css", minify::style),
    ] {
        println!("cargo:rerun-if-changed={source}");
        let text = std::fs::read_to_string(source).expect("the page's source is in the crate");
        std::fs::write(out.join(minified), minify(&text)).expect("OUT_DIR is writable");
    }
    println!("cargo:rerun-if-changed=src/export/minify.rs");
    println!("cargo:rerun-if-changed=build.rs");
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
