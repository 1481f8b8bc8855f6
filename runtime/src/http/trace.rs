//! [`Trace`]: a `tracing` span per request (feature `tracing`), named and
//! attributed by the OpenTelemetry GenAI semantic conventions; without the
//! feature, a type that does nothing and costs nothing.
//!
//! The span is `chat` with `otel.name` = `chat {model}` (as
//! tracing-opentelemetry names the exported span) and these fields:
//! `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`,
//! `gen_ai.request.max_tokens`, `.temperature`, `.top_p`, `.top_k`, `.seed`,
//! `.presence_penalty`, `.frequency_penalty`, `.stop_sequences`,
//! `server.address`, `server.port`; once the reply is read
//! `gen_ai.response.model`, `gen_ai.response.id`,
//! `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens`,
//! `gen_ai.usage.output_tokens`, `gen_ai.usage.cache_read.input_tokens`,
//! `gen_ai.usage.cache_creation.input_tokens`,
//! `gen_ai.usage.reasoning.output_tokens` (these three only when not zero,
//! as the conventions recommend; the input count includes the cache's, the
//! output count the reasoning's, as they say it should); on failure
//! `error.type`; and
//! agentmsg's own `agentmsg.retries` and `agentmsg.time_to_first_chunk_ms`.
//! Message content (`gen_ai.input.messages`, `gen_ai.output.messages`) is
//! recorded only when the caller opts in
//! ([`ClientBuilder::record_content`](super::ClientBuilder::record_content)).

#[cfg(feature = "tracing")]
mod imp {
    use std::time::Instant;

    use tracing::field::Empty;

    use crate::http::ClientError;
    use crate::providers::{Api, Request};
    use crate::AssistantMessage;

    /// The span of one request, and when it began (until its first chunk
    /// came).
    #[derive(Debug)]
    pub(crate) struct Trace {
        span: tracing::Span,
        start: Option<Instant>,
        content: bool,
    }

    impl Default for Trace {
        /// A trace of no span (what is left where one was taken).
        fn default() -> Self {
            Self {
                span: tracing::Span::none(),
                start: None,
                content: false,
            }
        }
    }

    /// The `gen_ai.provider.name` of an endpoint: its provider as the
    /// conventions spell the well-known ones, else the API's.
    fn provider_name(api: Api, provider: Option<&str>) -> String {
        match provider {
            Some("mistral") => "mistral_ai".to_owned(),
            Some("xai") => "x_ai".to_owned(),
            Some(other) => other.to_owned(),
            None => match api {
                #[cfg(feature = "gemini")]
                Api::Gemini => "gcp.gemini".to_owned(),
                #[cfg(feature = "anthropic")]
                Api::Anthropic => "anthropic".to_owned(),
                #[allow(unreachable_patterns)]
                _ => "openai".to_owned(),
            },
        }
    }

    impl Trace {
        /// The span of `request` to `url`, with the request's parameters
        /// and, when `content` is set, its encoded messages.
        pub(crate) fn start(
            api: Api,
            provider: Option<&str>,
            request: &Request<'_>,
            url: &str,
            body: &serde_json::Value,
            content: bool,
        ) -> Self {
            let parsed = reqwest::Url::parse(url).ok();
            let span = tracing::info_span!(
                "chat",
                otel.name = %format!("chat {}", request.model),
                otel.kind = "client",
                gen_ai.operation.name = "chat",
                gen_ai.provider.name = %provider_name(api, provider),
                gen_ai.request.model = %request.model,
                gen_ai.request.max_tokens = request.max_tokens,
                gen_ai.request.temperature = request.temperature,
                gen_ai.request.top_p = request.top_p,
                gen_ai.request.top_k = request.top_k,
                gen_ai.request.seed = request.seed,
                gen_ai.request.presence_penalty = request.presence_penalty,
                gen_ai.request.frequency_penalty = request.frequency_penalty,
                gen_ai.request.stop_sequences = Empty,
                server.address = parsed.as_ref().and_then(|u| u.host_str()),
                server.port = parsed.as_ref().and_then(reqwest::Url::port_or_known_default),
                gen_ai.response.model = Empty,
                gen_ai.response.id = Empty,
                gen_ai.response.finish_reasons = Empty,
                gen_ai.usage.input_tokens = Empty,
                gen_ai.usage.output_tokens = Empty,
                gen_ai.usage.cache_read.input_tokens = Empty,
                gen_ai.usage.cache_creation.input_tokens = Empty,
                gen_ai.usage.reasoning.output_tokens = Empty,
                gen_ai.input.messages = Empty,
                gen_ai.output.messages = Empty,
                error.type = Empty,
                agentmsg.retries = 0u32,
                agentmsg.time_to_first_chunk_ms = Empty,
            );
            // Serialized only for a subscriber that wants the span.
            let content = content && !span.is_disabled();
            if !request.stop.is_empty() && !span.is_disabled() {
                let stop = serde_json::to_string(&request.stop).unwrap_or_default();
                span.record("gen_ai.request.stop_sequences", stop.as_str());
            }
            if content {
                let messages = body
                    .get("messages")
                    .or_else(|| body.get("input"))
                    .or_else(|| body.get("contents"))
                    .map(serde_json::Value::to_string)
                    .unwrap_or_default();
                span.record("gen_ai.input.messages", messages.as_str());
            }
            Self {
                span,
                start: Some(Instant::now()),
                content,
            }
        }

        /// One more retry.
        pub(crate) fn retried(&self, retries: u32) {
            self.span.record("agentmsg.retries", retries);
        }

        /// A chunk of the reply came (the first one is timed).
        pub(crate) fn chunk(&mut self) {
            if let Some(start) = self.start.take() {
                let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.span.record("agentmsg.time_to_first_chunk_ms", ms);
            }
        }

        /// The reply, read whole.
        pub(crate) fn finish(&self, message: &AssistantMessage) {
            let span = &self.span;
            if !message.model.is_empty() {
                span.record("gen_ai.response.model", message.model.as_str());
            }
            if let Some(id) = &message.response_id {
                span.record("gen_ai.response.id", id.as_str());
            }
            let reasons = format!("[\"{}\"]", message.stop_reason);
            span.record("gen_ai.response.finish_reasons", reasons.as_str());
            let usage = &message.usage;
            span.record(
                "gen_ai.usage.input_tokens",
                usage.input + usage.cache_read + usage.cache_write,
            );
            span.record("gen_ai.usage.output_tokens", usage.output);
            // The GenAI conventions (semantic-conventions-genai, spans.yaml)
            // recommend these "when available and non-zero".
            for (field, count) in [
                ("gen_ai.usage.cache_read.input_tokens", usage.cache_read),
                (
                    "gen_ai.usage.cache_creation.input_tokens",
                    usage.cache_write,
                ),
                ("gen_ai.usage.reasoning.output_tokens", usage.reasoning),
            ] {
                if count > 0 {
                    span.record(field, count);
                }
            }
            if self.content {
                let output = serde_json::to_string(&message.content).unwrap_or_default();
                span.record("gen_ai.output.messages", output.as_str());
            }
        }

        /// The request failed.
        pub(crate) fn fail(&self, error: &ClientError) {
            let kind = match error {
                ClientError::Api(e) | ClientError::Stream { error: e, .. } => {
                    e.error_type.clone().unwrap_or_else(|| e.status.to_string())
                }
                ClientError::Connect { timeout: true, .. }
                | ClientError::Transport { timeout: true, .. } => "timeout".to_owned(),
                ClientError::Connect { .. } => "connect".to_owned(),
                ClientError::Transport { .. } => "transport".to_owned(),
                ClientError::Redirect { .. } => "redirect".to_owned(),
                ClientError::NotAStream { .. } | ClientError::Decode { .. } => "decode".to_owned(),
                _ => "_OTHER".to_owned(),
            };
            self.span.record("error.type", kind.as_str());
        }
    }
}

#[cfg(not(feature = "tracing"))]
mod imp {
    use crate::http::ClientError;
    use crate::providers::{Api, Request};
    use crate::AssistantMessage;

    /// Nothing: the `tracing` feature is off.
    #[derive(Debug, Default)]
    pub(crate) struct Trace;

    impl Trace {
        pub(crate) fn start(
            _: Api,
            _: Option<&str>,
            _: &Request<'_>,
            _: &str,
            _: &serde_json::Value,
            _: bool,
        ) -> Self {
            Self
        }
        pub(crate) fn retried(&self, _: u32) {}
        pub(crate) fn chunk(&mut self) {}
        pub(crate) fn finish(&self, _: &AssistantMessage) {}
        pub(crate) fn fail(&self, _: &ClientError) {}
    }
}

pub(crate) use imp::Trace;
