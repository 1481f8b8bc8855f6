//! AWS event-stream frames for the Bedrock tests, written by AWS's own encoder
//! (`aws-smithy-eventstream`), so the decoder is checked against the format's
//! reference writer.

use aws_smithy_types::event_stream::{Header, HeaderValue, Message};

/// An event frame of type `kind` carrying the JSON `payload`.
pub fn event_frame(kind: &str, payload: &str) -> Vec<u8> {
    write(
        vec![
            Header::new(":message-type", HeaderValue::String("event".into())),
            Header::new(":event-type", HeaderValue::String(kind.to_owned().into())),
            Header::new(
                ":content-type",
                HeaderValue::String("application/json".into()),
            ),
        ],
        payload,
    )
}

/// An exception frame of type `kind` (`throttlingException`…) carrying `payload`.
pub fn exception_frame(kind: &str, payload: &str) -> Vec<u8> {
    write(
        vec![
            Header::new(":message-type", HeaderValue::String("exception".into())),
            Header::new(
                ":exception-type",
                HeaderValue::String(kind.to_owned().into()),
            ),
        ],
        payload,
    )
}

fn write(headers: Vec<Header>, payload: &str) -> Vec<u8> {
    let message = Message::new_from_parts(headers, payload.as_bytes().to_vec());
    let mut out = Vec::new();
    aws_smithy_eventstream::frame::write_message_to(&message, &mut out)
        .expect("a frame aws-smithy-eventstream can write");
    out
}
