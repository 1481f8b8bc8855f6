//! A kind claimed by two types is reported as a warning through `log` on the
//! first use of the global registry. (A test binary of its own, with one test,
//! so that the logger is in place before anything touches the registry.)

use std::sync::Mutex;

use agentmsg::custom::Registry;
use agentmsg::AgentMessage;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
#[agent_message(kind = "ticket")]
struct Ticket {
    seat: String,
}

mod other {
    #[derive(
        Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, agentmsg::AgentMessage,
    )]
    #[agent_message(kind = "pass", aliases = ["ticket"])]
    pub struct Pass {
        pub gate: String,
    }
}

static LOGGED: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.target() == "agentmsg"
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            let line = (record.level(), record.args().to_string());
            LOGGED.lock().unwrap().push(line);
        }
    }
    fn flush(&self) {}
}

#[test]
fn a_duplicate_kind_is_logged_once_on_first_use() {
    log::set_logger(&Capture).unwrap();
    log::set_max_level(log::LevelFilter::Warn);
    assert!(LOGGED.lock().unwrap().is_empty());

    let registry = Registry::global();
    assert_eq!(registry.duplicates().len(), 1);
    let _ = Registry::global();
    let logged = LOGGED.lock().unwrap().clone();
    assert_eq!(logged.len(), 1, "{logged:?}");
    let (level, text) = &logged[0];
    assert_eq!(*level, log::Level::Warn);
    assert!(
        text.contains("`ticket` is claimed by both")
            && text.contains("Ticket")
            && text.contains("other::Pass")
            && text.contains("read back as unknown"),
        "{text}"
    );
    // The type whose kind is its own still writes.
    assert!(AgentMessage::custom(other::Pass { gate: "b".into() })
        .to_line()
        .is_ok());
    assert!(AgentMessage::custom(Ticket { seat: "a".into() })
        .to_line()
        .is_err());
}
