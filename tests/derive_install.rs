//! A registry built by hand and installed as the global one before anything
//! decodes (what a target without link-time registration does, e.g. wasm when
//! `__wasm_call_ctors` has not run). One test only: it owns the global registry
//! of this binary.

use agentmsg::custom::Registry;
use agentmsg::transcript::UnknownReason;
use agentmsg::{AgentMessage, CustomMessage};
use serde::{Deserialize, Serialize};

/// Implemented by hand, so it is not submitted to the link-time registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manual {
    n: u32,
}

impl CustomMessage for Manual {
    const KIND: &'static str = "manual";
}

/// Derived, so submitted at link time; absent from the installed registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "derivedButNotInstalled")]
struct Derived {
    n: u32,
}

#[test]
fn installed_registry_is_the_global_one() {
    assert!(Registry::from_inventory()
        .get("derivedButNotInstalled")
        .is_some());
    assert!(Registry::from_inventory().get("manual").is_none());

    let installed = Registry::new().with::<Manual>().install().unwrap();
    assert!(std::ptr::eq(installed, Registry::global()));
    assert!(
        Registry::new().install().is_err(),
        "a second install must fail"
    );

    let manual = AgentMessage::from_line(r#"{"role":"manual","n":3}"#).unwrap();
    assert_eq!(manual.downcast_ref::<Manual>(), Some(&Manual { n: 3 }));
    let generic: Vec<AgentMessage> = serde_json::from_str(
        r#"[{"role":"manual","n":4},{"role":"compactionSummary","summary":"s"}]"#,
    )
    .unwrap();
    assert_eq!(generic[0].downcast_ref::<Manual>(), Some(&Manual { n: 4 }));
    assert!(generic[1].is_custom());

    let derived = AgentMessage::from_line(r#"{"role":"derivedButNotInstalled","n":1}"#).unwrap();
    assert_eq!(
        derived.as_unknown().unwrap().reason(),
        &UnknownReason::UnknownKind
    );
    let _ = Derived { n: 1 };
}
