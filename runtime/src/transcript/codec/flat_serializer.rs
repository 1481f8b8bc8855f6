//! Writing a flat line: [`FlatMapSerializer`] lets a type's own `Serialize`
//! write its fields into a map that the caller has opened, so the caller (the
//! envelope writer) can put the role before and the envelope keys after.

use serde::ser::{self, Impossible, Serialize, SerializeMap, Serializer};

/// A `Serializer` that writes a struct's (or a map's) entries into a map the caller
/// has opened. Anything other than a struct or a map is an error.
pub struct FlatMapSerializer<'a, M>(pub &'a mut M);

fn not_flat<E: ser::Error>(what: &str) -> E {
    E::custom(format_args!(
        "a transcript line must serialize as a struct or a map, not {what}"
    ))
}

impl<'a, M: SerializeMap> Serializer for FlatMapSerializer<'a, M> {
    type Ok = ();
    type Error = M::Error;
    type SerializeSeq = Impossible<(), M::Error>;
    type SerializeTuple = Impossible<(), M::Error>;
    type SerializeTupleStruct = Impossible<(), M::Error>;
    type SerializeTupleVariant = Impossible<(), M::Error>;
    type SerializeMap = FlatEntries<'a, M>;
    type SerializeStruct = FlatEntries<'a, M>;
    type SerializeStructVariant = Impossible<(), M::Error>;

    fn serialize_bool(self, _: bool) -> Result<(), M::Error> {
        Err(not_flat("a bool"))
    }
    fn serialize_i8(self, _: i8) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_i16(self, _: i16) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_i32(self, _: i32) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_i64(self, _: i64) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_u8(self, _: u8) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_u16(self, _: u16) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_u32(self, _: u32) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_u64(self, _: u64) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_f32(self, _: f32) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_f64(self, _: f64) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_char(self, _: char) -> Result<(), M::Error> {
        Err(not_flat("a char"))
    }
    fn serialize_str(self, _: &str) -> Result<(), M::Error> {
        Err(not_flat("a string"))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), M::Error> {
        Err(not_flat("bytes"))
    }
    fn serialize_none(self) -> Result<(), M::Error> {
        Err(not_flat("none"))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), M::Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), M::Error> {
        Err(not_flat("an enum"))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), M::Error> {
        Err(not_flat("an enum"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, M::Error> {
        Err(not_flat("a sequence"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, M::Error> {
        Err(not_flat("a tuple"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, M::Error> {
        Err(not_flat("a tuple struct"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, M::Error> {
        Err(not_flat("an enum"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<FlatEntries<'a, M>, M::Error> {
        Ok(FlatEntries(self.0))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<FlatEntries<'a, M>, M::Error> {
        Ok(FlatEntries(self.0))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, M::Error> {
        Err(not_flat("an enum"))
    }
}

/// The entries of a struct or map, written into the caller's map.
pub struct FlatEntries<'a, M>(&'a mut M);

impl<M: SerializeMap> ser::SerializeStruct for FlatEntries<'_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        self.0.serialize_entry(key, value)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

impl<M: SerializeMap> SerializeMap for FlatEntries<'_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), M::Error> {
        self.0.serialize_key(key)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), M::Error> {
        self.0.serialize_value(value)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}
