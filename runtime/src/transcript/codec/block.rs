//! The reader of a content block ([`Content`]): straight into its type when
//! `"type"` is the block's first key, through serde's buffered tagged-enum
//! reader otherwise.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::Deserialize;

use crate::json::key::Key;
use crate::json::raw_json::RawJson;
use crate::message::content::{
    AudioContent, BlockKind, Content, DocumentContent, ImageContent, ProviderBlock,
    RedactedThinkingContent, TextContent, ThinkingContent, ThinkingWire, ToolCall,
};

/// serde's reader of [`Content`] (an internally tagged enum), for a block whose
/// `"type"` is not its first key: it buffers the block, then reads it.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", remote = "Content")]
enum BufferedContent {
    Text(TextContent),
    Image(ImageContent),
    Audio(AudioContent),
    Document(DocumentContent),
    Thinking(ThinkingContent),
    RedactedThinking(RedactedThinkingContent),
    ToolCall(ToolCall),
    ProviderBlock(ProviderBlock),
}

/// The block types, for "unknown variant" errors.
const BLOCK_TYPES: &[&str] = &[
    BlockKind::Text.as_str(),
    BlockKind::Image.as_str(),
    BlockKind::Audio.as_str(),
    BlockKind::Document.as_str(),
    BlockKind::Thinking.as_str(),
    BlockKind::RedactedThinking.as_str(),
    BlockKind::ToolCall.as_str(),
    BlockKind::ProviderBlock.as_str(),
];

/// Reads a block straight into its type when `"type"` is its first key, as
/// every writer we know puts it (ours, pi's). serde's internally tagged reader
/// (kept for the other blocks) first buffers every value of the block, then
/// reads the buffer (see `benches/README.md` for what that costs). Reading in
/// place gives the same blocks and fails on the same input (the property test `blocks_read_in_place_agree_with_serde` in
/// `tests/core/roundtrip.rs` checks both).
impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> de::Visitor<'de> for BlockVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        let Some(first) = map.next_key::<Key<'de>>()? else {
            return Err(de::Error::missing_field("type"));
        };
        if first.as_str() == "type" {
            let tag: Key<'de> = map.next_value()?;
            let rest = de::value::MapAccessDeserializer::new(NoSecondType(map));
            return match tag.as_str() {
                "text" => TextContent::deserialize(rest).map(Content::Text),
                "image" => ImageContent::deserialize(rest).map(Content::Image),
                "audio" => AudioContent::deserialize(rest).map(Content::Audio),
                "document" => DocumentContent::deserialize(rest).map(Content::Document),
                "thinking" => ThinkingWire::deserialize(rest)?.into_block(),
                "redactedThinking" => {
                    RedactedThinkingContent::deserialize(rest).map(Content::RedactedThinking)
                }
                "toolCall" => ToolCall::deserialize(rest).map(Content::ToolCall),
                "providerBlock" => ProviderBlock::deserialize(rest).map(Content::ProviderBlock),
                other => Err(de::Error::unknown_variant(other, BLOCK_TYPES)),
            };
        }
        // Another order: buffer the entries (all of them, repeated keys too)
        // as their text (so what a block keeps as text, tool-call arguments,
        // keeps its order), then read them as serde would.
        let mut entries = vec![(first.into_string(), map.next_value::<RawJson>()?)];
        while let Some(entry) = map.next_entry::<String, RawJson>()? {
            entries.push(entry);
        }
        let mut tags = entries.iter().filter(|(key, _)| key == "type");
        let thinking = tags.next().is_some_and(|(_, tag)| {
            serde_json::from_str::<String>(tag.get()).is_ok_and(|tag| tag == "thinking")
        }) && tags.next().is_none();
        let entries = entries.iter().map(|(key, value)| (key.as_str(), &*value.0));
        if thinking {
            let entries = entries.filter(|(key, _)| *key != "type");
            let buffered = de::value::MapDeserializer::<_, serde_json::Error>::new(entries);
            return ThinkingWire::deserialize(buffered)
                .map_err(de::Error::custom)?
                .into_block();
        }
        let buffered = de::value::MapDeserializer::<_, serde_json::Error>::new(entries);
        BufferedContent::deserialize(buffered).map_err(de::Error::custom)
    }
}

/// The entries of a block after its leading `"type"`; another `"type"` is an
/// error (serde's internally tagged reader reports it too).
struct NoSecondType<A>(A);

impl<'de, A: de::MapAccess<'de>> de::MapAccess<'de> for NoSecondType<A> {
    type Error = A::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.0.next_key::<Key<'de>>()? else {
            return Ok(None);
        };
        if key.as_str() == "type" {
            return Err(de::Error::duplicate_field("type"));
        }
        key.give_to(seed).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}
