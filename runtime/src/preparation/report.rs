//! What preparing changed ([`Report`]) and what validating found ([`Problem`]).

use std::fmt;

/// What kind of change was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ChangeKind {
    /// Thinking, redacted thinking or a signature was removed.
    DroppedThinking,
    /// Thinking became text.
    ThinkingAsText,
    /// A failed (error/aborted) assistant turn was skipped.
    SkippedFailedTurn,
    /// A result was dropped: its call is missing, was skipped with a failed
    /// turn, or already has a result.
    DroppedResult,
    /// A synthetic error result was added for a call without one.
    SyntheticResult,
    /// A result was moved to follow its call.
    ReorderedResult,
    /// A tool-call id was changed.
    MappedId,
    /// An image became a text placeholder.
    ImagePlaceholder,
    /// Images moved out of a tool result into a user message.
    MovedImages,
    /// A user or assistant message with no content left was dropped.
    DroppedEmptyMessage,
    /// A block the provider cannot take was dropped or replaced.
    UnsupportedContent,
    /// Consecutive same-role turns were merged.
    MergedTurns,
    /// An image, audio or document block whose base64 data does not decode
    /// became a text placeholder.
    InvalidMedia,
    /// Nothing was changed: the context is estimated past the target's
    /// context window from this message on.
    OverContextWindow,
    /// A provider's own block, or the citations of a text, was dropped: it
    /// goes back only to the api and provider that wrote it.
    DroppedProviderData,
}

impl ChangeKind {
    /// A short lowercase name, such as `dropped thinking`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::DroppedThinking => "dropped thinking",
            Self::ThinkingAsText => "thinking as text",
            Self::SkippedFailedTurn => "skipped failed turn",
            Self::DroppedResult => "dropped result",
            Self::SyntheticResult => "synthetic result",
            Self::ReorderedResult => "reordered result",
            Self::MappedId => "mapped id",
            Self::ImagePlaceholder => "image placeholder",
            Self::MovedImages => "moved images",
            Self::DroppedEmptyMessage => "dropped empty message",
            Self::UnsupportedContent => "unsupported content",
            Self::MergedTurns => "merged turns",
            Self::InvalidMedia => "invalid media",
            Self::OverContextWindow => "over context window",
            Self::DroppedProviderData => "dropped provider data",
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change, with the index of the input message it touched.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Change {
    /// Index of the message in the input.
    pub index: usize,
    /// What was done.
    pub kind: ChangeKind,
    /// A sentence for a person.
    pub detail: String,
}

impl Change {
    /// A change to input message `index`.
    pub fn new(index: usize, kind: ChangeKind, detail: impl Into<String>) -> Self {
        Self {
            index,
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {}: {}: {}", self.index, self.kind, self.detail)
    }
}

/// Every change made. [`prepare`](crate::prepare) lists its changes by input
/// message index (changes to one message in the order they were made); an
/// encoder appends its own after them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// The changes.
    pub changes: Vec<Change>,
}

impl Report {
    /// Whether nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// How many changes were made.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// The changes, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Change> {
        self.changes.iter()
    }

    /// Adds a change.
    pub fn push(&mut self, change: Change) {
        self.changes.push(change);
    }

    /// Adds a change to input message `index`.
    pub fn record(&mut self, index: usize, kind: ChangeKind, detail: impl Into<String>) {
        self.push(Change::new(index, kind, detail));
    }

    /// How many changes of this kind were made.
    pub fn count(&self, kind: ChangeKind) -> usize {
        self.changes.iter().filter(|c| c.kind == kind).count()
    }

    /// The changes to input message `index`.
    pub fn for_message(&self, index: usize) -> impl Iterator<Item = &Change> + '_ {
        self.changes.iter().filter(move |c| c.index == index)
    }

    /// Whether input message `index` was changed in any way.
    pub fn touches(&self, index: usize) -> bool {
        self.changes.iter().any(|c| c.index == index)
    }
}

impl<'a> IntoIterator for &'a Report {
    type Item = &'a Change;
    type IntoIter = std::slice::Iter<'a, Change>;

    fn into_iter(self) -> Self::IntoIter {
        self.changes.iter()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for change in &self.changes {
            writeln!(f, "{change}")?;
        }
        Ok(())
    }
}

/// What kind of problem [`validate`](crate::project::validate) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProblemKind {
    /// An assistant message ended in `error` or `aborted`; it is not replayed.
    FailedTurn,
    /// A tool call has no result.
    MissingResult,
    /// A tool result answers no earlier call.
    ResultWithoutCall,
    /// A tool result answers a call of a failed turn.
    ResultOfFailedTurn,
    /// A second result for a call that already has one.
    DuplicateResult,
    /// A result does not directly follow its call's turn.
    MisplacedResult,
    /// A tool-call id is used by an earlier call too.
    DuplicateCallId,
    /// A tool call has an empty id.
    EmptyCallId,
    /// A thinking block, text block or tool call has an empty-string signature.
    EmptySignature,
    /// A user or assistant message has no content.
    EmptyMessage,
    /// An image, audio or document block has base64 data that does not decode
    /// (a provider refuses the request).
    InvalidMedia,
}

impl ProblemKind {
    /// A short lowercase name, such as `missing result`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::FailedTurn => "failed turn",
            Self::MissingResult => "missing result",
            Self::ResultWithoutCall => "result without call",
            Self::ResultOfFailedTurn => "result of failed turn",
            Self::DuplicateResult => "duplicate result",
            Self::MisplacedResult => "misplaced result",
            Self::DuplicateCallId => "duplicate call id",
            Self::EmptyCallId => "empty call id",
            Self::EmptySignature => "empty signature",
            Self::EmptyMessage => "empty message",
            Self::InvalidMedia => "invalid media",
        }
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem in a transcript that [`prepare`](crate::prepare) would repair,
/// found by [`validate`](crate::project::validate) without changing anything.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    /// Index of the message in the input.
    pub index: usize,
    /// What is wrong.
    pub kind: ProblemKind,
    /// A sentence for a person.
    pub detail: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {}: {}: {}", self.index, self.kind, self.detail)
    }
}

/// Where a prepared message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provenance {
    /// Input message `.0`, possibly changed as the report says.
    Input(usize),
    /// A synthetic error result for a call of the assistant turn at input index `.0`.
    SyntheticResult(usize),
    /// A user message carrying the images moved out of the tool results of one
    /// turn; `.0` is the input index of the first of those results.
    MovedImages(usize),
}

impl Provenance {
    /// The input index this message is counted against in a [`Report`].
    pub const fn index(self) -> usize {
        match self {
            Self::Input(i) | Self::SyntheticResult(i) | Self::MovedImages(i) => i,
        }
    }

    /// Whether this is an input message (as opposed to one prepare made).
    pub const fn is_input(self) -> bool {
        matches!(self, Self::Input(_))
    }
}
