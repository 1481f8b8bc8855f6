//! The model a request goes to and what it accepts.

/// What to do with thinking that cannot be replayed to the target: thinking from
/// another provider, api or model, or unsigned thinking for a target that only
/// takes signed thinking back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ThinkingPolicy {
    /// Remove thinking, redacted thinking and signatures (the default).
    ///
    /// Replaying another model's reasoning as text teaches the target to write
    /// its own reasoning into its answers (pydantic-ai#5869), so it is dropped
    /// unless asked for.
    #[default]
    Drop,
    /// Turn thinking into plain text (no tags around it); drop signatures and
    /// redacted blocks, which are opaque.
    AsText,
}

/// Which tool-call ids a target accepts. Ids that do not fit are mapped by
/// [`prepare`](crate::prepare) (see [`IdMap`](crate::project::IdMap)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdRule {
    /// Anthropic Messages: `^[a-zA-Z0-9_-]{1,64}$` (the `tool_use.id` pattern;
    /// the API caps the length at 64).
    Anthropic,
    /// OpenAI Chat Completions: 1 to 40 characters (`string too long. Expected a
    /// string with maximum length 40`).
    OpenAiChat,
    /// OpenAI Responses: `call_id` is 1 to 64 characters (`minLength: 1,
    /// maxLength: 64` in the published spec).
    OpenAiResponses,
    /// Gemini: `FunctionCall.id` is an optional string with no documented pattern
    /// or length, so any non-empty id is kept.
    Gemini,
    /// Mistral (La Plateforme's Chat Completions): exactly 9 characters of
    /// `[a-zA-Z0-9]` (`Tool call id was … but must be a-z, A-Z, 0-9, with a
    /// length of 9`). A mapped id is 9 base-62 digits of the stored id's
    /// SHA-256, as pi maps them.
    Mistral,
    /// Any non-empty id.
    Any,
}

impl IdRule {
    /// The longest id the rule accepts, in characters; `None` when unbounded.
    pub const fn max_len(self) -> Option<usize> {
        match self {
            Self::Anthropic | Self::OpenAiResponses => Some(64),
            Self::OpenAiChat => Some(40),
            Self::Mistral => Some(9),
            Self::Gemini | Self::Any => None,
        }
    }

    /// Whether `c` may appear in an id.
    pub fn allows_char(self, c: char) -> bool {
        match self {
            Self::Anthropic => c.is_ascii_alphanumeric() || c == '_' || c == '-',
            Self::Mistral => c.is_ascii_alphanumeric(),
            Self::OpenAiChat | Self::OpenAiResponses | Self::Gemini | Self::Any => true,
        }
    }

    /// Whether the target accepts `id` as it is.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::project::IdRule;
    /// assert!(IdRule::Anthropic.accepts("toolu_01A-b"));
    /// assert!(!IdRule::Anthropic.accepts("functions.write_todos:0"));
    /// assert!(!IdRule::OpenAiChat.accepts(&"x".repeat(41)));
    /// assert!(!IdRule::Any.accepts(""));
    /// assert!(IdRule::Mistral.accepts("a1B2c3D4e"));
    /// assert!(!IdRule::Mistral.accepts("toolu_01A"));
    /// ```
    pub fn accepts(self, id: &str) -> bool {
        if id.is_empty() {
            return false;
        }
        if self == Self::Mistral && id.len() != 9 {
            return false;
        }
        if let Some(max) = self.max_len() {
            if id.chars().count() > max {
                return false;
            }
        }
        id.chars().all(|c| self.allows_char(c))
    }

    /// The rule an api uses by default: `anthropic-messages` → [`Anthropic`](Self::Anthropic),
    /// `openai-responses` → [`OpenAiResponses`](Self::OpenAiResponses),
    /// `google-generative-ai` → [`Gemini`](Self::Gemini), anything else (Chat
    /// Completions and the servers that copy it) → [`OpenAiChat`](Self::OpenAiChat).
    pub fn for_api(api: &str) -> Self {
        match api {
            "anthropic-messages" => Self::Anthropic,
            "openai-responses" => Self::OpenAiResponses,
            "google-generative-ai" => Self::Gemini,
            _ => Self::OpenAiChat,
        }
    }

    /// The rule of a provider on an api: a provider with rules of its own
    /// (`mistral` → [`Mistral`](Self::Mistral)), else the api's
    /// ([`for_api`](Self::for_api)).
    ///
    /// The other OpenAI-compatible servers that the HTTP client's
    /// `Endpoint::compatible` names take the api's
    /// ids: Groq, xAI, DeepSeek and OpenRouter pass Chat Completions ids
    /// through (OpenRouter maps them for the model behind it); Ollama, vLLM
    /// and LM Studio accept any string.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::project::IdRule;
    /// assert_eq!(IdRule::for_provider("mistral", "openai-completions"), IdRule::Mistral);
    /// assert_eq!(IdRule::for_provider("groq", "openai-completions"), IdRule::OpenAiChat);
    /// ```
    pub fn for_provider(provider: &str, api: &str) -> Self {
        match provider {
            "mistral" => Self::Mistral,
            _ => Self::for_api(api),
        }
    }
}

/// The model a request goes to, and what it can take.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::Target;
/// use agentmsg::project::{IdRule, ThinkingPolicy};
/// let target = Target::new("openai", "openai-completions", "gpt-4o-mini")
///     .vision(false)
///     .thinking(ThinkingPolicy::AsText);
/// assert_eq!(target.id_rule, IdRule::OpenAiChat);
/// assert!(!target.tool_result_images);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Target {
    /// The provider, such as `anthropic`.
    pub provider: String,
    /// The API, such as `anthropic-messages`.
    pub api: String,
    /// The model id.
    pub model: String,
    /// Whether the model reads images. Without vision, every image becomes a
    /// text placeholder naming its MIME type.
    pub vision: bool,
    /// Whether tool results may carry images. Where they may not, the images
    /// move into a user message right after the results.
    pub tool_result_images: bool,
    /// Whether assistant turns may carry images (an image the model made).
    /// Only Gemini takes them back (`inlineData` in a `model` turn); elsewhere
    /// such an image becomes a text placeholder.
    pub assistant_images: bool,
    /// Whether the target takes back thinking that has no signature from the
    /// model that wrote it. Anthropic, OpenAI Responses and Gemini verify
    /// reasoning by its signature (an unsigned block is a 400, pydantic-ai#7597),
    /// so for them unsigned thinking is handled like foreign thinking.
    pub unsigned_thinking: bool,
    /// Which tool-call ids it accepts.
    pub id_rule: IdRule,
    /// What to do with thinking that cannot be replayed.
    pub thinking: ThinkingPolicy,
    /// The model's context window in tokens, when known: a context estimated
    /// past it is reported ([`ChangeKind::OverContextWindow`]). The encoders
    /// take it from the model catalog.
    ///
    /// [`ChangeKind::OverContextWindow`]: crate::project::ChangeKind::OverContextWindow
    pub context_window: Option<u64>,
}

impl Target {
    /// A target with the defaults of its api: vision on; tool-result images,
    /// signed-only thinking and the id rule as the api takes them (the id
    /// rule as the provider takes it, for one with rules of its own:
    /// [`IdRule::for_provider`])
    /// (`anthropic-messages`: images in tool results, signed thinking only,
    /// [`IdRule::Anthropic`]; `openai-responses`: signed thinking only,
    /// [`IdRule::OpenAiResponses`]; `google-generative-ai`: signed thinking only,
    /// [`IdRule::Gemini`], images in assistant turns; anything else: unsigned
    /// thinking allowed,
    /// [`IdRule::OpenAiChat`]); thinking policy [`ThinkingPolicy::Drop`].
    pub fn new(
        provider: impl Into<String>,
        api: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        let api = api.into();
        let provider = provider.into();
        let (tool_result_images, unsigned_thinking) = match api.as_str() {
            "anthropic-messages" => (true, false),
            "openai-responses" | "google-generative-ai" => (false, false),
            _ => (false, true),
        };
        Self {
            id_rule: IdRule::for_provider(&provider, &api),
            provider,
            assistant_images: api == "google-generative-ai",
            api,
            model: model.into(),
            vision: true,
            tool_result_images,
            unsigned_thinking,
            thinking: ThinkingPolicy::Drop,
            context_window: None,
        }
    }

    /// The same target with a context window of `tokens`.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::{prepare, Message, Target};
    /// use agentmsg::project::ChangeKind;
    /// let target = Target::new("openai", "openai-completions", "small").context_window(4);
    /// let prepared = prepare(&[Message::user("short"), Message::user("x".repeat(40))], &target);
    /// let change = prepared.report.iter().next().unwrap();
    /// assert_eq!((change.index, change.kind), (1, ChangeKind::OverContextWindow));
    /// ```
    #[must_use]
    pub fn context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Whether the model reads images.
    #[must_use]
    pub fn vision(mut self, vision: bool) -> Self {
        self.vision = vision;
        self
    }

    /// Whether tool results may carry images.
    #[must_use]
    pub fn tool_result_images(mut self, allowed: bool) -> Self {
        self.tool_result_images = allowed;
        self
    }

    /// Whether assistant turns may carry images.
    #[must_use]
    pub fn assistant_images(mut self, allowed: bool) -> Self {
        self.assistant_images = allowed;
        self
    }

    /// Whether unsigned thinking from this same model may be replayed.
    #[must_use]
    pub fn unsigned_thinking(mut self, allowed: bool) -> Self {
        self.unsigned_thinking = allowed;
        self
    }

    /// Which tool-call ids the target accepts.
    #[must_use]
    pub fn id_rule(mut self, rule: IdRule) -> Self {
        self.id_rule = rule;
        self
    }

    /// What to do with thinking that cannot be replayed.
    #[must_use]
    pub fn thinking(mut self, policy: ThinkingPolicy) -> Self {
        self.thinking = policy;
        self
    }

    /// Whether an assistant message from `provider`/`api`/`model` was written by
    /// this very target, so its thinking and signatures may go back to it.
    ///
    /// A response names the snapshot that answered (`claude-sonnet-4-5-20250929`,
    /// `gpt-4o-2024-08-06`, `models/gemini-2.5-pro`) where the request named an
    /// alias (`claude-sonnet-4-5`, `gpt-4o`, `gemini-2.5-pro`): the two are the
    /// same model here, so a decoded reply's reasoning goes back to the alias it
    /// was asked for.
    ///
    /// Claude is one model on the three platforms that serve it with
    /// Anthropic's signatures: the Anthropic API (`anthropic` /
    /// `anthropic-messages`, Claude on Vertex AI included, which speaks it),
    /// and Amazon Bedrock (`amazon-bedrock` / `bedrock-converse-stream`).
    /// Anthropic documents that a thinking signature made on one of them
    /// verifies on the others, so thinking moves between them when the model
    /// is the same, named each platform's way
    /// (`claude-sonnet-4-5-20250929`, `us.anthropic.claude-sonnet-4-5-20250929-v1:0`,
    /// an ARN ending in either, `claude-sonnet-4-5@20250929`).
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::Target;
    /// let bedrock = Target::new(
    ///     "amazon-bedrock",
    ///     "bedrock-converse-stream",
    ///     "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    /// );
    /// assert!(bedrock.produced("anthropic", "anthropic-messages", "claude-sonnet-4-5-20250929"));
    /// assert!(!bedrock.produced("anthropic", "anthropic-messages", "claude-opus-4-1-20250805"));
    /// let vertex = Target::new("anthropic", "anthropic-messages", "claude-sonnet-4-5@20250929");
    /// assert!(vertex.produced("anthropic", "anthropic-messages", "claude-sonnet-4-5-20250929"));
    /// assert!(vertex.produced("amazon-bedrock", "bedrock-converse-stream", "anthropic.claude-sonnet-4-5-20250929-v1:0"));
    /// ```
    pub fn produced(&self, provider: &str, api: &str, model: &str) -> bool {
        if self.model.is_empty() {
            return false;
        }
        if self.provider == provider
            && self.api == api
            && (self.model == model || model_base(&self.model) == model_base(model))
        {
            return true;
        }
        match (
            claude_model(&self.provider, &self.api, &self.model),
            claude_model(provider, api, model),
        ) {
            (Some(ours), Some(theirs)) => model_base(&ours) == model_base(&theirs),
            _ => false,
        }
    }
}

/// The Claude model an id names on a platform whose thinking signatures are
/// Anthropic's, in Anthropic's spelling (`claude-sonnet-4-5-20250929`):
/// without an ARN's path, a Bedrock region and `anthropic.` prefix, a
/// Bedrock version suffix (`-v1:0`), with Vertex's `@date` as `-date`.
/// `None` for another platform or a model that is not Claude.
fn claude_model(provider: &str, api: &str, model: &str) -> Option<String> {
    if !matches!(
        (provider, api),
        ("anthropic", "anthropic-messages") | ("amazon-bedrock", "bedrock-converse-stream")
    ) {
        return None;
    }
    let model = model.rsplit('/').next().unwrap_or(model);
    let model = match model.find("anthropic.") {
        Some(at) => &model[at + "anthropic.".len()..],
        None => model,
    };
    if !model.starts_with("claude-") {
        return None;
    }
    let model = match model.rsplit_once(':') {
        Some((base, revision)) if revision.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => model,
    };
    let model = match model.rsplit_once("-v") {
        Some((base, version))
            if !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base
        }
        _ => model,
    };
    Some(model.replacen('@', "-", 1))
}

/// A model id without a `models/` prefix and without a trailing snapshot date
/// (`-20250929` or `-2024-08-06`).
fn model_base(model: &str) -> &str {
    let model = model.strip_prefix("models/").unwrap_or(model);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((base, date)) = model.rsplit_once('-') {
        if date.len() == 8 && digits(date) {
            return base;
        }
    }
    let parts: Vec<&str> = model.rsplitn(4, '-').collect();
    if let [day, month, year, base] = parts[..] {
        if year.len() == 4
            && month.len() == 2
            && day.len() == 2
            && [year, month, day].into_iter().all(digits)
        {
            return base;
        }
    }
    model
}
