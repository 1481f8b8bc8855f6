//! Compile-fail and pass cases, pinned to the stable compiler's output
//! (`TRYBUILD=overwrite cargo test -p agentmsg-ui-tests` rewrites them; read
//! every diff). In a crate of their own, whose dependencies are only what a
//! user of agentmsg has, so trybuild's project builds agentmsg's tree and no
//! more (Cargo.toml).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
