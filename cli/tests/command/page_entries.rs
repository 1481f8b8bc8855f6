//! The entries' markup an export page carries, read back as its script reads
//! it: each `script.am-chunk`'s text, inflated when it is deflated
//! (`data-deflate`: zlib in base64).

use std::io::Read as _;

use base64::Engine as _;

/// The text of each chunk of `page`, in order.
pub fn chunk_texts(page: &str) -> Vec<String> {
    const OPEN: &str = "<script type=\"text/x-agentmsg-entries\" class=\"am-chunk\"";
    let mut texts = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find(OPEN) {
        rest = &rest[at + OPEN.len()..];
        let close = rest.find('>').expect("the chunk's tag ends");
        let deflated = rest[..close].contains("data-deflate");
        rest = &rest[close + 1..];
        let end = rest.find("</script>").expect("the chunk ends");
        let text = &rest[..end];
        rest = &rest[end..];
        if deflated {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .expect("a chunk in base64");
            let mut markup = String::new();
            flate2::read::ZlibDecoder::new(&bytes[..])
                .read_to_string(&mut markup)
                .expect("a chunk deflated by zlib");
            texts.push(markup);
        } else {
            texts.push(text.to_owned());
        }
    }
    texts
}

/// All the entries' markup of `page`, one string.
pub fn markup(page: &str) -> String {
    chunk_texts(page).concat()
}

/// A page's entries are deflated by default and plain with `--no-compress`:
/// the same markup either way, and the deflated page (past its fixed style
/// and script) well under the file it shows and half the plain one, on one
/// file of each agent.
#[test]
fn deflated_entries_are_the_plain_ones_in_a_fraction_of_the_bytes() {
    let Some(conformance) = crate::common::conformance_or_skip(Some("transcripts")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (n, file) in [
        "transcripts/pi/large-session.jsonl",
        "transcripts/codex/agent-sessions-stage0/small.jsonl",
        "transcripts/claude-code/agent-sessions-stage0/small.jsonl",
    ]
    .into_iter()
    .enumerate()
    {
        // The shared data is never opened in place.
        let copy = dir.path().join(format!("{n}.jsonl"));
        std::fs::copy(conformance.join(file), &copy).unwrap();
        let mut pages = Vec::new();
        for extra in [None, Some("--no-compress")] {
            let out = dir.path().join(format!("{n}-{}.html", pages.len()));
            let mut args = vec![
                "export",
                copy.to_str().unwrap(),
                "--html",
                "-o",
                out.to_str().unwrap(),
            ];
            args.extend(extra);
            let run = crate::common::agentmsg_in(dir.path(), &args);
            assert_eq!(run.code, 0, "{file}: {run:?}");
            pages.push(std::fs::read_to_string(&out).unwrap());
        }
        let (deflated, plain) = (&pages[0], &pages[1]);
        assert!(deflated.contains("data-deflate>"), "{file}");
        assert!(!plain.contains("data-deflate>"), "{file}");
        let texts = chunk_texts(deflated);
        assert!(!texts.is_empty(), "{file}");
        assert_eq!(texts, chunk_texts(plain), "{file}: the same markup");
        assert!(texts.concat().contains("<article "), "{file}");
        let size = std::fs::metadata(&copy).unwrap().len() as f64;
        let ratio = deflated.len() as f64 / size;
        println!(
            "{file}: {size} bytes; page {} bytes ({ratio:.2}x), plain {} bytes ({:.2}x)",
            deflated.len(),
            plain.len(),
            plain.len() as f64 / size
        );
        // What every page carries whatever its session (34 kB): the style
        // and the script, the text after the last `<script>`.
        let style = deflated
            .split("<style>")
            .nth(1)
            .unwrap()
            .split("</style>")
            .next()
            .unwrap();
        let script = deflated.rsplit("<script>").next().unwrap();
        let fixed = (style.len() + script.len()) as f64;
        let own = (deflated.len() as f64 - fixed) / size;
        println!("{file}: without the fixed {fixed} bytes of style and script, {own:.2}x");
        assert!(
            own < 0.8,
            "{file}: the page's own part is {own:.2}x the file"
        );
        if size > 100_000.0 {
            assert!(ratio < 0.5, "{file}: the page is {ratio:.2}x the file");
        }
        let (own, plain_own) = (
            deflated.len() - fixed as usize,
            plain.len() - fixed as usize,
        );
        assert!(
            own * 2 < plain_own,
            "{file}: {own} deflated, {plain_own} plain, past the fixed part"
        );
    }
}
