//! The skeleton of a session: each entry's place in the tree (its id, its
//! parent, its line, a compaction's first kept entry) without its message,
//! read, migrated and linked by the session reader's own code
//! ([`EntryReader`], [`finish_reading`]). What the exporter holds of a file
//! it writes the page of ([`crate::export::FileExport`]): a few dozen bytes
//! an entry, never the session.

use super::entry::{Entry, EntryKind};
use super::error::{SessionError, SessionWarning};
use super::index::IdIndex;
use super::node::Node;
use super::read::{finish_reading, path_from, EntryReader};
use super::SessionFormat;
use crate::{MessageId, ParentId};

/// One entry's place in the tree.
#[derive(Debug, Clone)]
pub(crate) struct Bone {
    /// Its line's number.
    pub line_no: usize,
    /// Its id (a pi version 1 entry's, as migrated).
    pub id: Option<MessageId>,
    /// Its parent as its line declares it (as migrated).
    pub declared: ParentId,
    /// Its parent's index.
    pub parent: Option<usize>,
    /// A compaction's first kept entry (boxed: few entries are compactions).
    pub first_kept: Option<Box<MessageId>>,
    /// pi's header (not in the tree).
    header: bool,
    /// A pi `compaction` entry (whose first kept entry a version 1 file
    /// gives by index, resolved by migration).
    pi_compaction: bool,
}

impl Bone {
    /// The place of `entry`, as read (before linking).
    pub fn of(entry: &Entry) -> Self {
        Self {
            line_no: entry.line_no,
            id: entry.id.clone(),
            declared: entry.declared.clone(),
            parent: entry.parent,
            first_kept: entry
                .as_compaction()
                .and_then(|c| c.first_kept_id.clone())
                .map(Box::new),
            header: matches!(entry.kind, EntryKind::Header),
            pi_compaction: matches!(entry.kind, EntryKind::Compaction(_)),
        }
    }
}

impl Node for Bone {
    fn id(&self) -> Option<&MessageId> {
        self.id.as_ref()
    }

    fn declared(&self) -> &ParentId {
        &self.declared
    }

    fn line_no(&self) -> usize {
        self.line_no
    }

    fn in_tree(&self) -> bool {
        !self.header
    }

    fn parent(&self) -> Option<usize> {
        self.parent
    }

    fn set_parent(&mut self, parent: Option<usize>) {
        self.parent = parent;
    }

    fn first_kept(&self) -> Option<&MessageId> {
        self.first_kept.as_deref()
    }

    fn migrate(&mut self, id: MessageId, declared: ParentId) {
        self.id = Some(id);
        self.declared = declared;
    }

    fn keep_from(&mut self, first_kept: Option<MessageId>) {
        if self.pi_compaction && self.first_kept.is_none() {
            self.first_kept = first_kept.map(Box::new);
        }
    }
}

/// The skeleton of a session: its entries' places, linked.
#[derive(Debug)]
pub(crate) struct Skeleton {
    format: SessionFormat,
    bones: Vec<Bone>,
    index: IdIndex,
    leaf: Option<usize>,
    warnings: Vec<SessionWarning>,
}

impl Skeleton {
    /// The skeleton of the entries `reader` read (`bones`, in file order),
    /// with the `warnings` said reading them, migrated and linked as
    /// [`Session::read`](super::Session::read) does; `format` when it is not
    /// the one the reader told (another agent's log, read as the transcript
    /// it converts to).
    ///
    /// # Errors
    /// As `Session::read`: an id taken twice, a `parentId` cycle.
    pub fn from_read(
        reader: &EntryReader<'_>,
        format: Option<SessionFormat>,
        mut bones: Vec<Bone>,
        mut warnings: Vec<SessionWarning>,
    ) -> Result<Self, SessionError> {
        let mut index = IdIndex::default();
        let leaf = finish_reading(
            reader.format(),
            reader,
            &mut bones,
            &mut index,
            &mut warnings,
        )?;
        bones.shrink_to_fit();
        Ok(Self {
            format: format.unwrap_or(reader.format()),
            bones,
            index,
            leaf,
            warnings,
        })
    }

    /// The session's format.
    pub fn format(&self) -> SessionFormat {
        self.format
    }

    /// Every entry's place, in file order.
    pub fn bones(&self) -> &[Bone] {
        &self.bones
    }

    /// What reading said, as the session's warnings.
    pub fn warnings(&self) -> &[SessionWarning] {
        &self.warnings
    }

    /// The index of the entry with this id.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.index.get(&self.bones, id)
    }

    /// The indexes from the root to `leaf` (the last entry when `None`), as
    /// [`Session::path`](super::Session::path) gives them.
    ///
    /// # Errors
    /// When no entry has the id `leaf`.
    pub fn path_indexes(&self, leaf: Option<&str>) -> Result<Vec<usize>, SessionError> {
        let start = match leaf {
            Some(id) => Some(
                self.find(id)
                    .ok_or_else(|| SessionError::NoSuchEntry(id.to_owned()))?,
            ),
            None => self.leaf,
        };
        Ok(path_from(&self.bones, start))
    }
}
