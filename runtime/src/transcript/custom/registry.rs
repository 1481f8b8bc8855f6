//! The registry of custom kinds: which Rust type a `"role"` decodes into.
//!
//! `#[derive(AgentMessage)]` submits one [`Registration`] per type at link time
//! (through `inventory`, as typetag does). [`Registry::global`] collects them once,
//! lazily, into a map from kind (and alias) to registration. Two types claiming one
//! kind are remembered as a [`DuplicateKind`] naming both, and that kind then decodes
//! to neither (lenient reading keeps such lines as `Unknown`).
//!
//! A [`Registry`] can also be built by hand ([`Registry::new`] + [`Registry::with`]),
//! for tests and for targets where link-time registration does not run. On
//! `wasm32`, `inventory` needs the module's constructors to have run: call the
//! exported `__wasm_call_ctors` once before the first lookup (wasm-bindgen does
//! not do it for you), or build a registry by hand and [`install`](Registry::install)
//! it as the global one before anything decodes.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::OnceLock;

use serde::de::Unexpected;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::app_message::{AppMessage, CustomMessage, DynCustomMessage, MigrateError};
use crate::transcript::codec::body::Body;
use crate::transcript::codec::envelope::{decode_known, scan_version, DecodeBody, Envelope};
use crate::transcript::codec::held::Held;
use crate::transcript::UnknownReason;

/// A type's one decoder: its `Deserialize` on a [`Body`], a line's or a held
/// object's.
type Decode = DecodeBody<Box<dyn DynCustomMessage>>;

/// One custom type's entry in the registry: its kind, aliases, version and the
/// few functions that must be monomorphized for the type. `#[derive(AgentMessage)]`
/// submits one for each type.
///
/// The type's `Deserialize` is instantiated once, for the one deserializer
/// every path reads a custom body through: a line's map (the transcript
/// reader's) or an object held as data (`Deserialize for AgentMessage`, whose
/// input may be any deserializer, and a migration's result). The type's own
/// visitor is what is compiled for it; each value is read through an erased
/// deserializer compiled once per field type, shared by every kind. Everything
/// around it is shared code: the role and envelope keys, versions,
/// migrations and errors.
#[derive(Clone, Copy)]
pub struct Registration {
    kind: &'static str,
    aliases: &'static [&'static str],
    version: u32,
    type_id: fn() -> TypeId,
    type_name: fn() -> &'static str,
    /// The type's `Deserialize`, the one per-type decoder.
    decode: Decode,
    /// [`CustomMessage::migrate`].
    migrate: fn(u32, Value) -> Result<Value, MigrateError>,
    /// [`CustomMessage::TIMESTAMP_FIELD`].
    timestamp_field: bool,
}

impl Registration {
    /// The registration of `T`.
    pub const fn new<T: CustomMessage>() -> Self {
        Self {
            kind: T::KIND,
            aliases: T::ALIASES,
            version: T::VERSION,
            type_id: TypeId::of::<T>,
            type_name: std::any::type_name::<T>,
            decode: decode::<T>,
            migrate: T::migrate,
            timestamp_field: T::TIMESTAMP_FIELD,
        }
    }

    /// The kind written as `"role"`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The older kinds that also decode into the type.
    pub fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }

    /// The kind's schema version.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The Rust type's name.
    pub fn type_name(&self) -> &'static str {
        (self.type_name)()
    }

    /// Whether a line whose `"role"` is `role` is of this kind (or an alias).
    fn claims(&self, role: &str) -> bool {
        role == self.kind || self.aliases.contains(&role)
    }

    /// Decodes one whole line (a flat JSON object) straight into the type; the
    /// reason it was not decoded otherwise.
    pub fn decode_line(&self, line: &str) -> Result<AppMessage, UnknownReason> {
        let accept = |role: &str| self.claims(role);
        match decode_known(line, &accept, self.decode, !self.timestamp_field) {
            Ok((message, envelope)) => {
                let from = stored_version(envelope.v);
                if from == self.version {
                    Ok(entry(message, envelope))
                } else if from > self.version {
                    Err(self.newer(from))
                } else {
                    self.migrate_line(line, from)
                }
            }
            Err(error) => match scan_version(line) {
                Some(from) if from > self.version => Err(self.newer(from)),
                Some(from) if from < self.version => self.migrate_line(line, from),
                None if self.version > 1 => self.migrate_line(line, 1),
                _ => Err(UnknownReason::Invalid {
                    error: error.to_string(),
                }),
            },
        }
    }

    /// Takes `timestamp` out of the fields of an object into its envelope when
    /// the type has no timestamp field of its own.
    pub(crate) fn take_timestamp(
        &self,
        fields: &mut Held<'_>,
        envelope: &mut Envelope,
    ) -> Result<(), UnknownReason> {
        if self.timestamp_field {
            return Ok(());
        }
        envelope
            .take_timestamp_from_held(fields)
            .map_err(|error| UnknownReason::Invalid { error })
    }

    /// Decodes the fields of an object (a [`Held::Map`]) whose envelope keys were
    /// taken out already.
    pub(crate) fn decode_fields(
        &self,
        fields: &Held<'_>,
        envelope: Envelope,
    ) -> Result<AppMessage, UnknownReason> {
        let from = stored_version(envelope.v);
        if from > self.version {
            return Err(self.newer(from));
        }
        if from < self.version {
            let fields = Map::deserialize(fields.lend::<serde_json::Error>()).map_err(|e| {
                UnknownReason::Invalid {
                    error: e.to_string(),
                }
            })?;
            return self.migrate_fields(fields, envelope, from);
        }
        match self.decode_held(fields) {
            Ok(message) => Ok(entry(message, envelope)),
            Err(error) => Err(UnknownReason::Invalid { error }),
        }
    }

    /// Decodes a held object (a [`Held::Map`]) by the type's object decoder.
    fn decode_held(&self, fields: &Held<'_>) -> Result<Box<dyn DynCustomMessage>, String> {
        match fields {
            Held::Map(entries) => (self.decode)(Body::held(entries)).map_err(|e| e.to_string()),
            _ => Err("expected an object".to_owned()),
        }
    }

    fn newer(&self, found: u32) -> UnknownReason {
        UnknownReason::NewerVersion {
            found,
            supported: self.version,
        }
    }

    fn migrate_line(&self, line: &str, from: u32) -> Result<AppMessage, UnknownReason> {
        let mut fields: Map<String, Value> =
            serde_json::from_str(line).map_err(|e| UnknownReason::Invalid {
                error: e.to_string(),
            })?;
        fields.remove("role");
        let invalid = |e: serde_json::Error| UnknownReason::Invalid {
            error: e.to_string(),
        };
        let mut envelope = Envelope::take_from(&mut fields).map_err(invalid)?;
        if !self.timestamp_field {
            envelope.take_timestamp_from(&mut fields).map_err(invalid)?;
        }
        self.migrate_fields(fields, envelope, from)
    }

    fn migrate_fields(
        &self,
        fields: Map<String, Value>,
        envelope: Envelope,
        from: u32,
    ) -> Result<AppMessage, UnknownReason> {
        let migrated =
            (self.migrate)(from, Value::Object(fields)).map_err(|e| UnknownReason::Migration {
                from,
                error: e.message,
            })?;
        let decoded = if migrated.is_object() {
            Held::deserialize(migrated)
                .map_err(|e| e.to_string())
                .and_then(|fields| self.decode_held(&fields))
        } else {
            Err(format!(
                "invalid type: {}, expected an object",
                unexpected(&migrated)
            ))
        };
        match decoded {
            Ok(message) => Ok(entry(message, envelope)),
            Err(error) => Err(UnknownReason::Invalid {
                error: format!("after migration from version {from}: {error}"),
            }),
        }
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("kind", &self.kind)
            .field("aliases", &self.aliases)
            .field("version", &self.version)
            .field("type", &self.type_name())
            .finish()
    }
}

inventory::collect!(Registration);

/// The one decoder monomorphized for every kind.
fn decode<T: CustomMessage>(body: Body<'_, '_>) -> serde_json::Result<Box<dyn DynCustomMessage>> {
    Ok(Box::new(body.decode::<T>()?))
}

fn entry(message: Box<dyn DynCustomMessage>, envelope: Envelope) -> AppMessage {
    AppMessage {
        message,
        id: envelope.id,
        turn_id: envelope.turn_id,
        parent_id: envelope.parent_id,
        timestamp: envelope.timestamp,
    }
}

/// The stored version: `v`, or 1 when absent (it is written only above 1).
fn stored_version(v: Option<u32>) -> u32 {
    v.unwrap_or(1)
}

/// How serde names a value in an "invalid type" error.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            (None, None) => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// Two types claim the same kind (or alias).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message kind `{kind}` is claimed by both `{first}` and `{second}`")]
pub struct DuplicateKind {
    /// The kind (or alias) claimed twice.
    pub kind: &'static str,
    /// The type registered first.
    pub first: &'static str,
    /// The type registered second.
    pub second: &'static str,
}

/// A kind could not be resolved to a registered type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// No registered type claims the kind.
    #[error("unknown message kind `{kind}`; known kinds: {}", known.join(", "))]
    UnknownKind {
        /// The kind looked up.
        kind: String,
        /// Every kind and alias the registry knows, sorted.
        known: Vec<&'static str>,
    },
    /// More than one type claims the kind.
    #[error(transparent)]
    Duplicate(#[from] DuplicateKind),
}

/// The map from kind to [`Registration`]. See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    // Looked up once per custom or unknown line, so the hasher matters: foldhash
    // with a fixed seed is several times cheaper than SipHash on short keys. Only
    // registered kinds are ever inserted, so input cannot grow the map or pick
    // colliding keys; flooding needs insertions.
    by_kind: HashMap<&'static str, Registration, foldhash::fast::FixedState>,
    duplicates: Vec<DuplicateKind>,
}

static GLOBAL: OnceLock<Registry> = OnceLock::new();

impl Registry {
    /// A registry with the built-in kinds only (`compactionSummary`,
    /// `branchSummary`, `extension`).
    pub fn new() -> Self {
        Self::empty()
            .with::<super::builtin::CompactionSummary>()
            .with::<super::builtin::BranchSummary>()
            .with::<super::builtin::ExtensionMessage>()
    }

    /// A registry without any kind, not even the built-in ones.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Every registration submitted at link time, collected now.
    pub fn from_inventory() -> Self {
        let mut registry = Self::empty();
        for registration in inventory::iter::<Registration> {
            registry.add(*registration);
        }
        registry
    }

    /// The global registry: the one [`install`](Self::install)ed, or else every
    /// registration submitted at link time, collected on first use. Each kind
    /// claimed by two types is reported then, as a warning through the `log`
    /// crate (lines of that kind read back as `Unknown`, and writing one is an
    /// error); [`check`](Self::check) turns it into an error at startup.
    pub fn global() -> &'static Registry {
        GLOBAL.get_or_init(|| {
            let registry = Self::from_inventory();
            registry.warn_duplicates();
            registry
        })
    }

    fn warn_duplicates(&self) {
        for duplicate in &self.duplicates {
            log::warn!(
                target: "agentmsg",
                "{duplicate}: its lines read back as unknown and writing one fails; give one of the types another kind"
            );
        }
    }

    /// Makes this registry the global one. Fails (giving it back) once the global
    /// registry has been used or installed.
    pub fn install(self) -> Result<&'static Registry, Registry> {
        let mut slot = Some(self);
        let installed = GLOBAL.get_or_init(|| slot.take().unwrap_or_default());
        match slot {
            None => {
                installed.warn_duplicates();
                Ok(installed)
            }
            Some(registry) => Err(registry),
        }
    }

    /// The same registry with `T` added.
    #[must_use]
    pub fn with<T: CustomMessage>(mut self) -> Self {
        // A constant, as in the derive's `static`: what `T` registers is decided
        // at compile time.
        self.add(const { Registration::new::<T>() });
        self
    }

    /// Adds a registration under its kind and each of its aliases. A kind already
    /// claimed by another type is recorded as a duplicate and then resolves to
    /// neither; adding the same type twice changes nothing.
    pub fn add(&mut self, registration: Registration) {
        let claims = std::iter::once(registration.kind).chain(registration.aliases.iter().copied());
        for kind in claims {
            if let Some(dup) = self.duplicates.iter().find(|d| d.kind == kind) {
                let name = registration.type_name();
                if dup.first != name && dup.second != name {
                    let first = dup.first;
                    self.duplicates.push(DuplicateKind {
                        kind,
                        first,
                        second: name,
                    });
                }
                continue;
            }
            match self.by_kind.get(kind) {
                Some(existing) if (existing.type_id)() == (registration.type_id)() => {}
                Some(existing) => {
                    self.duplicates.push(DuplicateKind {
                        kind,
                        first: existing.type_name(),
                        second: registration.type_name(),
                    });
                    self.by_kind.remove(kind);
                }
                None => {
                    self.by_kind.insert(kind, registration);
                }
            }
        }
    }

    /// The registration claiming `kind`, if exactly one does.
    pub fn get(&self, kind: &str) -> Option<&Registration> {
        self.by_kind.get(kind)
    }

    /// The registration claiming `kind`, or why there is none (the error lists
    /// the known kinds, or names both types of a duplicate).
    pub fn resolve(&self, kind: &str) -> Result<&Registration, RegistryError> {
        if let Some(registration) = self.by_kind.get(kind) {
            return Ok(registration);
        }
        if let Some(dup) = self.duplicate(kind) {
            return Err(RegistryError::Duplicate(dup.clone()));
        }
        Err(RegistryError::UnknownKind {
            kind: kind.to_owned(),
            known: self.kinds(),
        })
    }

    /// The duplicate claim on `kind`, if there is one.
    pub fn duplicate(&self, kind: &str) -> Option<&DuplicateKind> {
        self.duplicates.iter().find(|d| d.kind == kind)
    }

    /// Every kind and alias that resolves to a type, sorted.
    pub fn kinds(&self) -> Vec<&'static str> {
        let mut kinds: Vec<&'static str> = self.by_kind.keys().copied().collect();
        kinds.sort_unstable();
        kinds
    }

    /// Every kind claimed by more than one type.
    pub fn duplicates(&self) -> &[DuplicateKind] {
        &self.duplicates
    }

    /// `Ok` when no kind is claimed twice; otherwise the first duplicate. Call it
    /// at startup to fail fast.
    pub fn check(&self) -> Result<(), DuplicateKind> {
        match self.duplicates.first() {
            Some(dup) => Err(dup.clone()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Reading {
        label: String,
        value: f64,
    }

    impl CustomMessage for Reading {
        const KIND: &'static str = "reading";
    }

    /// Version 1 with a hand-written migration: only a stored `"v":0` reaches it.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Renamed {
        name: String,
    }

    impl CustomMessage for Renamed {
        const KIND: &'static str = "renamed";

        fn migrate(from: u32, value: Value) -> Result<Value, MigrateError> {
            let Value::Object(mut fields) = value else {
                return Err(MigrateError::new("not an object"));
            };
            match fields.remove("title") {
                Some(Value::String(s)) if s == "scalar" => Ok(Value::String(s)),
                Some(title) => {
                    fields.insert("name".to_owned(), title);
                    Ok(Value::Object(fields))
                }
                None => Err(MigrateError::new(format!("no title in version {from}"))),
            }
        }
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Versioned {
        name: String,
    }

    impl CustomMessage for Versioned {
        const KIND: &'static str = "versioned";
        const VERSION: u32 = 2;

        fn migrate(_: u32, value: Value) -> Result<Value, MigrateError> {
            Ok(value)
        }
    }

    fn object(json: &str) -> Held<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_migrated_value_is_read_as_a_held_object() {
        let registration = Registration::new::<Versioned>();
        // No `v`: version 1, brought up to 2 by `migrate`.
        let entry = registration
            .decode_line(r#"{"role":"versioned","name":"n","id":"m3"}"#)
            .unwrap();
        assert_eq!(
            entry.downcast_ref::<Versioned>(),
            Some(&Versioned {
                name: "n".to_owned()
            })
        );
        assert_eq!(entry.id.as_ref().unwrap().as_str(), "m3");
        let held = registration
            .decode_fields(&object(r#"{"name":"h"}"#), Envelope::default())
            .unwrap();
        assert!(held.downcast_ref::<Versioned>().is_some());
        assert_eq!(
            registration
                .decode_line(r#"{"role":"versioned","name":5,"v":1}"#)
                .unwrap_err(),
            UnknownReason::Invalid {
                error:
                    "after migration from version 1: invalid type: integer `5`, expected a string"
                        .to_owned()
            }
        );
    }

    #[test]
    fn a_lines_error_says_where_once() {
        let registration = Registration::new::<Reading>();
        let wrong = registration
            .decode_line(r#"{"role":"reading","label":5,"value":1}"#)
            .unwrap_err();
        let UnknownReason::Invalid { error } = &wrong else {
            panic!("{wrong:?}")
        };
        assert_eq!(
            error,
            "invalid type: integer `5`, expected a string at line 1 column 27"
        );
        // An error of the type's own (a duplicate field) is placed at the key.
        let twice = registration
            .decode_line(r#"{"role":"reading","label":"x","label":"y","value":1}"#)
            .unwrap_err();
        let UnknownReason::Invalid { error } = &twice else {
            panic!("{twice:?}")
        };
        assert_eq!(error.matches(" at line ").count(), 1, "{error}");
        assert!(error.starts_with("duplicate field `label`"), "{error}");
        // A line that is not JSON after the type's fields.
        let torn = registration
            .decode_line(r#"{"role":"reading","label":"x","value":1"#)
            .unwrap_err();
        let UnknownReason::Invalid { error } = &torn else {
            panic!("{torn:?}")
        };
        assert_eq!(error.matches(" at line ").count(), 1, "{error}");
    }

    #[test]
    fn an_object_decodes_exactly() {
        let registration = Registration::new::<Reading>();
        // Values at the edges of `f64`.
        for value in [0.1_f64 + 0.2, 1e-300, f64::MIN_POSITIVE, 5e-324, f64::MAX] {
            let fields = Held::Map(vec![
                (Held::Str("label"), Held::Str("x")),
                (Held::Str("value"), Held::F64(value)),
            ]);
            let entry = registration
                .decode_fields(&fields, Envelope::default())
                .unwrap();
            let reading = entry.downcast_ref::<Reading>().unwrap();
            assert_eq!(reading.value.to_bits(), value.to_bits());
        }
    }

    #[test]
    fn an_objects_error_names_no_position() {
        let registration = Registration::new::<Reading>();
        let missing = registration
            .decode_fields(&object(r#"{"label":"x"}"#), Envelope::default())
            .unwrap_err();
        assert_eq!(
            missing,
            UnknownReason::Invalid {
                error: "missing field `value`".to_owned()
            }
        );
        let wrong = registration
            .decode_fields(&object(r#"{"label":5,"value":1}"#), Envelope::default())
            .unwrap_err();
        assert_eq!(
            wrong,
            UnknownReason::Invalid {
                error: "invalid type: integer `5`, expected a string".to_owned()
            }
        );
        // The line itself says where.
        let line = registration
            .decode_line(r#"{"role":"reading","label":"x"}"#)
            .unwrap_err();
        assert!(
            matches!(&line, UnknownReason::Invalid { error } if error.starts_with("missing field `value` at line 1 column")),
            "{line:?}"
        );
    }

    #[test]
    fn an_object_keeps_its_envelope_and_checks_its_version() {
        let registration = Registration::new::<Reading>();
        let envelope = Envelope {
            id: Some(crate::message::MessageId::from("m1")),
            turn_id: None,
            parent_id: crate::ParentId::Previous,
            v: None,
            timestamp: None,
        };
        let entry = registration
            .decode_fields(&object(r#"{"label":"x","value":1.5}"#), envelope)
            .unwrap();
        assert_eq!(entry.id.as_ref().unwrap().as_str(), "m1");
        let newer = Envelope {
            v: Some(3),
            ..Envelope::default()
        };
        assert_eq!(
            registration
                .decode_fields(&object(r#"{"label":"x","value":1.5}"#), newer)
                .unwrap_err(),
            UnknownReason::NewerVersion {
                found: 3,
                supported: 1
            }
        );
    }

    #[test]
    fn a_version_one_migration_decodes_as_an_object() {
        let registration = Registration::new::<Renamed>();
        let entry = registration
            .decode_line(r#"{"role":"renamed","title":"old","v":0,"id":"m2"}"#)
            .unwrap();
        assert_eq!(
            entry.downcast_ref::<Renamed>(),
            Some(&Renamed {
                name: "old".to_owned()
            })
        );
        assert_eq!(entry.id.as_ref().unwrap().as_str(), "m2");
        // A migration that returns no object.
        assert_eq!(
            registration
                .decode_line(r#"{"role":"renamed","title":"scalar","v":0}"#)
                .unwrap_err(),
            UnknownReason::Invalid {
                error: "after migration from version 0: invalid type: string \"scalar\", expected an object".to_owned()
            }
        );
        // The migration's own error.
        assert_eq!(
            registration
                .decode_line(r#"{"role":"renamed","v":0}"#)
                .unwrap_err(),
            UnknownReason::Migration {
                from: 0,
                error: "no title in version 0".to_owned()
            }
        );
    }

    #[test]
    fn a_kind_without_migration_says_so() {
        assert_eq!(
            Registration::new::<Reading>()
                .decode_line(r#"{"role":"reading","label":"x","value":1,"v":0}"#)
                .unwrap_err(),
            UnknownReason::Migration {
                from: 0,
                error: "kind `reading` has no migration from version 0 to 1".to_owned()
            }
        );
    }
}
