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

use super::codec::envelope::{decode_known, scan_version, Envelope};
use super::custom::{CustomEntry, CustomMessage};
use crate::UnknownReason;

/// One custom type's entry in the registry: its kind, aliases and monomorphized
/// decoders. `#[derive(AgentMessage)]` submits one for each type.
#[derive(Clone, Copy)]
pub struct Registration {
    kind: &'static str,
    aliases: &'static [&'static str],
    version: u32,
    type_id: fn() -> TypeId,
    type_name: fn() -> &'static str,
    decode_str: fn(&str) -> Result<CustomEntry, UnknownReason>,
    decode_value: fn(
        &serde_json::Map<String, serde_json::Value>,
        Envelope,
    ) -> Result<CustomEntry, UnknownReason>,
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
            decode_str: decode_str::<T>,
            decode_value: decode_value::<T>,
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

    /// Decodes one whole line (a flat JSON object) straight into the type; the
    /// reason it was not decoded otherwise.
    pub fn decode_line(&self, line: &str) -> Result<CustomEntry, UnknownReason> {
        (self.decode_str)(line)
    }

    /// Decodes the fields of an object whose envelope keys were already taken out.
    pub(crate) fn decode_fields(
        &self,
        fields: &serde_json::Map<String, serde_json::Value>,
        envelope: Envelope,
    ) -> Result<CustomEntry, UnknownReason> {
        (self.decode_value)(fields, envelope)
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

fn entry<T: CustomMessage>(value: T, envelope: Envelope) -> CustomEntry {
    CustomEntry {
        message: Box::new(value),
        id: envelope.id,
        turn_id: envelope.turn_id,
        parent_id: envelope.parent_id,
    }
}

/// The stored version: `v`, or 1 when absent (it is written only above 1).
fn stored_version(v: Option<u32>) -> u32 {
    v.unwrap_or(1)
}

fn decode_str<T: CustomMessage>(line: &str) -> Result<CustomEntry, UnknownReason> {
    let accept = |role: &str| role == T::KIND || T::ALIASES.contains(&role);
    match decode_known::<T>(line, &accept) {
        Ok((value, envelope)) => {
            let from = stored_version(envelope.v);
            if from == T::VERSION {
                Ok(entry(value, envelope))
            } else if from > T::VERSION {
                Err(newer::<T>(from))
            } else {
                migrate_line::<T>(line, from)
            }
        }
        Err(error) => match scan_version(line) {
            Some(from) if from > T::VERSION => Err(newer::<T>(from)),
            Some(from) if from < T::VERSION => migrate_line::<T>(line, from),
            None if T::VERSION > 1 => migrate_line::<T>(line, 1),
            _ => Err(UnknownReason::Invalid {
                error: error.to_string(),
            }),
        },
    }
}

fn newer<T: CustomMessage>(found: u32) -> UnknownReason {
    UnknownReason::NewerVersion {
        found,
        supported: T::VERSION,
    }
}

fn migrate_line<T: CustomMessage>(line: &str, from: u32) -> Result<CustomEntry, UnknownReason> {
    let mut fields: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)
        .map_err(|e| UnknownReason::Invalid {
            error: e.to_string(),
        })?;
    let envelope = Envelope::take_from(&mut fields).map_err(|e| UnknownReason::Invalid {
        error: e.to_string(),
    })?;
    migrate_fields::<T>(fields, envelope, from)
}

fn migrate_fields<T: CustomMessage>(
    fields: serde_json::Map<String, serde_json::Value>,
    envelope: Envelope,
    from: u32,
) -> Result<CustomEntry, UnknownReason> {
    let migrated = T::migrate(from, serde_json::Value::Object(fields)).map_err(|e| {
        UnknownReason::Migration {
            from,
            error: e.message,
        }
    })?;
    let value = T::deserialize(migrated).map_err(|e| UnknownReason::Invalid {
        error: format!("after migration from version {from}: {e}"),
    })?;
    Ok(entry(value, envelope))
}

fn decode_value<T: CustomMessage>(
    fields: &serde_json::Map<String, serde_json::Value>,
    envelope: Envelope,
) -> Result<CustomEntry, UnknownReason> {
    let from = stored_version(envelope.v);
    if from > T::VERSION {
        return Err(newer::<T>(from));
    }
    if from < T::VERSION {
        return migrate_fields::<T>(fields.clone(), envelope, from);
    }
    match T::deserialize(serde::de::value::MapDeserializer::new(
        fields.iter().map(|(k, v)| (k.as_str(), v)),
    )) {
        Ok(value) => Ok(entry(value, envelope)),
        Err(error) => Err(UnknownReason::Invalid {
            error: error.to_string(),
        }),
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
        self.add(Registration::new::<T>());
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
