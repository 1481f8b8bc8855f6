//! `Session::read` on any bytes: a session or a typed error (a cycle, a
//! duplicate id), never a panic or a hang. A session saves back byte for byte
//! (another agent's log as the transcript it converts to),
//! and the context of its leaf and of every other leaf builds; a migrated pi
//! session reads again with the same context.
#![no_main]

use agentmsg::Session;
use agentmsg::session::SessionFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut session) = Session::read(data) else {
        return;
    };
    if matches!(
        session.format(),
        SessionFormat::Agentmsg | SessionFormat::Pi { .. }
    ) {
        assert_eq!(session.to_bytes(), data, "saved unchanged, byte for byte");
    }
    let context = session
        .context(None)
        .unwrap_or_else(|e| panic!("the leaf's context: {e}"))
        .into_owned();
    for branch in session.branches() {
        if let Some(id) = branch.last().and_then(|e| e.id()) {
            session
                .context(Some(id.as_str()))
                .unwrap_or_else(|e| panic!("the context of leaf {id}: {e}"));
        }
    }
    if matches!(session.format(), SessionFormat::Pi { version } if version < 3) {
        if let Ok(true) = session.migrate() {
            let again = Session::read(&session.to_bytes())
                .unwrap_or_else(|e| panic!("a migrated session reads: {e}"));
            let after = again.context(None).unwrap().into_owned();
            assert_eq!(after.messages.len(), context.messages.len());
        }
    }
});
