//! Two derived types claiming one kind (and one alias) in the same binary: the
//! global registry reports both type names and decodes the kind to neither.

use agentmsg::custom::{Registry, RegistryError};
use agentmsg::transcript::UnknownReason;
use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

mod billing {
    #[derive(
        Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, agentmsg::AgentMessage,
    )]
    #[agent_message(kind = "invoice", aliases = ["bill"])]
    pub struct Invoice {
        pub amount: u64,
    }
}

mod shipping {
    #[derive(
        Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, agentmsg::AgentMessage,
    )]
    #[agent_message(kind = "invoice")]
    pub struct Invoice {
        pub parcel: String,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "receipt", aliases = ["bill"])]
struct Receipt {
    total: u64,
}

#[test]
fn duplicates_are_reported_with_both_type_names() {
    let registry = Registry::global();
    let mut duplicates: Vec<_> = registry.duplicates().iter().map(|d| d.kind).collect();
    duplicates.sort_unstable();
    assert_eq!(duplicates, ["bill", "invoice"]);

    let invoice = registry.duplicate("invoice").unwrap();
    let names = [invoice.first, invoice.second];
    assert!(
        names.iter().any(|n| n.ends_with("billing::Invoice")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.ends_with("shipping::Invoice")),
        "{names:?}"
    );
    let text = registry.check().unwrap_err().to_string();
    assert!(text.contains("is claimed by both"), "{text}");

    let bill = registry.duplicate("bill").unwrap();
    let names = [bill.first, bill.second];
    assert!(
        names.iter().any(|n| n.ends_with("billing::Invoice")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.ends_with("Receipt")), "{names:?}");

    assert!(matches!(
        registry.resolve("invoice"),
        Err(RegistryError::Duplicate(_))
    ));
    // The unambiguous kind of one of them still resolves.
    assert!(registry.get("receipt").is_some());
}

#[test]
fn an_ambiguous_kind_is_kept_not_guessed() {
    let line = r#"{"role":"invoice","amount":3}"#;
    let kept = AgentMessage::from_line(line).unwrap();
    let unknown = kept.as_unknown().unwrap();
    assert_eq!(unknown.raw(), line);
    assert!(matches!(
        unknown.reason(),
        UnknownReason::AmbiguousKind { .. }
    ));
    let generic: AgentMessage = serde_json::from_str(line).unwrap();
    assert!(matches!(
        generic.as_unknown().unwrap().reason(),
        UnknownReason::AmbiguousKind { .. }
    ));
    // Neither type writes a line it could not read back.
    let error = AgentMessage::custom(billing::Invoice { amount: 3 })
        .to_line()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("cannot write a `invoice` line") && error.contains("is claimed by both"),
        "{error}"
    );
    let parcel = AgentMessage::custom(shipping::Invoice { parcel: "p".into() });
    assert_eq!(parcel.kind(), "invoice");
    assert!(serde_json::to_string(&parcel).is_err());
    let mut writer = agentmsg::JsonlWriter::new(Vec::new());
    assert!(writer.write(&parcel).is_err());
    // A kept line of the kind is still written back byte for byte.
    assert_eq!(kept.to_line().unwrap(), line);
    // The unambiguous kind writes as ever.
    assert!(AgentMessage::custom(Receipt { total: 1 }).to_line().is_ok());
}
