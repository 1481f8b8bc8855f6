//! Headless Chromium driven over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`: commands on fd 3, replies on fd 4, each a JSON
//! message ended by a NUL byte), with std and libc only.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The Chromium to drive: `$AGENTMSG_CHROMIUM`, else `/usr/bin/chromium`.
/// `None` (after a loud `SKIPPED` line) when there is none; a panic when
/// `CI` or `AGENTMSG_REQUIRE_CHROMIUM` (`.ci/run`) is set.
pub fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let path = std::env::var_os("AGENTMSG_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.is_file() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() || std::env::var_os("AGENTMSG_REQUIRE_CHROMIUM").is_some() {
        panic!(
            "{test}: chromium not found at {} and CI or AGENTMSG_REQUIRE_CHROMIUM is set (.ci/run installs it)",
            path.display()
        );
    }
    eprintln!(
        "\n==== SKIPPED {test}: chromium not found at {} (apt-get install chromium, or set AGENTMSG_CHROMIUM) ====\n",
        path.display()
    );
    None
}

/// A running headless Chromium with one page attached.
pub struct Browser {
    child: Child,
    commands: File,
    replies: Receiver<Value>,
    next_id: u64,
    session: String,
    /// Every event received so far.
    pub events: Vec<Value>,
    _profile: tempfile::TempDir,
}

/// A pipe's two ends, both close-on-exec, above the descriptors a child
/// is given (so `dup2` onto 3 and 4 never meets one of them).
fn pipe() -> (RawFd, RawFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(r, 0, "pipe2: {}", std::io::Error::last_os_error());
    let high = |fd: RawFd| {
        // SAFETY: `fd` was just opened; the duplicate is close-on-exec too.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
        assert!(dup >= 10, "fcntl: {}", std::io::Error::last_os_error());
        // SAFETY: `fd` is ours and no longer used.
        unsafe { libc::close(fd) };
        dup
    };
    (high(fds[0]), high(fds[1]))
}

impl Browser {
    /// Starts Chromium at `chromium` with a fresh profile, `width`×`height`.
    pub fn start(chromium: &Path, width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let (cmd_read, cmd_write) = pipe();
        let (reply_read, reply_write) = pipe();
        let mut command = Command::new(chromium);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-pipe",
                "--hide-scrollbars",
                // Tests follow thousands of permalinks; Chromium otherwise
                // drops fragment navigations past 200 in 10 s.
                "--disable-ipc-flooding-protection",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (dup2) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(cmd_read, 3) < 0 || libc::dup2(reply_write, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start chromium");
        // SAFETY: the child has its copies; these ends are the child's only.
        unsafe {
            libc::close(cmd_read);
            libc::close(reply_write);
        }
        // SAFETY: each descriptor is ours alone from here on.
        let commands = unsafe { File::from_raw_fd(cmd_write) };
        let replies_file = unsafe { File::from_raw_fd(reply_read) };
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(replies_file);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if buf.last() == Some(&0) {
                            buf.pop();
                        }
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                            if tx.send(v).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            commands,
            replies: rx,
            next_id: 1,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = browser.call_in(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().unwrap().to_owned();
        let attached = browser.call_in(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_owned();
        for domain in ["Page.enable", "Runtime.enable", "Network.enable"] {
            browser.call(domain, json!({}));
        }
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        browser
    }

    fn call_in(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = Value::from(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.commands.write_all(&bytes).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.replies.recv_timeout(left) {
                Ok(v) if v["id"] == json!(id) => {
                    if let Some(e) = v.get("error") {
                        panic!("{method}: {e}");
                    }
                    return v["result"].clone();
                }
                Ok(v) => self.events.push(v),
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no reply in 60 s"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: chromium went away"),
            }
        }
    }

    /// Calls `method` on the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.call_in(Some(&session), method, params)
    }

    /// The value of `expression` in the page (an exception is a panic).
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expression}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Opens `url` and waits until the page's script has run (or 30 s).
    pub fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let ready = self.eval(
                "document.readyState === 'complete' && document.body !== null && document.body.getAttribute('data-ready') === '1'",
            );
            if ready == json!(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{url}: the page did not get ready in 30 s");
    }

    /// Every URL the page asked for that is not a `file:` or `data:` URL.
    pub fn requests_beyond_the_file(&mut self) -> Vec<String> {
        // Let late events arrive.
        self.eval("1");
        while let Ok(v) = self.replies.try_recv() {
            self.events.push(v);
        }
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str())
            .filter(|u| !u.starts_with("file:") && !u.starts_with("data:"))
            .map(str::to_owned)
            .collect()
    }

    /// Makes the page's `prefers-color-scheme` `scheme` (`light` or `dark`).
    pub fn color_scheme(&mut self, scheme: &str) {
        self.call(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        );
    }

    /// A PNG of the viewport.
    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine as _;
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
