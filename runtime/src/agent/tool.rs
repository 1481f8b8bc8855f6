//! [`Tool`]: a tool whose arguments are a Rust type, and what it returns.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::message::IntoToolResultContent;
use crate::providers::ToolSpec;
use crate::{AgentMessage, ImageContent, TextContent, ToolArguments, ToolResultContent};

/// A tool the model may call, whose arguments are the Rust type
/// [`Args`](Self::Args).
///
/// The arguments' JSON Schema is generated from the type by `schemars`: a
/// field's doc comment becomes its `description`, and the type's doc comment
/// is the tool's description unless [`description`](Self::description) says
/// otherwise. Arguments that do not decode into the type never reach
/// [`call`](Self::call): the model gets an error result naming the field, and
/// may try again. A tool that fails, panics or runs past its timeout gives an
/// error result too; the run goes on.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::agent::{Tool, ToolError, ToolOutput};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// Adds two numbers.
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs {
///     /// The first number.
///     a: f64,
///     /// The second number.
///     b: f64,
/// }
///
/// struct Add;
///
/// impl Tool for Add {
///     const NAME: &'static str = "add";
///     type Args = AddArgs;
///     async fn call(&self, args: AddArgs) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::text((args.a + args.b).to_string()))
///     }
/// }
///
/// let spec = agentmsg::agent::tool_spec(&Add);
/// assert_eq!(spec.description, "Adds two numbers.");
/// assert_eq!(spec.parameters["properties"]["a"]["description"], "The first number.");
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The name the model calls it by.
    const NAME: &'static str;

    /// The arguments: a type that derives `Deserialize` and `JsonSchema`.
    type Args: DeserializeOwned + JsonSchema + Send;

    /// What the tool does, for the model (default: the doc comment of
    /// [`Args`](Self::Args)).
    fn description(&self) -> Cow<'static, str> {
        Cow::Owned(described::<Self::Args>().1.unwrap_or_default())
    }

    /// Runs the tool.
    fn call(&self, args: Self::Args) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// The JSON Schema of `T`, for a tool's arguments or a structured reply:
/// draft 7, subschemas inlined where the type is not recursive, no `$schema`
/// and no `title`.
pub fn schema_for<T: JsonSchema + ?Sized>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .for_deserialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    schema
}

/// The [`ToolSpec`] of `tool`: its name, description, and the schema of its
/// arguments without their description (which is the tool's).
pub fn tool_spec<T: Tool>(tool: &T) -> ToolSpec {
    ToolSpec::new(T::NAME, tool.description(), described::<T::Args>().0)
}

/// The schema of `T` ([`schema_for`]) without its top-level `description`,
/// and that description (the type's doc comment): a tool's or a structured
/// reply's description goes beside its schema.
pub(super) fn described<T: JsonSchema + ?Sized>() -> (Value, Option<String>) {
    let mut schema = schema_for::<T>();
    let description = match schema.as_object_mut().and_then(|o| o.remove("description")) {
        Some(Value::String(description)) => Some(description),
        _ => None,
    };
    (schema, description)
}

/// What a tool returns: the content the model reads (text, images, JSON),
/// data for the application only, and whether the run should stop after it.
///
/// Structured JSON (what an MCP tool returns as `structuredContent`) is sent
/// to the model as its JSON text, which every API accepts, and kept as the
/// result's `details` when the tool sets none.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolOutput {
    /// What the model reads.
    pub content: Vec<ToolResultContent>,
    /// Structured JSON output.
    pub json: Option<Value>,
    /// Data for the application, never sent to a model (the result's
    /// `details`).
    pub details: Option<Value>,
    /// Whether the run should end after this turn's tools without asking the
    /// model again (pi's `terminate`): the run ends when every result of the
    /// turn sets it.
    pub terminate: bool,
    /// Messages appended after the turn's tool results (an application's own
    /// kinds: a UI-only notice reaches the UI, not the model).
    pub messages: Vec<AgentMessage>,
}

impl ToolOutput {
    /// A text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ToolResultContent::Text(TextContent::new(text))],
            ..Self::default()
        }
    }

    /// A structured result, sent as its JSON text.
    pub fn json(value: impl serde::Serialize) -> Result<Self, ToolError> {
        let value = serde_json::to_value(value)
            .map_err(|e| ToolError::new(format!("the tool's output is not JSON: {e}")))?;
        Ok(Self {
            content: vec![ToolResultContent::Text(TextContent::new(value.to_string()))],
            json: Some(value),
            ..Self::default()
        })
    }

    /// An image result.
    pub fn image(image: ImageContent) -> Self {
        Self {
            content: vec![ToolResultContent::Image(image)],
            ..Self::default()
        }
    }

    /// The same output with one more block (text or an image).
    #[must_use]
    pub fn with(mut self, block: impl IntoToolResultContent) -> Self {
        self.content.push(block.into_tool_result_content());
        self
    }

    /// The same output with data for the application.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The same output, asking the run to end after this turn.
    #[must_use]
    pub fn with_terminate(mut self) -> Self {
        self.terminate = true;
        self
    }

    /// The same output with a message appended after the turn's results.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<AgentMessage>) -> Self {
        self.messages.push(message.into());
        self
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

macro_rules! from_number {
    ($($t:ty),*) => {$(
        impl From<$t> for ToolOutput {
            /// The number as text.
            fn from(value: $t) -> Self {
                Self::text(value.to_string())
            }
        }
    )*};
}

from_number!(i64, u64, usize, f64, bool);

/// A tool's failure, which the model reads as an error result.
///
/// Any error converts into it with `?`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(String);

impl ToolError {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// What the model reads.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for ToolError {
    fn from(error: E) -> Self {
        Self(error.to_string())
    }
}

/// Arguments that do not fit a tool's type: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid arguments for `{tool}`{}: {message}", at(.path))]
pub struct ArgumentsError {
    /// The tool.
    pub tool: String,
    /// The field path (`a`, `items[2].name`; `.` for the whole object).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// ` at `path`` for an error message, or nothing for the whole value.
pub(super) fn at(path: &str) -> String {
    if path.is_empty() || path == "." {
        String::new()
    } else {
        format!(" at `{path}`")
    }
}

/// Decodes `arguments` into `T`, naming the field that does not fit.
///
/// # Errors
/// [`ArgumentsError`] with the field path and serde's reason.
pub fn decode_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: &ToolArguments,
) -> Result<T, ArgumentsError> {
    from_json_at(arguments.as_str()).map_err(|(path, message)| ArgumentsError {
        tool: tool.to_owned(),
        path,
        message,
    })
}

/// Decodes the JSON `text` as `T`, or says where (the field path) and why it
/// does not fit: a tool's arguments, a structured reply.
pub(super) fn from_json_at<T: DeserializeOwned>(text: &str) -> Result<T, (String, String)> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        // serde_json appends " at line L column C", meaningless to a model
        // that wrote one object.
        let mut message = e.into_inner().to_string();
        if let Some(cut) = message.rfind(" at line ") {
            message.truncate(cut);
        }
        (path, message)
    })
}

/// The future of [`DynTool::call`].
pub(crate) type CallFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;

/// A [`Tool`] with its type erased, as the loop keeps it.
pub(crate) trait DynTool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    fn call(self: Arc<Self>, arguments: &ToolArguments) -> CallFuture;
}

struct Typed<T>(T);

impl<T: Tool> DynTool for Typed<T> {
    fn spec(&self) -> ToolSpec {
        tool_spec(&self.0)
    }

    fn call(self: Arc<Self>, arguments: &ToolArguments) -> CallFuture {
        match decode_arguments::<T::Args>(T::NAME, arguments) {
            Ok(args) => Box::pin(async move { self.0.call(args).await }),
            Err(e) => {
                let error = ToolError::new(e.to_string());
                Box::pin(async move { Err(error) })
            }
        }
    }
}

/// A tool made of a name and an async function of its arguments
/// ([`Agent::tool_fn`](super::Agent::tool_fn)), the Vercel AI SDK's
/// `tool({parameters, execute})`: the description is the doc comment of `A`.
pub(crate) struct FnTool<A, F, O> {
    name: String,
    function: F,
    args: std::marker::PhantomData<fn(A) -> O>,
}

impl<A, F, O> FnTool<A, F, O> {
    pub(crate) fn new(name: impl Into<String>, function: F) -> Self {
        Self {
            name: name.into(),
            function,
            args: std::marker::PhantomData,
        }
    }
}

impl<A, F, Fut, O> DynTool for FnTool<A, F, O>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    O: Into<ToolOutput> + 'static,
{
    fn spec(&self) -> ToolSpec {
        let (parameters, description) = described::<A>();
        ToolSpec::new(
            self.name.clone(),
            description.unwrap_or_default(),
            parameters,
        )
    }

    fn call(self: Arc<Self>, arguments: &ToolArguments) -> CallFuture {
        match decode_arguments::<A>(&self.name, arguments) {
            Ok(args) => {
                let future = (self.function)(args);
                Box::pin(async move { future.await.map(Into::into) })
            }
            Err(e) => {
                let error = ToolError::new(e.to_string());
                Box::pin(async move { Err(error) })
            }
        }
    }
}

/// The tools of an agent, by name.
#[derive(Clone, Default)]
pub(crate) struct Toolset {
    tools: HashMap<String, Arc<dyn DynTool>>,
    specs: Vec<ToolSpec>,
}

impl Toolset {
    pub(crate) fn add<T: Tool>(&mut self, tool: T) {
        self.add_dyn(Arc::new(Typed(tool)));
    }

    pub(crate) fn add_dyn(&mut self, tool: Arc<dyn DynTool>) {
        let spec = tool.spec();
        self.specs.retain(|s| s.name != spec.name);
        self.tools.insert(spec.name.clone(), tool);
        self.specs.push(spec);
    }

    pub(crate) fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        self.tools.get(name).cloned()
    }
}

impl fmt::Debug for Toolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.specs.iter().map(|s| &s.name))
            .finish()
    }
}
