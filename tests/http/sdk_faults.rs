//! agentmsg's client and the official Python SDKs (anthropic, openai) against
//! one loopback fault server (`scripts/sdk_faults.py`), fault by fault: how
//! many attempts each makes, how long it waits between them, and what its
//! caller gets. Both sides have two retries (the SDKs' default and
//! agentmsg's).
//!
//! The SDKs run first (all faults at once, one thread each), then agentmsg's
//! runs (all at once); the server logs every request with when it came and
//! when its reply had been sent, so a wait is measured the same way for both.
//! Each side's attempts must be what the table below says, and each wait
//! within the SDKs' documented bounds (0.5 s × 2ⁿ less up to a quarter, or
//! what the server asked for), give or take [`SLACK`] for a loaded machine.
//! Where agentmsg differs from an SDK, the table says so; the reasons are in
//! the `http` module's fault table.
//!
//! The SDKs come from the virtual environment `.ci/run` makes from
//! `scripts/requirements-sdk.txt` (`target/sdk-venv`, or
//! `$AGENTMSG_SDK_VENV`). Without it the test says it is skipped; under CI
//! (or with `AGENTMSG_REQUIRE_SDK` set) it fails instead.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use agentmsg::http::{ApiKey, Client, ClientError, Endpoint, Retry};
use agentmsg::providers::Api;
use futures_util::future::join_all;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdout, Command};

use crate::{drain, request};

/// How much longer than its bound a measured wait may be: the time to read a
/// reply, raise or return its error and send the next request, on a machine
/// that other builds and tests share (seen up to 0.2 s with a load of 15 on
/// two cores). A wait is never measured shorter than it was (see
/// [`EARLY`]), so a client that waits too little always fails.
const SLACK: f64 = 1.0;
/// How much shorter than its bound the time between two requests' arrivals
/// may be: none, but for a `retry-after` date, which the server writes from
/// its clock before it replies and the client reads from its own after.
const EARLY: f64 = 0.05;
/// How long a run may take before it counts as still waiting (the script's
/// `CUTOFF`).
const CUTOFF: Duration = Duration::from_secs(6);

/// How a fault's retries should wait.
#[derive(Debug, Clone, Copy)]
enum Wait {
    /// The backoff: retry `n` waits 0.5 s × 2ⁿ less up to a quarter.
    Backoff,
    /// What the server asked for, in seconds.
    Asked(f64),
    /// A `retry-after` date this many seconds ahead, in whole seconds: a
    /// wait between one second less and it.
    Date(f64),
    /// No retry.
    None,
}

/// One fault of the script, and what each client should do on it.
struct Fault {
    name: &'static str,
    streamed: bool,
    wait: Wait,
    /// Attempts of agentmsg (Messages and Chat alike), of the anthropic SDK
    /// and of the openai SDK; `None`: still waiting at the cutoff (after its
    /// first attempt).
    attempts: [Option<usize>; 3],
}

const FAULTS: [Fault; 16] = [
    fault("503", Wait::Backoff, [3, 3, 3]),
    fault("503-should-retry-false", Wait::None, [1, 1, 1]),
    fault("400-should-retry-true", Wait::Backoff, [3, 3, 3]),
    fault("429-retry-after-1", Wait::Asked(1.0), [3, 3, 3]),
    fault("429-retry-after-ms-300", Wait::Asked(0.3), [3, 3, 3]),
    fault("429-retry-after-date", Wait::Date(2.0), [3, 3, 3]),
    fault("429-retry-after-past-date", Wait::Backoff, [3, 3, 3]),
    fault("429-retry-after-0", Wait::Backoff, [3, 3, 3]),
    // agentmsg waits at most `Retry::max_wait` (60 s) and returns the error
    // with its `retry_after`; openai waits up to 120 s, anthropic any time.
    Fault {
        name: "429-retry-after-90",
        streamed: false,
        wait: Wait::None,
        attempts: [Some(1), None, None],
    },
    Fault {
        name: "429-retry-after-150",
        streamed: false,
        wait: Wait::None,
        attempts: [Some(1), None, Some(1)],
    },
    fault("529-overloaded", Wait::Backoff, [3, 3, 3]),
    fault("500-big-body", Wait::Backoff, [3, 3, 3]),
    fault("connection-reset", Wait::Backoff, [3, 3, 3]),
    Fault {
        streamed: true,
        ..fault("stream-error-event", Wait::None, [1, 1, 1])
    },
    Fault {
        streamed: true,
        ..fault("stream-cut", Wait::None, [1, 1, 1])
    },
    fault("307-other-origin", Wait::None, [1, 1, 1]),
];

const fn fault(name: &'static str, wait: Wait, attempts: [usize; 3]) -> Fault {
    Fault {
        name,
        streamed: false,
        wait,
        attempts: [Some(attempts[0]), Some(attempts[1]), Some(attempts[2])],
    }
}

/// The Python of the SDKs' virtual environment, or `None` after a loud
/// `SKIPPED` line (a failure under CI).
fn sdk_python() -> Option<PathBuf> {
    let venv = std::env::var_os("AGENTMSG_SDK_VENV")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/sdk-venv"));
    let python = venv.join("bin/python");
    if python.is_file() {
        return Some(python);
    }
    let why = format!(
        "no Python SDK environment at {} (`.ci/run` makes it from scripts/requirements-sdk.txt)",
        venv.display()
    );
    if ["CI", "AGENTMSG_REQUIRE_SDK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
    {
        panic!("{why}");
    }
    eprintln!("\n*** SKIPPED agentmsg against the official SDKs: {why} ***\n");
    None
}

/// What one agentmsg run's caller got.
fn seen(result: Result<String, ClientError>) -> String {
    let error = match result {
        Ok(text) => return format!("ok: {text:?}"),
        Err(error) => error,
    };
    match &error {
        ClientError::Api(e) => format!(
            "Api {}, message {} B{}",
            e.status,
            e.message.len(),
            if e.message.contains("only its start was read") {
                " (cut)"
            } else {
                ""
            }
        ),
        ClientError::Stream { error, .. } => format!(
            "Stream {}{}",
            error.error_type.as_deref().unwrap_or("error"),
            if error.is_retryable() {
                " (retryable)"
            } else {
                ""
            }
        ),
        ClientError::Connect { .. } => "Connect".to_owned(),
        ClientError::Transport { event, .. } => format!("Transport at event {event}"),
        ClientError::Redirect { status, .. } => format!("Redirect {status} refused"),
        other => format!("{other}"),
    }
}

/// The client of one agentmsg run of `fault` on `api`, at the script's
/// server `url`.
fn agentmsg_client(url: &str, fault: &Fault, api: Api, client: &str) -> Client {
    let endpoint = match api {
        Api::Anthropic => Endpoint::anthropic(),
        Api::OpenaiResponses => Endpoint::openai_responses(),
        _ => Endpoint::openai_chat(),
    };
    Client::builder(
        endpoint
            .with_base_url(&format!("{url}/{}/{client}/v1", fault.name))
            .with_key(ApiKey::new("sk-agentmsg-key")),
    )
    .retry(Retry::with_max_retries(2))
    .build()
    .expect("a client")
}

/// One agentmsg run: what its caller got.
async fn agentmsg_run(client: Client, api: Api, streamed: bool) -> String {
    let request = request(api);
    let run = async {
        if streamed {
            drain(&client, &request)
                .await
                .1
                .map(|reply| reply.message.text_content())
        } else {
            client
                .complete(&request)
                .await
                .map(|reply| reply.message.text_content())
        }
    };
    match tokio::time::timeout(CUTOFF, run).await {
        Ok(result) => seen(result),
        Err(_) => format!("still waiting after {} s", CUTOFF.as_secs()),
    }
}

/// The script's next line, as JSON.
async fn next(lines: &mut Lines<BufReader<ChildStdout>>) -> Value {
    let line = lines
        .next_line()
        .await
        .expect("the script's output")
        .expect("the script ended early (its error is above)");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// The bounds of retry `n`'s wait, in seconds.
fn bounds(wait: Wait, n: usize) -> (f64, f64) {
    match wait {
        Wait::Backoff => {
            let full = 0.5 * f64::from(1u32 << n);
            (full * 0.75, full)
        }
        Wait::Asked(s) => (s, s),
        Wait::Date(s) => (s - 1.0, s),
        Wait::None => (0.0, 0.0),
    }
}

/// One request a run made, as the script logged it.
#[derive(Debug)]
struct Logged {
    arrived: f64,
    sent: f64,
    other: bool,
    key: bool,
    body: u64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agentmsg_retries_and_waits_as_the_official_sdks_do() {
    let Some(python) = sdk_python() else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/sdk_faults.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = next(&mut lines).await["listening"]
        .as_str()
        .expect("the server's URL")
        .to_owned();

    // The SDKs' runs, then agentmsg's, so that neither slows the other.
    let mut sdk_seen = BTreeMap::new();
    loop {
        let line = next(&mut lines).await;
        if line.get("sdks").is_some() {
            break;
        }
        sdk_seen.insert(
            line["run"].as_str().unwrap().to_owned(),
            line["seen"].as_str().unwrap().to_owned(),
        );
    }
    let mut runs = Vec::new();
    for fault in &FAULTS {
        runs.push((fault, Api::Anthropic, "agentmsg-anthropic"));
        runs.push((fault, Api::OpenaiChat, "agentmsg-chat"));
        if fault.name == "stream-error-event" {
            runs.push((fault, Api::OpenaiResponses, "agentmsg-responses"));
        }
    }
    // The first reply decoded in a process parses the built-in model catalog
    // and the price database (for its cost): in a debug build that takes
    // over a second of a worker thread, and would count in the waits of
    // every run waiting on a timer then. It is done here, before the runs.
    for api in [Api::Anthropic, Api::OpenaiChat, Api::OpenaiResponses] {
        api.decode_response(&crate::whole_reply(api, "warm"))
            .expect("a whole reply");
    }
    // The clients are built first (loading the TLS roots takes a while), and
    // each run is a task of its own, so that no run's wait includes another's
    // work.
    let tasks: Vec<_> = runs
        .iter()
        .map(|(fault, api, client)| {
            let client = agentmsg_client(&url, fault, *api, client);
            (client, *api, fault.streamed)
        })
        .collect();
    let tasks: Vec<_> = tasks
        .into_iter()
        .map(|(client, api, streamed)| tokio::spawn(agentmsg_run(client, api, streamed)))
        .collect();
    let ours = join_all(tasks)
        .await
        .into_iter()
        .map(|seen| seen.expect("a run"));
    let mut seen: BTreeMap<String, String> = runs
        .iter()
        .zip(ours)
        .map(|((fault, _, client), seen)| (format!("{}/{client}", fault.name), seen))
        .collect();
    seen.extend(sdk_seen);

    stdin.shutdown().await.unwrap();
    drop(stdin);
    let log = next(&mut lines).await;
    let log: BTreeMap<String, Vec<Logged>> = log["log"]
        .as_object()
        .expect("the script's log")
        .iter()
        .map(|(run, requests)| {
            let requests = requests
                .as_array()
                .unwrap()
                .iter()
                .map(|r| Logged {
                    arrived: r["t"].as_f64().unwrap(),
                    sent: r["sent"].as_f64().unwrap(),
                    other: r["other"].as_bool().unwrap(),
                    key: r["key"].as_bool().unwrap(),
                    body: r["body"].as_u64().unwrap(),
                })
                .collect();
            (run.clone(), requests)
        })
        .collect();
    let _ = child.wait().await;

    let mut table = vec![
        "| fault | client | attempts | waits (s) | bounds (s) | the caller gets |".to_owned(),
        "|---|---|---|---|---|---|".to_owned(),
    ];
    let mut wrong = Vec::new();
    for fault in &FAULTS {
        let mut clients = vec![
            ("agentmsg-anthropic", fault.attempts[0]),
            ("agentmsg-chat", fault.attempts[0]),
            ("anthropic-sdk", fault.attempts[1]),
            ("openai-sdk", fault.attempts[2]),
        ];
        if fault.name == "stream-error-event" {
            clients.extend([
                ("agentmsg-responses", Some(1)),
                ("openai-responses-sdk", Some(1)),
            ]);
        }
        for (client, expected) in clients {
            let run = format!("{}/{client}", fault.name);
            let requests = log.get(&run).map(Vec::as_slice).unwrap_or_default();
            let here: Vec<_> = requests.iter().filter(|r| !r.other).collect();
            // From the reply to the next request: the wait, and the time to
            // read the reply and send again. From arrival to arrival: at
            // least the wait, however slow the machine.
            let waits: Vec<f64> = here.windows(2).map(|w| w[1].arrived - w[0].sent).collect();
            let at_least: Vec<f64> = here
                .windows(2)
                .map(|w| w[1].arrived - w[0].arrived)
                .collect();
            let caller = seen.get(&run).cloned().unwrap_or_default();
            let pending = caller.starts_with("still waiting");
            if pending != expected.is_none() {
                wrong.push(format!("{run}: the caller got {caller:?}"));
            }
            if here.len() != expected.unwrap_or(1) {
                wrong.push(format!(
                    "{run}: {} attempts, not {}",
                    here.len(),
                    expected.unwrap_or(1)
                ));
            }
            let mut bound_text = Vec::new();
            for (n, wait) in waits.iter().enumerate() {
                let (low, high) = bounds(fault.wait, n);
                bound_text.push(if low == high {
                    format!("{low}")
                } else {
                    format!("{low}–{high}")
                });
                if at_least[n] < low - EARLY || *wait > high + SLACK {
                    wrong.push(format!(
                        "{run}: retry {n} waited {wait:.3} s, not {low}–{high} s"
                    ));
                }
            }
            // What reached the other origin of a redirect.
            let elsewhere: Vec<_> = requests.iter().filter(|r| r.other).collect();
            let mut caller = caller;
            if let Some(r) = elsewhere.first() {
                caller.push_str(&format!(
                    "; the other origin got the {} B body{}",
                    r.body,
                    if r.key {
                        " and the key"
                    } else {
                        ", not the key"
                    }
                ));
            }
            if client.starts_with("agentmsg") && !elsewhere.is_empty() {
                wrong.push(format!("{run}: a request reached the other origin"));
            }
            table.push(format!(
                "| {} | {client} | {}{} | {} | {} | {caller} |",
                fault.name,
                here.len(),
                if pending { " (waiting)" } else { "" },
                waits
                    .iter()
                    .map(|w| format!("{w:.2}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                bound_text.join(", "),
            ));
        }
    }
    println!("{}", table.join("\n"));
    assert!(
        wrong.is_empty(),
        "{}\n\n{}",
        wrong.join("\n"),
        table.join("\n")
    );
}
