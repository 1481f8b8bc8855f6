//! [`Node`]: what reading a session's tree and its id index know of an entry.

use crate::{MessageId, ParentId};

/// An entry's place in a session's tree, what reading links: a session's
/// [`Entry`](super::Entry), or the skeleton of one ([`super::skeleton`]).
pub(crate) trait Node {
    /// Its id.
    fn id(&self) -> Option<&MessageId>;
    /// Its parent as its line declares it.
    fn declared(&self) -> &ParentId;
    /// Its line's number.
    fn line_no(&self) -> usize;
    /// Whether it is a node of the tree (not pi's header).
    fn in_tree(&self) -> bool;
    /// Its parent's index, once linked.
    fn parent(&self) -> Option<usize>;
    /// Links it to its parent.
    fn set_parent(&mut self, parent: Option<usize>);
    /// The first entry a compaction keeps.
    fn first_kept(&self) -> Option<&MessageId>;
    /// pi's version 1 migration: its id and parent.
    fn migrate(&mut self, id: MessageId, declared: ParentId);
    /// pi's version 1 migration: a pi `compaction`'s first kept entry, when
    /// it names none.
    fn keep_from(&mut self, first_kept: Option<MessageId>);
}
