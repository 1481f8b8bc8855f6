//! `agentmsg`: check, inspect, repair, convert and project agent transcripts
//! (the command is [`agentmsg_cli::run`]).

fn main() -> std::process::ExitCode {
    agentmsg_cli::run()
}
