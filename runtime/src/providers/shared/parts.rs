//! User content as the parts of the OpenAI APIs (Chat Completions, Responses):
//! the walk over the blocks and the sorting of documents (a PDF goes as a file,
//! a text document as text, anything else as a note) are the same; each API
//! writes the parts in its own shape. Each change is reported.

use base64::Engine as _;
use serde_json::Value;

use crate::message::MediaSource;
use crate::project::{ChangeKind, Report};
use crate::{AudioContent, UserContent};

/// How one API writes each kind of user part.
pub(crate) trait PartWriter {
    /// The end of the note that replaces a document of a type the API does not
    /// take (what it can take).
    const DOCUMENTS: &'static str;

    /// A text part.
    fn text(&self, text: String) -> Value;
    /// An image part.
    fn image(&self, source: &MediaSource) -> Value;
    /// An audio part (or a note in its place, reported) of input message `index`.
    fn audio(&self, index: usize, audio: &AudioContent, report: &mut Report) -> Value;
    /// A document part of input message `index`, sorted by [`document_part`].
    fn document(&self, index: usize, part: DocumentPart<'_>, report: &mut Report) -> Value;
}

/// The parts of a user message of input `index`, in order.
pub(crate) fn user_parts<W: PartWriter>(
    writer: &W,
    index: usize,
    content: &[UserContent],
    report: &mut Report,
) -> Vec<Value> {
    content
        .iter()
        .map(|block| match block {
            UserContent::Text(t) => writer.text(t.text.clone()),
            UserContent::Image(image) => writer.image(&image.source),
            UserContent::Audio(audio) => writer.audio(index, audio, report),
            UserContent::Document(doc) => {
                let part = document_part(
                    index,
                    &doc.source,
                    doc.title.as_deref(),
                    W::DOCUMENTS,
                    report,
                );
                match part {
                    DocumentPart::Text(text) => writer.text(text),
                    other => writer.document(index, other, report),
                }
            }
        })
        .collect()
}

/// What a document becomes, before each API writes it in its own shape.
pub(crate) enum DocumentPart<'a> {
    /// Text to send as a text part (a text document, or a note in its place).
    Text(String),
    /// An inline PDF: its file name and data URL.
    Pdf {
        /// The title, or `document.pdf`.
        filename: &'a str,
        /// `data:application/pdf;base64,…`.
        data_url: String,
    },
    /// An uploaded file, by its id (`file-…`).
    FileId(&'a str),
    /// A document at a URL, with its title if it has one.
    Url {
        /// The URL.
        url: &'a str,
        /// The title, when not empty.
        name: Option<&'a str>,
    },
}

/// Sorts a document of input message `index`. `inline_only` is the end of the
/// note that replaces an unsupported type (what the API can take).
pub(crate) fn document_part<'a>(
    index: usize,
    source: &'a MediaSource,
    title: Option<&'a str>,
    inline_only: &str,
    report: &mut Report,
) -> DocumentPart<'a> {
    let name = title.filter(|t| !t.is_empty());
    match source {
        MediaSource::Base64 { data, mime_type }
            if mime_type.eq_ignore_ascii_case("application/pdf") =>
        {
            DocumentPart::Pdf {
                filename: name.unwrap_or("document.pdf"),
                data_url: format!("data:{mime_type};base64,{data}"),
            }
        }
        MediaSource::Base64 { data, mime_type } if mime_type.starts_with("text/") => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(data)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok());
            match decoded {
                Some(text) => {
                    report.record(
                        index,
                        ChangeKind::UnsupportedContent,
                        format!("{mime_type} document sent as text"),
                    );
                    let heading = name.map(|n| format!("{n}\n\n")).unwrap_or_default();
                    DocumentPart::Text(format!("{heading}{text}"))
                }
                None => unsupported_document(index, mime_type, inline_only, report),
            }
        }
        MediaSource::Base64 { mime_type, .. } => {
            unsupported_document(index, mime_type, inline_only, report)
        }
        MediaSource::Url(url) if url.starts_with("file-") => DocumentPart::FileId(url),
        MediaSource::Url(url) => DocumentPart::Url { url, name },
    }
}

fn unsupported_document<'a>(
    index: usize,
    mime_type: &str,
    inline_only: &str,
    report: &mut Report,
) -> DocumentPart<'a> {
    report.record(
        index,
        ChangeKind::UnsupportedContent,
        format!("{mime_type} document replaced by a note: {inline_only}"),
    );
    DocumentPart::Text(format!(
        "[document ({mime_type}) omitted: unsupported type]"
    ))
}
