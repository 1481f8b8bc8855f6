//! Media constructors and MIME sniffing for images, audio and documents.
//!
//! The MIME type of inline media is never taken on trust from a file name: it is
//! read from the first bytes (the "magic number") of the data. Bytes that match
//! no known format, or a format of another kind (an image given as audio), are an
//! error that says what was seen.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! # use agentmsg::ImageContent;
//! # use agentmsg::message::MediaError;
//! let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
//! let image = ImageContent::from_bytes(png)?;
//! assert_eq!(image.mime_type(), Some("image/png"));
//! assert_eq!(image.to_bytes()?, png);
//! # Ok::<(), MediaError>(())
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD;
use base64::{DecodeError, DecodeSliceError, Engine};

use super::content::{AudioContent, DocumentContent, ImageContent, MediaSource};

/// What a piece of media is for: the block it can go into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    /// An [`ImageContent`].
    Image,
    /// An [`AudioContent`].
    Audio,
    /// A [`DocumentContent`].
    Document,
}

impl MediaKind {
    /// The formats of this kind that are recognised, for error messages.
    fn accepted(self) -> &'static str {
        match self {
            Self::Image => "PNG, JPEG, GIF or WEBP",
            Self::Audio => "MP3, OGG, FLAC or WAV",
            Self::Document => "PDF",
        }
    }
}

impl fmt::Display for MediaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Image => "image",
            Self::Audio => "audio",
            Self::Document => "document",
        })
    }
}

/// A media format recognised from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaFormat {
    /// `image/png`
    Png,
    /// `image/jpeg`
    Jpeg,
    /// `image/gif`
    Gif,
    /// `image/webp`
    Webp,
    /// `audio/mpeg` (MP3: an ID3 tag or an MPEG layer III frame)
    Mp3,
    /// `audio/ogg`
    Ogg,
    /// `audio/flac`
    Flac,
    /// `audio/wav`
    Wav,
    /// `application/pdf`
    Pdf,
}

impl MediaFormat {
    /// Every recognised format.
    pub const ALL: [MediaFormat; 9] = [
        Self::Png,
        Self::Jpeg,
        Self::Gif,
        Self::Webp,
        Self::Mp3,
        Self::Ogg,
        Self::Flac,
        Self::Wav,
        Self::Pdf,
    ];

    /// The format of `bytes`, read from their first bytes; `None` when they match
    /// no recognised format.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::message::MediaFormat;
    /// assert_eq!(MediaFormat::sniff(b"%PDF-1.7\n"), Some(MediaFormat::Pdf));
    /// assert_eq!(MediaFormat::sniff(&[0xFF, 0xF3, 0x64, 0xC4]), Some(MediaFormat::Mp3));
    /// assert_eq!(MediaFormat::sniff(b"hello"), None);
    /// ```
    pub fn sniff(bytes: &[u8]) -> Option<MediaFormat> {
        // infer's checks are used where they are exact; PNG, GIF, WEBP and MP3 are
        // checked here because infer looks at fewer bytes (PNG: 4 of the 8-byte
        // signature, GIF: no version, WEBP: no RIFF header) or misses most MP3
        // frame headers (it only knows 0xFF 0xFB).
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if infer::image::is_jpeg(bytes) {
            Some(Self::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Self::Gif)
        } else if bytes.len() >= 12
            && bytes.starts_with(b"RIFF")
            && bytes.get(8..12) == Some(b"WEBP")
        {
            Some(Self::Webp)
        } else if infer::audio::is_wav(bytes) {
            Some(Self::Wav)
        } else if infer::audio::is_ogg(bytes) {
            Some(Self::Ogg)
        } else if infer::audio::is_flac(bytes) {
            Some(Self::Flac)
        } else if is_mp3(bytes) {
            Some(Self::Mp3)
        } else if bytes.starts_with(b"%PDF-") {
            Some(Self::Pdf)
        } else {
            None
        }
    }

    /// The MIME type, such as `image/png`.
    pub const fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
            Self::Mp3 => "audio/mpeg",
            Self::Ogg => "audio/ogg",
            Self::Flac => "audio/flac",
            Self::Wav => "audio/wav",
            Self::Pdf => "application/pdf",
        }
    }

    /// The kind of block the format belongs in.
    pub const fn kind(self) -> MediaKind {
        match self {
            Self::Png | Self::Jpeg | Self::Gif | Self::Webp => MediaKind::Image,
            Self::Mp3 | Self::Ogg | Self::Flac | Self::Wav => MediaKind::Audio,
            Self::Pdf => MediaKind::Document,
        }
    }

    /// The format's short name, such as `PNG`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Png => "PNG",
            Self::Jpeg => "JPEG",
            Self::Gif => "GIF",
            Self::Webp => "WEBP",
            Self::Mp3 => "MP3",
            Self::Ogg => "OGG",
            Self::Flac => "FLAC",
            Self::Wav => "WAV",
            Self::Pdf => "PDF",
        }
    }
}

impl fmt::Display for MediaFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ({})", self.name(), self.kind(), self.mime_type())
    }
}

/// An ID3v2 tag, or an MPEG audio layer III frame header: 11 sync bits, a version
/// that is not reserved, layer III, a bitrate index that is not `1111` and a
/// sample-rate index that is not `11`.
fn is_mp3(bytes: &[u8]) -> bool {
    if bytes.starts_with(b"ID3") {
        return true;
    }
    let &[0xFF, b1, b2, _, ..] = bytes else {
        return false;
    };
    let sync = b1 & 0xE0 == 0xE0;
    let version_ok = (b1 >> 3) & 0b11 != 0b01;
    let layer_3 = (b1 >> 1) & 0b11 == 0b01;
    let bitrate_ok = b2 >> 4 != 0b1111;
    let rate_ok = (b2 >> 2) & 0b11 != 0b11;
    sync && version_ok && layer_3 && bitrate_ok && rate_ok
}

/// How many leading bytes an error shows of data it did not recognise.
const SHOWN_BYTES: usize = 16;

/// Bytes shown as lowercase hex pairs separated by spaces.
fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// What was wrong with a base64 string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base64Problem {
    /// A byte that is not in the standard alphabet (or padding in the middle).
    InvalidByte {
        /// Its offset in the string.
        offset: usize,
        /// The byte.
        byte: u8,
    },
    /// The last symbol has bits set that the data cannot hold (truncated data).
    InvalidLastSymbol {
        /// Its offset in the string.
        offset: usize,
        /// The byte.
        byte: u8,
    },
    /// The string stops in the middle of a 4-character group.
    InvalidLength {
        /// The length of the string.
        len: usize,
    },
    /// Padding (`=`) is missing at the end or is not canonical.
    InvalidPadding,
}

impl fmt::Display for Base64Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |b: u8| {
            if b.is_ascii_graphic() {
                format!("`{}` (0x{b:02x})", b as char)
            } else {
                format!("0x{b:02x}")
            }
        };
        match *self {
            Self::InvalidByte { offset, byte } => {
                write!(f, "invalid character {} at offset {offset}", shown(byte))
            }
            Self::InvalidLastSymbol { offset, byte } => write!(
                f,
                "last symbol {} at offset {offset} has bits the data cannot hold (truncated?)",
                shown(byte)
            ),
            Self::InvalidLength { len } => {
                write!(f, "length {len} stops in the middle of a 4-character group")
            }
            Self::InvalidPadding => f.write_str("missing or malformed `=` padding at the end"),
        }
    }
}

/// Why a media block could not be made, or its bytes not read back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MediaError {
    /// There were no bytes at all.
    #[error("no bytes: an empty input is not {expected} data")]
    Empty {
        /// The kind asked for.
        expected: MediaKind,
    },
    /// The bytes match no recognised format.
    #[error(
        "unrecognised {expected} format (expected {}): {len} bytes starting with {}",
        .expected.accepted(),
        hex(.head)
    )]
    Unrecognised {
        /// The kind asked for.
        expected: MediaKind,
        /// How many bytes there were.
        len: usize,
        /// The first bytes (at most 16).
        head: Vec<u8>,
    },
    /// The bytes are media of another kind.
    #[error("expected {expected} data, but the bytes are {found}")]
    WrongKind {
        /// The kind asked for.
        expected: MediaKind,
        /// The format the bytes are in.
        found: MediaFormat,
    },
    /// The base64 text is not valid standard, padded base64.
    #[error("invalid base64 {expected} data: {problem}")]
    InvalidBase64 {
        /// The kind asked for.
        expected: MediaKind,
        /// What is wrong, and where.
        problem: Base64Problem,
    },
    /// A file could not be read.
    #[error("cannot read {}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file was read, but its contents are not what was asked for.
    #[error("{}: {error}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with its contents.
        error: Box<MediaError>,
    },
    /// The block refers to a URL: its bytes are not inline.
    #[error("the {kind} is at a URL ({url}), not inline data")]
    NotInline {
        /// The kind of block.
        kind: MediaKind,
        /// The URL.
        url: String,
    },
}

/// The MIME type of `bytes`, which must be `expected` media.
fn sniff_as(
    bytes: &[u8],
    expected: MediaKind,
    total_len: usize,
) -> Result<MediaFormat, MediaError> {
    if total_len == 0 {
        return Err(MediaError::Empty { expected });
    }
    match MediaFormat::sniff(bytes) {
        Some(found) if found.kind() == expected => Ok(found),
        Some(found) => Err(MediaError::WrongKind { expected, found }),
        None => Err(MediaError::Unrecognised {
            expected,
            len: total_len,
            head: bytes.iter().take(SHOWN_BYTES).copied().collect(),
        }),
    }
}

fn problem(error: DecodeError, chunk_start: usize, total_len: usize) -> Base64Problem {
    match error {
        DecodeError::InvalidByte(offset, byte) => Base64Problem::InvalidByte {
            offset: chunk_start + offset,
            byte,
        },
        DecodeError::InvalidLastSymbol(offset, byte) => Base64Problem::InvalidLastSymbol {
            offset: chunk_start + offset,
            byte,
        },
        DecodeError::InvalidLength(_) => Base64Problem::InvalidLength { len: total_len },
        DecodeError::InvalidPadding => Base64Problem::InvalidPadding,
    }
}

/// Decodes standard padded base64 in chunks, handing each chunk's bytes to
/// `each` and keeping none; the first problem, if any.
fn walk_base64(data: &str, mut each: impl FnMut(usize, &[u8])) -> Result<(), Base64Problem> {
    const CHUNK: usize = 4096; // a multiple of 4, so padding may only end the last chunk
    let mut buf = [0u8; CHUNK / 4 * 3];
    for (i, chunk) in data.as_bytes().chunks(CHUNK).enumerate() {
        let n = STANDARD
            .decode_slice(chunk, &mut buf)
            .map_err(|e| match e {
                DecodeSliceError::DecodeError(e) => problem(e, i * CHUNK, data.len()),
                // Cannot happen: a full chunk decodes to exactly `buf.len()` bytes.
                DecodeSliceError::OutputSliceTooSmall => {
                    Base64Problem::InvalidLength { len: data.len() }
                }
            })?;
        each(i, buf.get(..n).unwrap_or_default());
    }
    Ok(())
}

/// What is wrong with `data` as standard padded base64 (what every provider
/// takes), if anything; checked without decoding it into memory.
pub(crate) fn base64_problem(data: &str) -> Option<Base64Problem> {
    walk_base64(data, |_, _| {}).err()
}

/// Checks that `data` is standard padded base64 without keeping the decoded
/// bytes; returns the first decoded bytes (for sniffing) and the decoded length.
fn validate_base64(data: &str, expected: MediaKind) -> Result<(Vec<u8>, usize), MediaError> {
    let mut head = Vec::new();
    let mut decoded = 0;
    walk_base64(data, |i, bytes| {
        if i == 0 {
            head = bytes.to_vec();
        }
        decoded += bytes.len();
    })
    .map_err(|problem| MediaError::InvalidBase64 { expected, problem })?;
    Ok((head, decoded))
}

fn read_file(path: &Path) -> Result<Vec<u8>, MediaError> {
    std::fs::read(path).map_err(|source| MediaError::Io {
        path: path.to_owned(),
        source,
    })
}

fn in_file(path: &Path) -> impl FnOnce(MediaError) -> MediaError + '_ {
    move |error| MediaError::File {
        path: path.to_owned(),
        error: Box::new(error),
    }
}

/// Inline bytes checked to be `kind` media: the base64 text and the MIME type.
fn inline_from_bytes(bytes: &[u8], kind: MediaKind) -> Result<(String, &'static str), MediaError> {
    let format = sniff_as(bytes, kind, bytes.len())?;
    Ok((STANDARD.encode(bytes), format.mime_type()))
}

fn inline_from_base64(data: String, kind: MediaKind) -> Result<(String, &'static str), MediaError> {
    let (head, len) = validate_base64(&data, kind)?;
    let format = sniff_as(&head, kind, len)?;
    Ok((data, format.mime_type()))
}

fn decode(data: &str, kind: MediaKind) -> Result<Vec<u8>, MediaError> {
    STANDARD
        .decode(data)
        .map_err(|e| MediaError::InvalidBase64 {
            expected: kind,
            problem: problem(e, 0, data.len()),
        })
}

fn source_bytes(source: &MediaSource, kind: MediaKind) -> Result<Vec<u8>, MediaError> {
    match source {
        MediaSource::Base64 { data, .. } => decode(data, kind),
        MediaSource::Url(url) => Err(MediaError::NotInline {
            kind,
            url: url.clone(),
        }),
    }
}

fn base64_source((data, mime_type): (String, &'static str)) -> MediaSource {
    MediaSource::Base64 {
        data,
        mime_type: mime_type.to_owned(),
    }
}

impl ImageContent {
    /// An inline image from its bytes; the MIME type is sniffed (PNG, JPEG, GIF,
    /// WEBP).
    pub fn from_bytes(bytes: impl AsRef<[u8]>) -> Result<Self, MediaError> {
        inline_from_bytes(bytes.as_ref(), MediaKind::Image).map(|i| Self {
            source: base64_source(i),
        })
    }

    /// An inline image read from a file; the MIME type is sniffed from the
    /// contents, not the file name.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, MediaError> {
        let path = path.as_ref();
        Self::from_bytes(read_file(path)?).map_err(in_file(path))
    }

    /// An inline image from standard, padded base64; the MIME type is sniffed
    /// from the decoded bytes.
    pub fn from_base64(data: impl Into<String>) -> Result<Self, MediaError> {
        inline_from_base64(data.into(), MediaKind::Image).map(|i| Self {
            source: base64_source(i),
        })
    }

    /// An image at a URL the provider fetches itself. The URL is not checked.
    pub fn from_url(url: impl Into<String>) -> Self {
        Self {
            source: MediaSource::Url(url.into()),
        }
    }

    /// The MIME type of inline data; `None` for a URL.
    pub fn mime_type(&self) -> Option<&str> {
        self.source.mime_type()
    }

    /// The URL; `None` for inline data.
    pub fn url(&self) -> Option<&str> {
        self.source.url()
    }

    /// The inline data as base64; `None` for a URL.
    pub fn to_base64(&self) -> Option<&str> {
        self.source.data()
    }

    /// The inline data decoded; an error for a URL or invalid base64.
    pub fn to_bytes(&self) -> Result<Vec<u8>, MediaError> {
        source_bytes(&self.source, MediaKind::Image)
    }
}

impl AudioContent {
    /// An audio clip from its bytes; the MIME type is sniffed (MP3, OGG, FLAC,
    /// WAV).
    pub fn from_bytes(bytes: impl AsRef<[u8]>) -> Result<Self, MediaError> {
        let (data, mime_type) = inline_from_bytes(bytes.as_ref(), MediaKind::Audio)?;
        Ok(Self {
            data,
            mime_type: mime_type.to_owned(),
        })
    }

    /// An audio clip read from a file; the MIME type is sniffed from the
    /// contents, not the file name.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, MediaError> {
        let path = path.as_ref();
        Self::from_bytes(read_file(path)?).map_err(in_file(path))
    }

    /// An audio clip from standard, padded base64; the MIME type is sniffed from
    /// the decoded bytes.
    pub fn from_base64(data: impl Into<String>) -> Result<Self, MediaError> {
        let (data, mime_type) = inline_from_base64(data.into(), MediaKind::Audio)?;
        Ok(Self {
            data,
            mime_type: mime_type.to_owned(),
        })
    }

    /// The data as base64.
    pub fn to_base64(&self) -> &str {
        &self.data
    }

    /// The data decoded; an error if it is not valid base64.
    pub fn to_bytes(&self) -> Result<Vec<u8>, MediaError> {
        decode(&self.data, MediaKind::Audio)
    }
}

impl DocumentContent {
    /// An inline document from its bytes, without a title; the MIME type is
    /// sniffed (PDF).
    pub fn from_bytes(bytes: impl AsRef<[u8]>) -> Result<Self, MediaError> {
        inline_from_bytes(bytes.as_ref(), MediaKind::Document).map(|i| Self {
            source: base64_source(i),
            title: None,
        })
    }

    /// An inline document read from a file, without a title (see
    /// [`DocumentContent::with_title`]); the MIME type is sniffed from the
    /// contents, not the file name.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, MediaError> {
        let path = path.as_ref();
        Self::from_bytes(read_file(path)?).map_err(in_file(path))
    }

    /// An inline document from standard, padded base64; the MIME type is sniffed
    /// from the decoded bytes.
    pub fn from_base64(data: impl Into<String>) -> Result<Self, MediaError> {
        inline_from_base64(data.into(), MediaKind::Document).map(|i| Self {
            source: base64_source(i),
            title: None,
        })
    }

    /// A document at a URL the provider fetches itself. The URL is not checked.
    pub fn from_url(url: impl Into<String>) -> Self {
        Self {
            source: MediaSource::Url(url.into()),
            title: None,
        }
    }

    /// The same document with a title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The MIME type of inline data; `None` for a URL.
    pub fn mime_type(&self) -> Option<&str> {
        self.source.mime_type()
    }

    /// The URL; `None` for inline data.
    pub fn url(&self) -> Option<&str> {
        self.source.url()
    }

    /// The inline data as base64; `None` for a URL.
    pub fn to_base64(&self) -> Option<&str> {
        self.source.data()
    }

    /// The inline data decoded; an error for a URL or invalid base64.
    pub fn to_bytes(&self) -> Result<Vec<u8>, MediaError> {
        source_bytes(&self.source, MediaKind::Document)
    }
}
