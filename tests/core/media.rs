//! Media constructors: MIME sniffing, base64, files and their errors.

use agentmsg::message::{Base64Problem, MediaError, MediaFormat, MediaKind, MediaSource};
use agentmsg::{AudioContent, DocumentContent, ImageContent, UserContent};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";
const JPEG: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0";
const GIF87: &[u8] = b"GIF87a\x01\0\x01\0\x80\0\0";
const GIF89: &[u8] = b"GIF89a\x01\0\x01\0\x80\0\0";
const WEBP: &[u8] = b"RIFF\x24\0\0\0WEBPVP8 \x18\0\0\0";
const ID3: &[u8] = b"ID3\x04\0\0\0\0\0\x23TSSE";
const OGG: &[u8] = b"OggS\0\x02\0\0\0\0\0\0\0\0";
const FLAC: &[u8] = b"fLaC\0\0\0\x22\x10\0\x10\0";
const WAV: &[u8] = b"RIFF\x24\x08\0\0WAVEfmt \x10\0\0\0";
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n";

fn sniff(bytes: &[u8]) -> Option<&'static str> {
    MediaFormat::sniff(bytes).map(MediaFormat::mime_type)
}

#[test]
fn sniffs_every_format_from_real_headers() {
    assert_eq!(sniff(PNG), Some("image/png"));
    assert_eq!(sniff(JPEG), Some("image/jpeg"));
    assert_eq!(sniff(GIF87), Some("image/gif"));
    assert_eq!(sniff(GIF89), Some("image/gif"));
    assert_eq!(sniff(WEBP), Some("image/webp"));
    assert_eq!(sniff(ID3), Some("audio/mpeg"));
    assert_eq!(sniff(OGG), Some("audio/ogg"));
    assert_eq!(sniff(FLAC), Some("audio/flac"));
    assert_eq!(sniff(WAV), Some("audio/wav"));
    assert_eq!(sniff(PDF), Some("application/pdf"));
}

#[test]
fn sniffs_every_mpeg_layer_3_frame_sync() {
    // MPEG-1, MPEG-2 and MPEG-2.5, each with and without CRC; 128 kbit/s, 44.1 kHz.
    for second in [0xFB, 0xFA, 0xF3, 0xF2, 0xE3, 0xE2] {
        let frame = [0xFF, second, 0x90, 0x64, 0, 0];
        assert_eq!(sniff(&frame), Some("audio/mpeg"), "0xFF 0x{second:02X}");
    }
}

#[test]
fn rejects_near_misses() {
    // AAC ADTS (layer bits 00), MPEG layer II, a reserved version, a bad bitrate,
    // a reserved sample rate, and a frame header cut short.
    for frame in [
        [0xFF, 0xF1, 0x50, 0x80],
        [0xFF, 0xFD, 0x90, 0x64],
        [0xFF, 0xEB, 0x90, 0x64],
        [0xFF, 0xFB, 0xF0, 0x64],
        [0xFF, 0xFB, 0x9C, 0x64],
    ] {
        assert_eq!(sniff(&frame), None, "{frame:02X?}");
    }
    assert_eq!(sniff(&[0xFF, 0xFB, 0x90]), None);
    assert_eq!(sniff(b"\x89PNG"), None, "half a PNG signature");
    assert_eq!(sniff(b"GIF88a\x01\0"), None, "no such GIF version");
    assert_eq!(sniff(b"RIFF\x24\0\0\0AVI LIST"), None, "AVI is RIFF too");
    assert_eq!(sniff(b"XXXX\x24\0\0\0WEBPVP8 "), None, "WEBP needs RIFF");
    assert_eq!(
        sniff(b"%PDF"),
        None,
        "a PDF header has a dash and a version"
    );
    assert_eq!(sniff(b"{\"a\":1}"), None);
    assert_eq!(sniff(b""), None);
}

#[test]
fn formats_know_their_kind() {
    for format in MediaFormat::ALL {
        let kind = match format.mime_type().split('/').next() {
            Some("image") => MediaKind::Image,
            Some("audio") => MediaKind::Audio,
            _ => MediaKind::Document,
        };
        assert_eq!(format.kind(), kind, "{format}");
    }
}

#[test]
fn image_from_bytes_round_trips_its_bytes() {
    for (bytes, mime) in [
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
        (GIF89, "image/gif"),
        (WEBP, "image/webp"),
    ] {
        let image = ImageContent::from_bytes(bytes).unwrap();
        assert_eq!(image.mime_type(), Some(mime));
        assert_eq!(image.url(), None);
        assert_eq!(image.to_bytes().unwrap(), bytes);
    }
}

#[test]
fn base64_is_standard_and_padded() {
    let doc = DocumentContent::from_bytes(b"%PDF-1.7\n").unwrap();
    assert_eq!(doc.to_base64(), Some("JVBERi0xLjcK"));
    let clip = AudioContent::from_bytes(b"ID3\x04\0").unwrap();
    assert_eq!(clip.to_base64(), "SUQzBAA=");
    assert_eq!(clip.mime_type, "audio/mpeg");
    assert_eq!(clip.to_bytes().unwrap(), b"ID3\x04\0");
}

#[test]
fn audio_from_bytes_for_each_format() {
    for (bytes, mime) in [
        (ID3, "audio/mpeg"),
        (OGG, "audio/ogg"),
        (FLAC, "audio/flac"),
        (WAV, "audio/wav"),
    ] {
        let clip = AudioContent::from_bytes(bytes).unwrap();
        assert_eq!(clip.mime_type, mime);
        assert_eq!(clip.to_bytes().unwrap(), bytes);
    }
}

#[test]
fn from_base64_sniffs_the_decoded_prefix_and_keeps_the_text() {
    let image = ImageContent::from_bytes(PNG).unwrap();
    let text = image.to_base64().unwrap().to_owned();
    let again = ImageContent::from_base64(text.clone()).unwrap();
    assert_eq!(again, image);
    assert_eq!(again.to_base64(), Some(text.as_str()));

    let clip = AudioContent::from_base64("SUQzBAA=").unwrap();
    assert_eq!(clip.mime_type, "audio/mpeg");
    let doc = DocumentContent::from_base64("JVBERi0xLjcK").unwrap();
    assert_eq!(doc.mime_type(), Some("application/pdf"));
}

#[test]
fn from_base64_reads_large_data_across_chunks() {
    let mut png = PNG.to_vec();
    png.extend((0..20_000u32).map(|i| (i % 251) as u8));
    let encoded = ImageContent::from_bytes(&png).unwrap();
    let text = encoded.to_base64().unwrap().to_owned();
    assert!(text.len() > 3 * 4096);
    let decoded = ImageContent::from_base64(text).unwrap();
    assert_eq!(decoded.to_bytes().unwrap(), png);
}

#[test]
fn bad_base64_says_where() {
    let err = ImageContent::from_base64("iVBORw0K-goAAAAN").unwrap_err();
    match &err {
        MediaError::InvalidBase64 {
            expected: MediaKind::Image,
            problem:
                Base64Problem::InvalidByte {
                    offset: 8,
                    byte: b'-',
                },
        } => {}
        other => panic!("unexpected error {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "invalid base64 image data: invalid character `-` (0x2d) at offset 8"
    );

    // Far into the data, past the first chunk: the offset is still the string's.
    let mut text = ImageContent::from_bytes([PNG, &[0u8; 9000][..]].concat())
        .unwrap()
        .to_base64()
        .unwrap()
        .to_owned();
    text.replace_range(5000..5001, "*");
    match ImageContent::from_base64(text).unwrap_err() {
        MediaError::InvalidBase64 {
            problem:
                Base64Problem::InvalidByte {
                    offset: 5000,
                    byte: b'*',
                },
            ..
        } => {}
        other => panic!("unexpected error {other:?}"),
    }

    let err = AudioContent::from_base64("SUQzBAA").unwrap_err();
    assert!(
        matches!(
            err,
            MediaError::InvalidBase64 {
                expected: MediaKind::Audio,
                problem: Base64Problem::InvalidPadding | Base64Problem::InvalidLength { .. }
            }
        ),
        "{err:?}"
    );
    let err = DocumentContent::from_base64("JVBERi0xLjcK\n").unwrap_err();
    assert!(err.to_string().contains("offset 12"), "{err}");
}

#[test]
fn unrecognised_bytes_say_what_was_seen() {
    let err = ImageContent::from_bytes(b"<html><body>404</body></html>").unwrap_err();
    assert!(
        matches!(
            &err,
            MediaError::Unrecognised { expected: MediaKind::Image, len: 29, head }
                if head.as_slice() == b"<html><body>404<"
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "unrecognised image format (expected PNG, JPEG, GIF or WEBP): 29 bytes starting with \
         3c 68 74 6d 6c 3e 3c 62 6f 64 79 3e 34 30 34 3c"
    );

    // From base64, the length is the decoded length.
    let err = AudioContent::from_base64("aGVsbG8gd29ybGQ=").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unrecognised audio format (expected MP3, OGG, FLAC or WAV): 11 bytes starting with \
         68 65 6c 6c 6f 20 77 6f 72 6c 64"
    );

    let err = DocumentContent::from_bytes([]).unwrap_err();
    assert!(matches!(
        err,
        MediaError::Empty {
            expected: MediaKind::Document
        }
    ));
    assert_eq!(
        err.to_string(),
        "no bytes: an empty input is not document data"
    );
    assert!(matches!(
        ImageContent::from_base64("").unwrap_err(),
        MediaError::Empty {
            expected: MediaKind::Image
        }
    ));
}

#[test]
fn media_of_another_kind_names_both() {
    let err = AudioContent::from_bytes(PNG).unwrap_err();
    assert!(matches!(
        err,
        MediaError::WrongKind {
            expected: MediaKind::Audio,
            found: MediaFormat::Png
        }
    ));
    assert_eq!(
        err.to_string(),
        "expected audio data, but the bytes are PNG image (image/png)"
    );
    let err = ImageContent::from_bytes(PDF).unwrap_err();
    assert_eq!(
        err.to_string(),
        "expected image data, but the bytes are PDF document (application/pdf)"
    );
    let err = DocumentContent::from_bytes(WAV).unwrap_err();
    assert!(matches!(
        err,
        MediaError::WrongKind {
            expected: MediaKind::Document,
            found: MediaFormat::Wav
        }
    ));
    let pdf_b64 = DocumentContent::from_bytes(PDF)
        .unwrap()
        .to_base64()
        .unwrap()
        .to_owned();
    assert!(matches!(
        ImageContent::from_base64(pdf_b64).unwrap_err(),
        MediaError::WrongKind {
            expected: MediaKind::Image,
            found: MediaFormat::Pdf
        }
    ));
}

#[test]
fn from_file_reads_and_sniffs_the_contents_not_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let misnamed = dir.path().join("photo.pdf");
    std::fs::write(&misnamed, JPEG).unwrap();
    let image = ImageContent::from_file(&misnamed).unwrap();
    assert_eq!(image.mime_type(), Some("image/jpeg"));

    let clip_path = dir.path().join("clip.wav");
    std::fs::write(&clip_path, WAV).unwrap();
    assert_eq!(
        AudioContent::from_file(&clip_path).unwrap().mime_type,
        "audio/wav"
    );

    let pdf_path = dir.path().join("spec.pdf");
    std::fs::write(&pdf_path, PDF).unwrap();
    let doc = DocumentContent::from_file(&pdf_path)
        .unwrap()
        .with_title("spec.pdf");
    assert_eq!(doc.title.as_deref(), Some("spec.pdf"));
    assert_eq!(doc.to_bytes().unwrap(), PDF);
}

#[test]
fn file_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.png");
    let err = ImageContent::from_file(&missing).unwrap_err();
    assert!(matches!(&err, MediaError::Io { path, .. } if *path == missing));
    assert_eq!(
        err.to_string(),
        format!("cannot read {}", missing.display())
    );
    assert!(
        std::error::Error::source(&err).is_some(),
        "the io error is the source"
    );

    let wrong = dir.path().join("notes.mp3");
    std::fs::write(&wrong, "just text").unwrap();
    let err = AudioContent::from_file(&wrong).unwrap_err();
    assert!(matches!(&err, MediaError::File { path, error }
        if *path == wrong && matches!(**error, MediaError::Unrecognised { len: 9, .. })));
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("{}: unrecognised audio format", wrong.display())),
        "{shown}"
    );
}

#[test]
fn urls_are_kept_and_have_no_inline_bytes() {
    let image = ImageContent::from_url("https://example.com/cat.jpg");
    assert_eq!(
        image.source,
        MediaSource::Url("https://example.com/cat.jpg".into())
    );
    assert_eq!(image.url(), Some("https://example.com/cat.jpg"));
    assert_eq!(image.mime_type(), None);
    assert_eq!(image.to_base64(), None);
    let err = image.to_bytes().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the image is at a URL (https://example.com/cat.jpg), not inline data"
    );

    let doc = DocumentContent::from_url("gs://bucket/spec.pdf").with_title("Spec");
    assert_eq!(doc.url(), Some("gs://bucket/spec.pdf"));
    assert!(matches!(
        doc.to_bytes().unwrap_err(),
        MediaError::NotInline {
            kind: MediaKind::Document,
            ..
        }
    ));
    let json = serde_json::to_value(UserContent::Document(doc)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type":"document","url":"gs://bucket/spec.pdf","title":"Spec"})
    );
}

#[test]
fn to_bytes_reports_corrupt_stored_data() {
    let clip = AudioContent {
        data: "not base64!".into(),
        mime_type: "audio/wav".into(),
    };
    assert!(matches!(
        clip.to_bytes().unwrap_err(),
        MediaError::InvalidBase64 {
            expected: MediaKind::Audio,
            problem: Base64Problem::InvalidByte {
                offset: 3,
                byte: b' '
            }
        }
    ));
}

#[test]
fn sniffed_block_serializes_as_the_format_says() {
    let image = ImageContent::from_bytes(GIF87).unwrap();
    let json = serde_json::to_value(UserContent::Image(image)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type":"image","data":"R0lGODdhAQABAIAAAA==","mimeType":"image/gif"})
    );
}
