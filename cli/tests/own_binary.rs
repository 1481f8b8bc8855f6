//! An application's own `agentmsg`: this test binary links a custom kind (the
//! derive registers it at link time) and runs the command through
//! `agentmsg_cli::run_from`, as an application's three-line binary does with
//! `agentmsg_cli::run`. The shipped `agentmsg` does not know the kind.

use std::process::ExitCode;

use serde::{Deserialize, Serialize};

/// An application's approval of a tool call, a line of its sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "appApproval", to_llm = user("[approved {tool}]"))]
struct AppApproval {
    tool: String,
}

const SESSION: &str = concat!(
    r#"{"role":"user","content":"run the tests","timestamp":1}"#,
    "\n",
    r#"{"role":"appApproval","tool":"cargo test"}"#,
    "\n",
);

fn session() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.jsonl");
    std::fs::write(&path, SESSION).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
}

#[test]
fn the_apps_own_command_knows_its_kinds() {
    let (_dir, path) = session();
    // The line is the app's kind: it decodes, so the check is clean.
    let line = agentmsg::AgentMessage::from_line(SESSION.lines().nth(1).unwrap()).unwrap();
    assert!(line.downcast_ref::<AppApproval>().is_some());
    let code = agentmsg_cli::run_from(["agentmsg", "check", "--deny-warnings", &path]);
    assert_eq!(code, ExitCode::SUCCESS);
}

#[test]
fn the_shipped_command_calls_the_apps_kind_unknown() {
    let (_dir, path) = session();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_agentmsg"))
        .args(["check", "--deny-warnings", &path])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stdout.contains("unknown-kind") || stderr.contains("unknown-kind"),
        "{stdout}{stderr}"
    );
}

#[test]
fn usage_errors_and_help_keep_their_exit_codes() {
    assert_eq!(
        agentmsg_cli::run_from(["agentmsg", "frobnicate"]),
        ExitCode::from(2)
    );
    assert_eq!(
        agentmsg_cli::run_from(["agentmsg", "--version"]),
        ExitCode::SUCCESS
    );
}
