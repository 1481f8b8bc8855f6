//! `any_provider`: one name for "a provider feature is on", the condition of
//! the `providers` module (and with it of the HTTP client, the agent loop and
//! the compaction's summariser), so the list of provider features is written
//! here once instead of in every cfg that needs it. The facade's `build.rs`
//! says the same of its own features (a crate's cfgs read only its own).
//!
//! With `html`, the export page's script and style (`src/export/page.js`,
//! `page.css`, the readable source) are written to `OUT_DIR` without their
//! comments and needless whitespace, by the `minifier` crate that rustdoc
//! uses for its own pages: that is what every page carries.

fn main() {
    #[cfg(feature = "html")]
    minified_page();
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

/// Writes `page.min.js` and `page.min.css` to `OUT_DIR`.
#[cfg(feature = "html")]
fn minified_page() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let read = |source: &str| {
        println!("cargo:rerun-if-changed={source}");
        std::fs::read_to_string(source).expect("the page's source is in the crate")
    };
    let script = minifier::js::minify(&read("src/export/page.js"))
        .unwrap_or_else(|e| panic!("src/export/page.js: {e}"))
        .to_string();
    let style = minifier::css::minify(&read("src/export/page.css"))
        .unwrap_or_else(|e| panic!("src/export/page.css: {e}"))
        .to_string();
    std::fs::write(out.join("page.min.js"), script).expect("OUT_DIR is writable");
    std::fs::write(out.join("page.min.css"), style).expect("OUT_DIR is writable");
}
