//! A `tracing` subscriber that keeps every span's name and fields, for the
//! span test and the `trace` example.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One span: its name and its fields, as recorded last.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub name: &'static str,
    pub fields: BTreeMap<String, String>,
}

/// Keeps every span; clones share what they keep.
#[derive(Clone, Default)]
pub struct Capture {
    spans: Arc<Mutex<Vec<Captured>>>,
    next: Arc<AtomicU64>,
}

impl Capture {
    /// The spans named `name`, in the order they began.
    pub fn spans(&self, name: &str) -> Vec<Captured> {
        self.spans
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.name == name)
            .cloned()
            .collect()
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut captured = Captured {
            name: span.metadata().name(),
            fields: BTreeMap::new(),
        };
        span.record(&mut Fields(&mut captured.fields));
        let mut spans = self.spans.lock().unwrap();
        spans.push(captured);
        self.next.fetch_add(1, Ordering::SeqCst);
        Id::from_u64(spans.len() as u64)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap();
        if let Some(captured) = spans.get_mut(span.into_u64() as usize - 1) {
            values.record(&mut Fields(&mut captured.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
