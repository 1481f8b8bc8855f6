//! [`Codec`]: what every provider API's module does, as one trait.

use super::{Api, EncodeError, Encoded, Request, ResponseError, StreamDecode};
use crate::{AssistantMessage, StopReason};

/// One provider API's wire format: the request encoder, the response and
/// stream decoders and the stop-reason map.
///
/// Each API module has a unit struct implementing it
/// ([`anthropic::Anthropic`](super::anthropic::Anthropic) and so on), for code
/// generic over the API at compile time; [`Api`] dispatches to the same
/// implementations at run time.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # #[cfg(feature = "anthropic")] {
/// use agentmsg::providers::{anthropic::Anthropic, Api, Codec, Request, StreamDecode};
/// use agentmsg::{Message, StopReason};
///
/// fn round_trip<C: Codec>(body: &str) -> StopReason {
///     C::decode_response(body).map_or(StopReason::Error, |reply| reply.stop_reason)
/// }
/// let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
///     "content":[{"type":"text","text":"Hi."}],"stop_reason":"end_turn",
///     "usage":{"input_tokens":3,"output_tokens":2}}"#;
/// assert_eq!(round_trip::<Anthropic>(body), StopReason::Stop);
/// assert_eq!(Anthropic::API, Api::Anthropic);
/// assert_eq!(Anthropic::stop_reason("max_tokens"), StopReason::Length);
/// let encoded = Anthropic::encode_request(&Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]))?;
/// assert_eq!(encoded.body["model"], "claude-sonnet-4-5");
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Codec {
    /// The API, as a run-time value.
    const API: Api;
    /// The API's own provider (`openai`, `anthropic`, `google`).
    const PROVIDER: &'static str;
    /// The API's stream decoder.
    type StreamDecoder: StreamDecode + Default;

    /// Encodes `request` for this API: [`prepare`](crate::prepare) for the
    /// API's target, then the wire body.
    ///
    /// # Errors
    /// [`EncodeError::Invalid`] naming the part of the request the API cannot
    /// take.
    fn encode_request(request: &Request) -> Result<Encoded, EncodeError>;

    /// Decodes a response body (or the API's error body, which becomes a
    /// message with stopReason `error`), also returning what was skipped or
    /// kept in a changed form.
    ///
    /// # Errors
    /// [`ResponseError`] for a body that is not JSON of the API's shape.
    fn decode_response_with_warnings(
        body: &str,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError>;

    /// Maps the API's stop or finish reason to a [`StopReason`].
    fn stop_reason(raw: &str) -> StopReason;

    /// [`decode_response_with_warnings`](Self::decode_response_with_warnings)
    /// without the warnings.
    ///
    /// # Errors
    /// As [`decode_response_with_warnings`](Self::decode_response_with_warnings).
    fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
        Self::decode_response_with_warnings(body).map(|(message, _)| message)
    }

    /// A stream decoder waiting for the stream's first event.
    fn stream_decoder() -> Self::StreamDecoder {
        Self::StreamDecoder::default()
    }
}

/// Implements [`Codec`] for `$codec` (named as its [`Api`] variant) with the
/// functions of the module it is declared in.
macro_rules! impl_codec {
    ($codec:ident) => {
        impl $crate::providers::Codec for $codec {
            const API: $crate::providers::Api = $crate::providers::Api::$codec;
            const PROVIDER: &'static str = PROVIDER;
            type StreamDecoder = StreamDecoder;

            fn encode_request(
                request: &$crate::providers::Request,
            ) -> Result<$crate::providers::Encoded, $crate::providers::EncodeError> {
                encode_request(request)
            }

            fn decode_response_with_warnings(
                body: &str,
            ) -> Result<
                (
                    $crate::AssistantMessage,
                    Vec<$crate::providers::ResponseError>,
                ),
                $crate::providers::ResponseError,
            > {
                decode_response_with_warnings(body)
            }

            fn stop_reason(raw: &str) -> $crate::StopReason {
                stop_reason(raw)
            }
        }
    };
}
pub(super) use impl_codec;
