//! One value of a custom body, handed from the input to the type's
//! `Deserialize` through object-safe calls, so that neither side is compiled
//! for the other.
//!
//! A registered type's code is compiled in the crate that declares it, and
//! when optimized, in every such crate again: generic code is shared between
//! crates only in unoptimized builds. So what a type's `Deserialize` calls for
//! each value should cost as little code per field type as it can, and the
//! input's parser should be compiled once, here.
//!
//! The reading side ([`Live`], generic, compiled per visitor) names what the
//! type asked for as a [`Hint`] (the `deserialize_*` method called) and gets
//! back one [`Event`] (the `visit_*` call the input made). The input side
//! ([`Give`], compiled here once per input) calls the input's own
//! `deserialize_*` method for the hint. Per visitor that is one match over the
//! events the hint can be answered with ([`Answers`]: for a struct's visitor,
//! a map or a sequence), where `erased_serde` compiles a vtable of some thirty
//! methods, each boxing its result. Sequences, maps and enums are read as the
//! input reads them, one element at a time, so an error inside them is raised
//! (and placed) where the input raises it. A struct's keys are read here as
//! text ([`LiveFields`]), so its field visitor is compiled for `visit_str`
//! alone.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, Expected, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};

use crate::json::key::Key;

/// The error of both sides: the input's, carried as its text.
type Error = serde_json::Error;

/// Reads one value from a source (a closure of the reading side).
pub(crate) type Read<'r, 'de> = &'r mut dyn FnMut(&mut dyn Source<'de>) -> Result<(), Error>;

/// What a type's `Deserialize` asked for: the `deserialize_*` method it called.
#[derive(Clone, Copy)]
pub(crate) enum Hint {
    Any,
    Bool,
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    F32,
    F64,
    Char,
    Str,
    String,
    Bytes,
    ByteBuf,
    Option,
    Unit,
    UnitStruct(&'static str),
    NewtypeStruct(&'static str),
    Seq,
    Tuple(usize),
    TupleStruct(&'static str, usize),
    Map,
    Struct(&'static str, &'static [&'static str]),
    Enum(&'static str, &'static [&'static str]),
    Identifier,
    IgnoredAny,
}

/// What the input gave: one `visit_*` call. (A visitor's narrower numbers,
/// `visit_i8` and the like, are `visit_i64` and `visit_u64` unless it says
/// otherwise, as here.)
pub(crate) enum Event<'a, 'de> {
    Bool(bool),
    I64(i64),
    U64(u64),
    I128(i128),
    U128(u128),
    F64(f64),
    Char(char),
    Str(&'a str),
    BorrowedStr(&'de str),
    String(String),
    Bytes(&'a [u8]),
    BorrowedBytes(&'de [u8]),
    ByteBuf(Vec<u8>),
    None,
    Unit,
    Some(&'a mut dyn Source<'de>),
    Newtype(&'a mut dyn Source<'de>),
    Seq(&'a mut dyn Items<'de>),
    Map(&'a mut dyn Items<'de>),
    Enum(&'a mut dyn Variant<'de>),
}

/// The reading side of one value: the visitor waiting for its event.
pub(crate) trait Sink<'de> {
    /// What the visitor expects, for the input's "invalid type" errors.
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// The input's one call.
    fn visit(&mut self, event: Event<'_, 'de>) -> Result<(), Error>;
}

/// The input side of one value.
pub(crate) trait Source<'de> {
    /// Reads the value as `hint` asks and gives `sink` what was found.
    fn give(&mut self, hint: Hint, sink: &mut dyn Sink<'de>) -> Result<(), Error>;
}

/// The elements of a sequence, or the keys and values of a map.
pub(crate) trait Items<'de> {
    /// Gives the next element (or key) to `read`; `false` at the end.
    fn next(&mut self, read: Read<'_, 'de>) -> Result<bool, Error>;
    /// Gives the value of the last key to `read`.
    fn value(&mut self, read: Read<'_, 'de>) -> Result<(), Error>;
    /// How many are left, if known.
    fn size_hint(&self) -> Option<usize>;
}

/// An enum's variant: its key first, then its content as the type asks.
pub(crate) trait Variant<'de> {
    /// Gives the variant's key to `read`.
    fn key(&mut self, read: Read<'_, 'de>) -> Result<(), Error>;
    /// A variant without content.
    fn unit(&mut self) -> Result<(), Error>;
    /// A newtype variant's value, given to `read`.
    fn newtype(&mut self, read: Read<'_, 'de>) -> Result<(), Error>;
    /// A tuple variant's content.
    fn tuple(&mut self, len: usize, sink: &mut dyn Sink<'de>) -> Result<(), Error>;
    /// A struct variant's content.
    fn structure(
        &mut self,
        fields: &'static [&'static str],
        sink: &mut dyn Sink<'de>,
    ) -> Result<(), Error>;
}

fn text<E: de::Error>(error: impl fmt::Display) -> E {
    E::custom(error)
}

// The input side: compiled here, once per input deserializer.

/// A deserializer as a [`Source`]; it reads one value.
pub(crate) struct Give<D>(pub(crate) Option<D>);

impl<'de, D: Deserializer<'de>> Source<'de> for Give<D> {
    fn give(&mut self, hint: Hint, sink: &mut dyn Sink<'de>) -> Result<(), Error> {
        let Some(d) = self.0.take() else {
            return Err(de::Error::custom("a value was read twice"));
        };
        let v = Forward(sink);
        match hint {
            Hint::Any => d.deserialize_any(v),
            Hint::Bool => d.deserialize_bool(v),
            Hint::I8 => d.deserialize_i8(v),
            Hint::I16 => d.deserialize_i16(v),
            Hint::I32 => d.deserialize_i32(v),
            Hint::I64 => d.deserialize_i64(v),
            Hint::I128 => d.deserialize_i128(v),
            Hint::U8 => d.deserialize_u8(v),
            Hint::U16 => d.deserialize_u16(v),
            Hint::U32 => d.deserialize_u32(v),
            Hint::U64 => d.deserialize_u64(v),
            Hint::U128 => d.deserialize_u128(v),
            Hint::F32 => d.deserialize_f32(v),
            Hint::F64 => d.deserialize_f64(v),
            Hint::Char => d.deserialize_char(v),
            Hint::Str => d.deserialize_str(v),
            Hint::String => d.deserialize_string(v),
            Hint::Bytes => d.deserialize_bytes(v),
            Hint::ByteBuf => d.deserialize_byte_buf(v),
            Hint::Option => d.deserialize_option(v),
            Hint::Unit => d.deserialize_unit(v),
            Hint::UnitStruct(name) => d.deserialize_unit_struct(name, v),
            Hint::NewtypeStruct(name) => d.deserialize_newtype_struct(name, v),
            Hint::Seq => d.deserialize_seq(v),
            Hint::Tuple(len) => d.deserialize_tuple(len, v),
            Hint::TupleStruct(name, len) => d.deserialize_tuple_struct(name, len, v),
            Hint::Map => d.deserialize_map(v),
            Hint::Struct(name, fields) => d.deserialize_struct(name, fields, v),
            Hint::Enum(name, variants) => d.deserialize_enum(name, variants, v),
            Hint::Identifier => d.deserialize_identifier(v),
            Hint::IgnoredAny => d.deserialize_ignored_any(v),
        }
        .map_err(text)
    }
}

/// Gives a value of the input to a [`Read`].
pub(crate) struct Seed<'r, 'de>(pub(crate) Read<'r, 'de>);

impl<'de> DeserializeSeed<'de> for Seed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        (self.0)(&mut Give(Some(deserializer))).map_err(text)
    }
}

/// The input's visitor: forwards each call to the sink.
struct Forward<'s, 'de>(&'s mut dyn Sink<'de>);

macro_rules! forward {
    ($($method:ident($ty:ty) => $event:ident,)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<(), E> {
            self.0.visit(Event::$event(v)).map_err(text)
        }
    )*};
}

impl<'de> Visitor<'de> for Forward<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward! {
        visit_bool(bool) => Bool,
        visit_i64(i64) => I64,
        visit_u64(u64) => U64,
        visit_i128(i128) => I128,
        visit_u128(u128) => U128,
        visit_f64(f64) => F64,
        visit_char(char) => Char,
        visit_str(&str) => Str,
        visit_borrowed_str(&'de str) => BorrowedStr,
        visit_string(String) => String,
        visit_bytes(&[u8]) => Bytes,
        visit_borrowed_bytes(&'de [u8]) => BorrowedBytes,
        visit_byte_buf(Vec<u8>) => ByteBuf,
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.0.visit(Event::None).map_err(text)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.visit(Event::Unit).map_err(text)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.visit(Event::Some(&mut Give(Some(d)))).map_err(text)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0
            .visit(Event::Newtype(&mut Give(Some(d))))
            .map_err(text)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.0.visit(Event::Seq(&mut SeqItems(seq))).map_err(text)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.0.visit(Event::Map(&mut MapItems(map))).map_err(text)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        self.0
            .visit(Event::Enum(&mut EnumState::Access(data)))
            .map_err(text)
    }
}

struct SeqItems<A>(A);

impl<'de, A: SeqAccess<'de>> Items<'de> for SeqItems<A> {
    fn next(&mut self, read: Read<'_, 'de>) -> Result<bool, Error> {
        match self.0.next_element_seed(Seed(read)) {
            Ok(found) => Ok(found.is_some()),
            Err(error) => Err(text(error)),
        }
    }

    fn value(&mut self, _read: Read<'_, 'de>) -> Result<(), Error> {
        Err(de::Error::custom("a sequence has no values"))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct MapItems<A>(A);

impl<'de, A: MapAccess<'de>> Items<'de> for MapItems<A> {
    fn next(&mut self, read: Read<'_, 'de>) -> Result<bool, Error> {
        match self.0.next_key_seed(Seed(read)) {
            Ok(found) => Ok(found.is_some()),
            Err(error) => Err(text(error)),
        }
    }

    fn value(&mut self, read: Read<'_, 'de>) -> Result<(), Error> {
        self.0.next_value_seed(Seed(read)).map_err(text)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

enum EnumState<'de, A: EnumAccess<'de>> {
    Access(A),
    Variant(A::Variant),
    Used,
}

impl<'de, A: EnumAccess<'de>> EnumState<'de, A> {
    fn variant(&mut self) -> Result<A::Variant, Error> {
        match std::mem::replace(self, EnumState::Used) {
            EnumState::Variant(variant) => Ok(variant),
            _ => Err(de::Error::custom(
                "a variant's content was read before its key",
            )),
        }
    }
}

impl<'de, A: EnumAccess<'de>> Variant<'de> for EnumState<'de, A> {
    fn key(&mut self, read: Read<'_, 'de>) -> Result<(), Error> {
        let EnumState::Access(data) = std::mem::replace(self, EnumState::Used) else {
            return Err(de::Error::custom("a variant's key was read twice"));
        };
        let ((), variant) = data.variant_seed(Seed(read)).map_err(text)?;
        *self = EnumState::Variant(variant);
        Ok(())
    }

    fn unit(&mut self) -> Result<(), Error> {
        self.variant()?.unit_variant().map_err(text)
    }

    fn newtype(&mut self, read: Read<'_, 'de>) -> Result<(), Error> {
        self.variant()?
            .newtype_variant_seed(Seed(read))
            .map_err(text)
    }

    fn tuple(&mut self, len: usize, sink: &mut dyn Sink<'de>) -> Result<(), Error> {
        self.variant()?
            .tuple_variant(len, Forward(sink))
            .map_err(text)
    }

    fn structure(
        &mut self,
        fields: &'static [&'static str],
        sink: &mut dyn Sink<'de>,
    ) -> Result<(), Error> {
        self.variant()?
            .struct_variant(fields, Forward(sink))
            .map_err(text)
    }
}

// The reading side: generic, compiled in the crate of the type that reads.

/// A [`Source`] as a deserializer, for a type's `Deserialize`.
pub(crate) struct Live<'s, 'de>(pub(crate) &'s mut dyn Source<'de>);

/// Reads one value of `source` with `visitor`: the one function compiled per
/// visitor, whatever the hint (not inlined, so a crate uses the instances
/// compiled here, as with `body`'s shared readers). `C` is what the hint can
/// be answered with.
#[inline(never)]
fn drive<'de, V: Visitor<'de>, C: Answers>(
    source: &mut dyn Source<'de>,
    hint: Hint,
    visitor: V,
) -> Result<V::Value, Error> {
    let mut slot = Waiting::<V, C>::new(visitor);
    source.give(hint, &mut slot)?;
    slot.value()
}

/// A visitor waiting for its event, and then its value.
struct Waiting<'de, V: Visitor<'de>, C> {
    visitor: Option<V>,
    value: Option<V::Value>,
    answers: PhantomData<C>,
}

impl<'de, V: Visitor<'de>, C: Answers> Waiting<'de, V, C> {
    fn new(visitor: V) -> Self {
        Self {
            visitor: Some(visitor),
            value: None,
            answers: PhantomData,
        }
    }

    fn value(self) -> Result<V::Value, Error> {
        self.value
            .ok_or_else(|| de::Error::custom("the input gave no value"))
    }
}

impl<'de, V: Visitor<'de>, C: Answers> Sink<'de> for Waiting<'de, V, C> {
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.visitor {
            Some(visitor) => visitor.expecting(f),
            None => f.write_str("a value"),
        }
    }

    fn visit(&mut self, event: Event<'_, 'de>) -> Result<(), Error> {
        let Some(visitor) = self.visitor.take() else {
            return Err(de::Error::custom("the input gave two values"));
        };
        self.value = Some(C::dispatch(visitor, event)?);
        Ok(())
    }
}

/// The `visit_*` calls that answer one kind of hint: the calls serde_json
/// makes for the `deserialize_*` method asked. A visitor is compiled only
/// with those (a struct's visitor with `visit_map` and `visit_seq`, not the
/// thirty others); any other event is the "invalid type" error that serde's
/// default `visit_*` methods give, and serde_json itself gives for such
/// input. So a line and a held value (which can hold any event) read alike.
trait Answers {
    /// Gives `event` to `visitor`.
    fn dispatch<'de, V: Visitor<'de>>(visitor: V, event: Event<'_, 'de>)
        -> Result<V::Value, Error>;
}

/// The value the input had, for an "invalid type" error.
fn unexpected<'a>(event: &'a Event<'_, '_>) -> Unexpected<'a> {
    match event {
        Event::Bool(v) => Unexpected::Bool(*v),
        Event::I64(v) => Unexpected::Signed(*v),
        Event::U64(v) => Unexpected::Unsigned(*v),
        Event::I128(_) | Event::U128(_) => Unexpected::Other("a 128-bit integer"),
        Event::F64(v) => Unexpected::Float(*v),
        Event::Char(v) => Unexpected::Char(*v),
        Event::Str(v) => Unexpected::Str(v),
        Event::BorrowedStr(v) => Unexpected::Str(v),
        Event::String(v) => Unexpected::Str(v),
        Event::Bytes(v) => Unexpected::Bytes(v),
        Event::BorrowedBytes(v) => Unexpected::Bytes(v),
        Event::ByteBuf(v) => Unexpected::Bytes(v),
        Event::None | Event::Some(_) => Unexpected::Option,
        Event::Unit => Unexpected::Unit,
        Event::Newtype(_) => Unexpected::NewtypeStruct,
        Event::Seq(_) => Unexpected::Seq,
        Event::Map(_) => Unexpected::Map,
        Event::Enum(_) => Unexpected::Enum,
    }
}

/// An event no visitor of the hint is given: not generic in the event.
#[inline(never)]
fn refuse(event: &Event<'_, '_>, expected: &dyn Expected) -> Error {
    de::Error::invalid_type(unexpected(event), expected)
}

macro_rules! answers {
    ($($(#[$doc:meta])* $name:ident { $($event:ident $(($v:ident))? => $visit:ident $(($arg:expr))?,)* })*) => {$(
        $(#[$doc])*
        enum $name {}

        impl Answers for $name {
            #[allow(unused_parens)]
            fn dispatch<'de, V: Visitor<'de>>(
                visitor: V,
                event: Event<'_, 'de>,
            ) -> Result<V::Value, Error> {
                match event {
                    $(Event::$event $(($v))? => visitor.$visit($($arg)?),)*
                    #[allow(unreachable_patterns)]
                    other => Err(refuse(&other, &visitor)),
                }
            }
        }
    )*};
}

answers! {
    /// `deserialize_any` and `deserialize_ignored_any`: every event.
    AnyEvent {
        Bool(v) => visit_bool(v),
        I64(v) => visit_i64(v),
        U64(v) => visit_u64(v),
        I128(v) => visit_i128(v),
        U128(v) => visit_u128(v),
        F64(v) => visit_f64(v),
        Char(v) => visit_char(v),
        Str(v) => visit_str(v),
        BorrowedStr(v) => visit_borrowed_str(v),
        String(v) => visit_string(v),
        Bytes(v) => visit_bytes(v),
        BorrowedBytes(v) => visit_borrowed_bytes(v),
        ByteBuf(v) => visit_byte_buf(v),
        None => visit_none,
        Unit => visit_unit,
        Some(v) => visit_some(Live(v)),
        Newtype(v) => visit_newtype_struct(Live(v)),
        Seq(v) => visit_seq(LiveItems(v)),
        Map(v) => visit_map(LiveItems(v)),
        Enum(v) => visit_enum(LiveVariant(v)),
    }
    /// `deserialize_bool`.
    BoolEvent {
        Bool(v) => visit_bool(v),
    }
    /// The numbers up to 64 bits: serde_json gives any number as it reads.
    NumberEvent {
        I64(v) => visit_i64(v),
        U64(v) => visit_u64(v),
        F64(v) => visit_f64(v),
    }
    /// `deserialize_i128` and `deserialize_u128`.
    WideNumberEvent {
        I64(v) => visit_i64(v),
        U64(v) => visit_u64(v),
        F64(v) => visit_f64(v),
        I128(v) => visit_i128(v),
        U128(v) => visit_u128(v),
    }
    /// `deserialize_char`, `deserialize_str` and `deserialize_string` (bytes
    /// too, which only a value held from another format gives, and a
    /// string's visitor takes when they are UTF-8).
    TextEvent {
        Char(v) => visit_char(v),
        Str(v) => visit_str(v),
        BorrowedStr(v) => visit_borrowed_str(v),
        String(v) => visit_string(v),
        Bytes(v) => visit_bytes(v),
        BorrowedBytes(v) => visit_borrowed_bytes(v),
        ByteBuf(v) => visit_byte_buf(v),
    }
    /// `deserialize_bytes` and `deserialize_byte_buf`: a string's bytes, or
    /// an array.
    BytesEvent {
        Str(v) => visit_str(v),
        BorrowedStr(v) => visit_borrowed_str(v),
        String(v) => visit_string(v),
        Bytes(v) => visit_bytes(v),
        BorrowedBytes(v) => visit_borrowed_bytes(v),
        ByteBuf(v) => visit_byte_buf(v),
        Seq(v) => visit_seq(LiveItems(v)),
    }
    /// `deserialize_identifier`: a key (a map's keys may be numbers when
    /// held from another format).
    IdentifierEvent {
        U64(v) => visit_u64(v),
        Char(v) => visit_char(v),
        Str(v) => visit_str(v),
        BorrowedStr(v) => visit_borrowed_str(v),
        String(v) => visit_string(v),
        Bytes(v) => visit_bytes(v),
        BorrowedBytes(v) => visit_borrowed_bytes(v),
        ByteBuf(v) => visit_byte_buf(v),
    }
    /// `deserialize_option`.
    OptionEvent {
        None => visit_none,
        Some(v) => visit_some(Live(v)),
    }
    /// `deserialize_unit` and `deserialize_unit_struct`.
    UnitEvent {
        Unit => visit_unit,
    }
    /// `deserialize_newtype_struct`; a map is what serde_json gives its
    /// `RawValue` (and `RawJson`): the value's text under one key.
    NewtypeEvent {
        Newtype(v) => visit_newtype_struct(Live(v)),
        Map(v) => visit_map(LiveItems(v)),
    }
    /// `deserialize_seq`, `deserialize_tuple`, `deserialize_tuple_struct`
    /// and a tuple variant.
    SeqEvent {
        Seq(v) => visit_seq(LiveItems(v)),
    }
    /// `deserialize_map`.
    MapEvent {
        Map(v) => visit_map(LiveItems(v)),
    }
    /// `deserialize_struct` and a struct variant: an object, or an array of
    /// the fields in order.
    StructEvent {
        Map(v) => visit_map(LiveFields(v)),
        Seq(v) => visit_seq(LiveItems(v)),
    }
    /// `deserialize_enum`.
    EnumEvent {
        Enum(v) => visit_enum(LiveVariant(v)),
    }
}

/// Reads one value of `next` into `seed`.
#[inline(always)]
fn read_into<'de, S: DeserializeSeed<'de>>(
    seed: S,
    next: impl FnOnce(Read<'_, 'de>) -> Result<bool, Error>,
) -> Result<Option<S::Value>, Error> {
    let mut seed = Some(seed);
    let mut out = None;
    let more = next(&mut |source| {
        if let Some(seed) = seed.take() {
            out = Some(seed.deserialize(Live(source))?);
        }
        Ok(())
    })?;
    match (more, out) {
        (false, _) => Ok(None),
        (true, Some(value)) => Ok(Some(value)),
        (true, None) => Err(de::Error::custom("the input gave no value")),
    }
}

macro_rules! hinted {
    ($($method:ident => $hint:ident, $answers:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            drive::<V, $answers>(self.0, Hint::$hint, visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for Live<'_, 'de> {
    type Error = Error;

    hinted! {
        deserialize_any => Any, AnyEvent,
        deserialize_bool => Bool, BoolEvent,
        deserialize_i8 => I8, NumberEvent,
        deserialize_i16 => I16, NumberEvent,
        deserialize_i32 => I32, NumberEvent,
        deserialize_i64 => I64, NumberEvent,
        deserialize_i128 => I128, WideNumberEvent,
        deserialize_u8 => U8, NumberEvent,
        deserialize_u16 => U16, NumberEvent,
        deserialize_u32 => U32, NumberEvent,
        deserialize_u64 => U64, NumberEvent,
        deserialize_u128 => U128, WideNumberEvent,
        deserialize_f32 => F32, NumberEvent,
        deserialize_f64 => F64, NumberEvent,
        deserialize_char => Char, TextEvent,
        deserialize_str => Str, TextEvent,
        deserialize_string => String, TextEvent,
        deserialize_bytes => Bytes, BytesEvent,
        deserialize_byte_buf => ByteBuf, BytesEvent,
        deserialize_option => Option, OptionEvent,
        deserialize_unit => Unit, UnitEvent,
        deserialize_seq => Seq, SeqEvent,
        deserialize_map => Map, MapEvent,
        deserialize_identifier => Identifier, IdentifierEvent,
        deserialize_ignored_any => IgnoredAny, AnyEvent,
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        drive::<V, UnitEvent>(self.0, Hint::UnitStruct(name), visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        drive::<V, NewtypeEvent>(self.0, Hint::NewtypeStruct(name), visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        drive::<V, SeqEvent>(self.0, Hint::Tuple(len), visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        drive::<V, SeqEvent>(self.0, Hint::TupleStruct(name, len), visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        drive::<V, StructEvent>(self.0, Hint::Struct(name, fields), visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        drive::<V, EnumEvent>(self.0, Hint::Enum(name, variants), visitor)
    }
}

pub(crate) struct LiveItems<'s, 'de>(&'s mut dyn Items<'de>);

impl<'de> SeqAccess<'de> for LiveItems<'_, 'de> {
    type Error = Error;

    #[inline(never)]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        read_into(seed, |read| self.0.next(read))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de> MapAccess<'de> for LiveItems<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        read_into(seed, |read| self.0.next(read))
    }

    #[inline(never)]
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        read_into(seed, |read| self.0.value(read).map(|()| true))?
            .ok_or_else(|| de::Error::custom("the input gave no value"))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// A struct's entries: its keys read here as text and given to the type as
/// strings, as [`Body`](super::body::Body) gives a body's, so a struct's field
/// visitor is compiled for `visit_str` alone (a key that is not text, which
/// only a value held from another format can have, is its text, as
/// serde_json writes such keys).
pub(crate) struct LiveFields<'s, 'de>(&'s mut dyn Items<'de>);

impl<'de> MapAccess<'de> for LiveFields<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match field_key(self.0)? {
            Some(key) => seed
                .deserialize(StrDeserializer::new(key.as_str()))
                .map(Some),
            None => Ok(None),
        }
    }

    // Not inlined, and compiled here for the common field types (`SHARED`).
    #[inline(never)]
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        read_into(seed, |read| self.0.value(read).map(|()| true))?
            .ok_or_else(|| de::Error::custom("the input gave no value"))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// The next key of a struct's entries, as text; `None` at the end.
fn field_key<'de>(items: &mut dyn Items<'de>) -> Result<Option<Key<'de>>, Error> {
    let mut key = None;
    let more = items.next(&mut |source| {
        key = Some(key_text(source)?);
        Ok(())
    })?;
    match (more, key) {
        (false, _) => Ok(None),
        (true, Some(key)) => Ok(Some(key)),
        (true, None) => Err(de::Error::custom("the input gave no key")),
    }
}

/// A struct's key as text, whatever the input gave: a string, borrowed when
/// it was; a number, a bool or a char as its text (as serde_json writes such
/// keys); bytes that are UTF-8.
pub(crate) fn key_text<'de>(source: &mut dyn Source<'de>) -> Result<Key<'de>, Error> {
    let mut key = KeyText(None);
    source.give(Hint::Identifier, &mut key)?;
    key.0
        .ok_or_else(|| de::Error::custom("the input gave no key"))
}

/// A struct's key as the input gives it.
struct KeyText<'de>(Option<Key<'de>>);

impl<'de> Sink<'de> for KeyText<'de> {
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit(&mut self, event: Event<'_, 'de>) -> Result<(), Error> {
        self.0 = Some(match event {
            Event::BorrowedStr(v) => Key::Borrowed(v),
            Event::Str(v) => Key::Owned(v.to_owned()),
            Event::String(v) => Key::Owned(v),
            Event::U64(v) => Key::Owned(v.to_string()),
            Event::I64(v) => Key::Owned(v.to_string()),
            Event::Bool(v) => Key::Owned(v.to_string()),
            Event::Char(v) => Key::Owned(v.to_string()),
            Event::BorrowedBytes(v) => Key::Borrowed(bytes_key(v)?),
            Event::Bytes(v) => Key::Owned(bytes_key(v)?.to_owned()),
            Event::ByteBuf(v) => Key::Owned(bytes_key(&v)?.to_owned()),
            other => return Err(refuse(&other, &"a field name")),
        });
        Ok(())
    }
}

/// A key given as bytes, which a field name must be the UTF-8 of.
fn bytes_key(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes)
        .map_err(|_| de::Error::invalid_value(Unexpected::Bytes(bytes), &"a field name"))
}

struct LiveVariant<'s, 'de>(&'s mut dyn Variant<'de>);

impl<'s, 'de> EnumAccess<'de> for LiveVariant<'s, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), Error> {
        let key = read_into(seed, |read| self.0.key(read).map(|()| true))?
            .ok_or_else(|| de::Error::custom("the input gave no variant"))?;
        Ok((key, self))
    }
}

impl<'de> VariantAccess<'de> for LiveVariant<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        self.0.unit()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Error> {
        read_into(seed, |read| self.0.newtype(read).map(|()| true))?
            .ok_or_else(|| de::Error::custom("the input gave no value"))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        let mut slot = Waiting::<V, SeqEvent>::new(visitor);
        self.0.tuple(len, &mut slot)?;
        slot.value()
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let mut slot = Waiting::<V, StructEvent>::new(visitor);
        self.0.structure(fields, &mut slot)?;
        slot.value()
    }
}

/// `value.rs` and `held.rs` against plain serde: generated JSON texts, read
/// through every path the codec reads a value by (the line's values through
/// [`Live`] over serde_json's deserializer, a held value replayed or lent,
/// directly or through [`Live`], and a held body through
/// [`Body`](super::body::Body)), must decode to what `serde_json::from_str`
/// decodes, and fail where it fails, with an error of the same kind.
#[cfg(test)]
pub(crate) mod props {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::Deserialize;

    use super::{Give, Live};
    use crate::transcript::codec::body::Body;
    use crate::transcript::codec::held::Held;

    /// A struct with every shape a transcript type uses: options, a nested
    /// struct (an object or an array), a tuple, every kind of enum variant, a
    /// newtype, a unit, a char, a wide integer, a map and a bag of values.
    #[derive(Debug, PartialEq, Deserialize)]
    pub(crate) struct Outer {
        inner: Inner,
        #[serde(default)]
        pair: Option<(u8, String)>,
        #[serde(default)]
        choice: Option<Choice>,
        #[serde(default)]
        choices: Vec<Choice>,
        #[serde(default)]
        unit: Option<()>,
        #[serde(default)]
        wrapped: Option<Wrapped>,
        #[serde(default)]
        letter: Option<char>,
        #[serde(default)]
        wide: Option<i128>,
        #[serde(default)]
        small: Option<i16>,
        #[serde(default)]
        ratio: Option<f32>,
        #[serde(default)]
        map: BTreeMap<String, bool>,
        #[serde(default)]
        any: Option<serde_json::Value>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        id: String,
        #[serde(default)]
        size: u64,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Choice {
        Plain,
        Tuple(u8, u8),
        Named { x: i32 },
        Boxed(String),
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Wrapped(f64);

    /// The kind of a decoding error: its words up to the first detail, and
    /// without serde_json's position. serde_json and serde's own value
    /// deserializers word some errors differently, so these are one kind:
    /// an array of the wrong length ("trailing characters" against "invalid
    /// length"), and a token of the wrong type where serde_json's own reader
    /// of the type refuses it as syntax (an enum given an array: "expected
    /// value"; an `i128` given `1.5`, read as digits up to the dot: "expected
    /// `,` or `}`", or given a string: "invalid number") against serde's
    /// "invalid type".
    pub(crate) fn kind(error: &serde_json::Error) -> String {
        let text = error.to_string();
        let text = text.split(" at line ").next().unwrap_or_default();
        for (prefix, kind) in [
            ("invalid type", "invalid type"),
            ("invalid value", "invalid value"),
            ("invalid length", "length"),
            ("trailing characters", "length"),
            ("trailing comma", "length"),
            ("missing field", "missing field"),
            ("duplicate field", "duplicate field"),
            ("unknown variant", "unknown variant"),
            ("unknown field", "unknown field"),
            ("expected value", "invalid type"),
            ("expected `,` or", "invalid type"),
            ("invalid number", "invalid type"),
        ] {
            if text.starts_with(prefix) {
                return kind.to_owned();
            }
        }
        text.to_owned()
    }

    /// A JSON string: plain words, escapes, non-ASCII, a lone character.
    fn string() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{0,6}",
            "[a-zA-Z \"\\\\\n\t/é€😀\u{1}]{0,8}",
            Just("Plain".to_owned()),
            Just("named".to_owned()),
            Just("x".to_owned()),
        ]
    }

    fn number() -> impl Strategy<Value = serde_json::Value> {
        prop_oneof![
            (0u64..300).prop_map(serde_json::Value::from),
            (-70_000i64..70_000).prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            Just(serde_json::Value::from(1.0)),
        ]
    }

    /// Any JSON value, a few levels deep.
    pub(crate) fn json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            number(),
            string().prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                proptest::collection::vec((key(), inner), 0..4)
                    .prop_map(|entries| serde_json::Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => proptest::sample::select(vec![
                "inner", "id", "size", "tags", "pair", "choice", "choices", "unit", "wrapped",
                "letter", "wide", "small", "ratio", "map", "any", "plain", "tuple", "named",
                "boxed", "x",
            ])
            .prop_map(str::to_owned),
            1 => string(),
        ]
    }

    /// A value of the right shape for `key` most of the time, anything else
    /// otherwise.
    fn field(key: &'static str) -> BoxedStrategy<serde_json::Value> {
        use serde_json::json;
        let right: BoxedStrategy<serde_json::Value> = match key {
            "inner" => prop_oneof![
                (
                    string(),
                    any::<u64>(),
                    proptest::collection::vec(string(), 0..3),
                    json()
                )
                    .prop_map(|(id, size, tags, extra)| {
                        json!({ "id": id, "size": size, "tags": tags, "extra": extra })
                    }),
                string().prop_map(|id| json!({ "id": id })),
                (string(), 0u64..9, proptest::collection::vec(string(), 0..2))
                    .prop_map(|(id, size, tags)| json!([id, size, tags])),
            ]
            .boxed(),
            "pair" => (any::<u8>(), string())
                .prop_map(|(n, s)| json!([n, s]))
                .boxed(),
            "choice" => choice().boxed(),
            "choices" => proptest::collection::vec(choice(), 0..3)
                .prop_map(serde_json::Value::from)
                .boxed(),
            "unit" => Just(serde_json::Value::Null).boxed(),
            "wrapped" | "ratio" => number().boxed(),
            "letter" => "[a-z€😀]".prop_map(serde_json::Value::from).boxed(),
            "wide" | "small" => number().boxed(),
            "map" => proptest::collection::btree_map(string(), any::<bool>(), 0..3)
                .prop_map(|m| json!(m))
                .boxed(),
            _ => json().boxed(),
        };
        prop_oneof![4 => right, 1 => json()].boxed()
    }

    fn choice() -> impl Strategy<Value = serde_json::Value> {
        use serde_json::json;
        prop_oneof![
            Just(json!("plain")),
            (any::<u8>(), any::<u8>()).prop_map(|(a, b)| json!({ "tuple": [a, b] })),
            any::<i32>().prop_map(|x| json!({ "named": { "x": x } })),
            string().prop_map(|s| json!({ "boxed": s })),
            string().prop_map(serde_json::Value::from),
        ]
    }

    /// An object's text from its entries in order, duplicates kept.
    fn object(entries: &[(String, serde_json::Value)]) -> String {
        let mut text = String::from("{");
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&serde_json::Value::from(key.as_str()).to_string());
            text.push(':');
            text.push_str(&value.to_string());
        }
        text.push('}');
        text
    }

    /// The text of an object shaped like [`Outer`] (mostly), in any order,
    /// with a field left out, given twice or of the wrong type now and then.
    pub(crate) fn outer_text() -> impl Strategy<Value = String> {
        const FIELDS: &[&str] = &[
            "inner", "pair", "choice", "choices", "unit", "wrapped", "letter", "wide", "small",
            "ratio", "map", "any",
        ];
        let entries: Vec<_> = FIELDS
            .iter()
            .map(|&name| {
                proptest::option::weighted(if name == "inner" { 0.95 } else { 0.5 }, field(name))
                    .prop_map(move |v| v.map(|v| (name.to_owned(), v)))
            })
            .collect();
        (
            entries,
            proptest::collection::vec((key(), json()), 0..2),
            any::<proptest::sample::Index>(),
        )
            .prop_map(|(entries, extra, at)| {
                let mut entries: Vec<_> = entries.into_iter().flatten().collect();
                // Unknown or repeated keys, somewhere among the others.
                for (key, value) in extra {
                    let at = at.index(entries.len() + 1);
                    entries.insert(at, (key, value));
                }
                entries
            })
            .prop_shuffle()
            .prop_map(|entries| object(&entries))
    }

    /// Every path of the codec must read `text` as `serde_json::from_str` does
    /// (a held object as a custom body too, when `T` is a struct, as a body is).
    fn agrees<T>(text: &str, body: bool) -> Result<(), TestCaseError>
    where
        T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let direct = serde_json::from_str::<T>(text).map_err(|e| kind(&e));
        let held: Held = serde_json::from_str(text)
            .map_err(|e| TestCaseError::fail(format!("not held: {e}: {text}")))?;
        let mut line = serde_json::Deserializer::from_str(text);
        let paths: [(&str, Result<T, String>); 5] = [
            (
                "a line's value through Live",
                T::deserialize(Live(&mut Give(Some(&mut line)))).map_err(|e| kind(&e)),
            ),
            (
                "replayed",
                T::deserialize(held.clone().replay::<serde_json::Error>()).map_err(|e| kind(&e)),
            ),
            (
                "lent",
                T::deserialize(held.lend::<serde_json::Error>()).map_err(|e| kind(&e)),
            ),
            (
                "lent through Live",
                T::deserialize(Live(&mut Give(Some(held.lend::<serde_json::Error>()))))
                    .map_err(|e| kind(&e)),
            ),
            (
                "replayed through Live",
                T::deserialize(Live(&mut Give(Some(
                    held.clone().replay::<serde_json::Error>(),
                ))))
                .map_err(|e| kind(&e)),
            ),
        ];
        for (path, read) in paths {
            prop_assert_eq!(&read, &direct, "{} of {}", path, text);
        }
        if let (true, Held::Map(fields)) = (body, &held) {
            let body = Body::held(fields).decode::<T>().map_err(|e| kind(&e));
            prop_assert_eq!(&body, &direct, "a held body of {}", text);
        }
        Ok(())
    }

    /// A value kept as its text ([`RawJson`](crate::message::RawJson), tool
    /// arguments) reads through every path as the same JSON value as
    /// serde_json's text: a held value is written again from its values, so
    /// its numbers in serde_json's form (`1e2` as `100.0`), its keys in order.
    fn raw_agrees(text: &str) -> Result<(), TestCaseError> {
        use crate::message::RawJson;
        let value = |raw: Result<RawJson, serde_json::Error>| {
            raw.map(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok())
                .map_err(|e| kind(&e))
        };
        let direct = value(serde_json::from_str::<RawJson>(text));
        let held: Held = serde_json::from_str(text)
            .map_err(|e| TestCaseError::fail(format!("not held: {e}: {text}")))?;
        prop_assert_eq!(
            &value(RawJson::deserialize(
                held.clone().replay::<serde_json::Error>()
            )),
            &direct,
            "replayed {}",
            text
        );
        prop_assert_eq!(
            &value(RawJson::deserialize(held.lend::<serde_json::Error>())),
            &direct,
            "lent {}",
            text
        );
        let mut line = serde_json::Deserializer::from_str(text);
        prop_assert_eq!(
            &value(RawJson::deserialize(Live(&mut Give(Some(&mut line))))),
            &direct,
            "a line's value through Live {}",
            text
        );
        prop_assert_eq!(
            &value(RawJson::deserialize(Live(&mut Give(Some(
                held.lend::<serde_json::Error>()
            ))))),
            &direct,
            "lent through Live {}",
            text
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn a_struct_reads_as_serde_json_reads_it(text in outer_text()) {
            agrees::<Outer>(&text, true)?;
        }

        #[test]
        fn any_value_reads_as_serde_json_reads_it(value in json()) {
            let text = value.to_string();
            agrees::<serde_json::Value>(&text, false)?;
            agrees::<Inner>(&text, true)?;
            agrees::<Vec<Choice>>(&text, false)?;
            // A custom body may be an enum (a hand-written `CustomMessage`).
            agrees::<Choice>(&text, true)?;
            agrees::<Option<Inner>>(&text, false)?;
            agrees::<BTreeMap<String, Option<u32>>>(&text, false)?;
            agrees::<(bool, String)>(&text, false)?;
            raw_agrees(&text)?;
        }
    }
}
