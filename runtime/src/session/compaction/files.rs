//! The files a summarised span read and changed, carried from compaction to
//! compaction as pi carries them: in the compaction's `details`
//! (`{"readFiles": […], "modifiedFiles": […]}`) and at the end of its summary
//! (`<read-files>` and `<modified-files>`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::serialize::Js;
use crate::custom::CompactionSummary;
use crate::{AgentMessage, Message};

/// The paths a span of a session read and changed, as pi's
/// `computeFileLists` gives them: a path read and also written or edited is
/// only in `modified_files`; both lists sorted as JavaScript sorts strings
/// (by UTF-16 units), without repeats.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::session::FileLists;
/// let lists = FileLists::new(["b.rs", "a.rs", "c.rs"], ["c.rs"]);
/// assert_eq!(lists.read_files, ["a.rs", "b.rs"]);
/// assert_eq!(lists.modified_files, ["c.rs"]);
/// assert_eq!(
///     lists.summary_suffix(),
///     "\n\n<read-files>\na.rs\nb.rs\n</read-files>\n\n<modified-files>\nc.rs\n</modified-files>"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLists {
    /// The paths only read.
    pub read_files: Vec<String>,
    /// The paths written or edited.
    pub modified_files: Vec<String>,
}

/// What [`FileLists`] collects, before it is sorted.
#[derive(Debug, Default)]
pub(super) struct FileOps {
    read: BTreeSet<String>,
    modified: BTreeSet<String>,
}

impl FileOps {
    /// The lists a previous compaction carried in its `details` (pi's own
    /// compactions; an extension's is not read: see
    /// [`CompactionSummary::details`]).
    pub(super) fn carry(&mut self, previous: &CompactionSummary) {
        let Some(details) = &previous.details else {
            return;
        };
        let strings = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        self.read.extend(strings("readFiles"));
        self.modified.extend(strings("modifiedFiles"));
    }

    /// The paths of the `read`, `write` and `edit` calls of an assistant
    /// message (pi's `extractFileOpsFromMessage`: a call whose `path` is a
    /// non-empty string).
    pub(super) fn add(&mut self, message: &AgentMessage) {
        let Some(Message::Assistant(a)) = message.as_llm() else {
            return;
        };
        for call in a.tool_calls() {
            // As JavaScript reads `args.path`: a repeated key's last value.
            let path = match Js::parse(call.arguments.as_str()) {
                Some(Js::Object(entries)) => entries.into_iter().find_map(|(k, v)| match v {
                    Js::String(path) if k == "path" => Some(path),
                    _ => None,
                }),
                _ => None,
            };
            let Some(path) = path.filter(|p| !p.is_empty()) else {
                continue;
            };
            match call.name.as_str() {
                "read" => {
                    self.read.insert(path);
                }
                "write" | "edit" => {
                    self.modified.insert(path);
                }
                _ => {}
            }
        }
    }

    pub(super) fn lists(self) -> FileLists {
        FileLists::new(self.read, self.modified)
    }
}

impl FileLists {
    /// The lists of these paths read and changed (a changed path is not
    /// listed as read).
    pub fn new<R, M>(read: R, modified: M) -> Self
    where
        R: IntoIterator,
        R::Item: Into<String>,
        M: IntoIterator,
        M::Item: Into<String>,
    {
        let modified: BTreeSet<String> = modified.into_iter().map(Into::into).collect();
        let read: BTreeSet<String> = read
            .into_iter()
            .map(Into::into)
            .filter(|p| !modified.contains(p))
            .collect();
        Self::sorted(read.into_iter().collect(), modified.into_iter().collect())
    }

    fn sorted(mut read: Vec<String>, mut modified: Vec<String>) -> Self {
        // JavaScript's default sort compares UTF-16 units, which orders
        // characters past U+FFFF before U+E000..U+FFFF, unlike `str`'s order.
        let by_units = |a: &String, b: &String| a.encode_utf16().cmp(b.encode_utf16());
        read.sort_by(by_units);
        modified.sort_by(by_units);
        Self {
            read_files: read,
            modified_files: modified,
        }
    }

    /// Whether neither list has a path.
    pub fn is_empty(&self) -> bool {
        self.read_files.is_empty() && self.modified_files.is_empty()
    }

    /// What pi appends to a summary (`formatFileOperations`): a blank line,
    /// then `<read-files>` and `<modified-files>` sections, each line a path;
    /// an empty list has no section, and no path at all adds nothing.
    pub fn summary_suffix(&self) -> String {
        let mut sections = Vec::new();
        if !self.read_files.is_empty() {
            sections.push(format!(
                "<read-files>\n{}\n</read-files>",
                self.read_files.join("\n")
            ));
        }
        if !self.modified_files.is_empty() {
            sections.push(format!(
                "<modified-files>\n{}\n</modified-files>",
                self.modified_files.join("\n")
            ));
        }
        if sections.is_empty() {
            return String::new();
        }
        format!("\n\n{}", sections.join("\n\n"))
    }
}
