//! A small DevTools-protocol client for the HTML report's browser test: it starts
//! headless Chromium with `--remote-debugging-pipe` (the protocol's JSON messages,
//! NUL-terminated, on file descriptors 3 and 4), opens one page, evaluates
//! expressions in it, sends real mouse and keyboard input, and collects the page's
//! console errors and uncaught exceptions.
//!
//! Why by hand: the handful of commands the test sends need no websocket stack nor a
//! generated binding of the whole protocol (what `headless_chrome` and `chromiumoxide`
//! compile), only `serde_json` and `libc`, which the tests already use. Every wait is
//! bounded (`TIMEOUT`), and the browser is killed when the client is dropped.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(60);

/// The Chromium executable on PATH, if any.
pub fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
            let exe = dir.join(name);
            if exe.is_file() {
                return Some(exe);
            }
        }
    }
    None
}

/// True when the tests run in CI (`CI` set to anything but `false` or `0`), where a
/// missing tool fails a test instead of skipping it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// A pipe as (read end, write end), both close-on-exec.
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds`, which we then own.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

pub struct Browser {
    child: Child,
    to_browser: std::fs::File,
    from_browser: Receiver<Value>,
    next_id: u64,
    session: Option<String>,
    /// Every event received so far (for console errors and load events).
    pub events: Vec<Value>,
    /// The profile directory, removed with the client.
    _profile_dir: tempfile::TempDir,
}

impl Browser {
    /// Starts headless Chromium.
    pub fn launch(exe: &Path) -> Result<Browser, String> {
        let profile_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let (browser_reads, we_write) = pipe();
        let (we_read, browser_writes) = pipe();
        let (r, w) = (browser_reads.as_raw_fd(), browser_writes.as_raw_fd());
        let mut command = Command::new(exe);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--window-size=1280,1000",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile_dir.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec.
        // The ends are first moved above 9 so that placing them at 3 and 4 cannot
        // overwrite one with the other; dup2 leaves the copies open across exec.
        unsafe {
            command.pre_exec(move || {
                let high_r = libc::fcntl(r, libc::F_DUPFD, 10);
                let high_w = libc::fcntl(w, libc::F_DUPFD, 10);
                if high_r < 0 || high_w < 0 || libc::dup2(high_r, 3) < 0 || libc::dup2(high_w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        drop((browser_reads, browser_writes));
        let (tx, rx) = channel();
        let mut input = std::fs::File::from(we_read);
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut buf = [0u8; 65536];
            loop {
                let n = match input.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|&b| b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice::<Value>(&message[..end])
                        && tx.send(v).is_err()
                    {
                        return;
                    }
                }
            }
        });
        Ok(Browser {
            child,
            to_browser: std::fs::File::from(we_write),
            from_browser: rx,
            next_id: 1,
            session: None,
            events: Vec::new(),
            _profile_dir: profile_dir,
        })
    }

    /// Sends a command (to the page's session once one is attached) and waits for its
    /// answer, keeping the events that arrive meanwhile.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = &self.session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).map_err(|e| e.to_string())?;
        bytes.push(0);
        self.to_browser.write_all(&bytes).map_err(|e| format!("{method}: cannot write to the browser: {e}"))?;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let v = self.receive(deadline).map_err(|e| format!("{method}: {e}"))?;
            if v["id"] == json!(id) {
                if let Some(error) = v.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(v["result"].clone());
            }
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    fn receive(&self, deadline: Instant) -> Result<Value, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.from_browser.recv_timeout(left).map_err(|e| match e {
            RecvTimeoutError::Timeout => format!("no answer from the browser in {TIMEOUT:?}"),
            RecvTimeoutError::Disconnected => "the browser closed its pipe".to_string(),
        })
    }

    /// Waits for an event named `method` (received now or earlier).
    pub fn wait_event(&mut self, method: &str) -> Result<Value, String> {
        if let Some(e) = self.events.iter().find(|e| e["method"] == method) {
            return Ok(e.clone());
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let v = self.receive(deadline).map_err(|e| format!("waiting for {method}: {e}"))?;
            if v.get("method").is_some() {
                self.events.push(v.clone());
                if v["method"] == method {
                    return Ok(v);
                }
            }
        }
    }

    /// Opens `url` in a new page and waits for its load event.
    pub fn open(&mut self, url: &str) -> Result<(), String> {
        self.session = None;
        let target = self.call("Target.createTarget", json!({ "url": "about:blank" }))?;
        let attached = self.call("Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }))?;
        self.session = attached["sessionId"].as_str().map(String::from);
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            self.call(domain, json!({}))?;
        }
        self.call("Emulation.setDeviceMetricsOverride", json!({ "width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": false }))?;
        self.events.clear();
        self.call("Page.navigate", json!({ "url": url }))?;
        self.wait_event("Page.loadEventFired").map(drop)
    }

    /// The value of a JavaScript expression in the page (returned by value).
    pub fn eval(&mut self, expression: &str) -> Result<Value, String> {
        let r = self.call("Runtime.evaluate", json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }))?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(format!("{expression}: {}", ex["exception"]["description"].as_str().unwrap_or(&ex.to_string())));
        }
        Ok(r["result"]["value"].clone())
    }

    /// A real left click at page coordinates (CSS pixels of the viewport).
    pub fn click(&mut self, x: f64, y: f64) -> Result<(), String> {
        self.call("Input.dispatchMouseEvent", json!({ "type": "mouseMoved", "x": x, "y": y }))?;
        for kind in ["mousePressed", "mouseReleased"] {
            self.call("Input.dispatchMouseEvent", json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }))?;
        }
        Ok(())
    }

    /// Scrolls the element matching `selector` into view and clicks its centre.
    pub fn click_element(&mut self, selector: &str) -> Result<(), String> {
        let (x, y) = self.centre_of(selector)?;
        self.click(x, y)
    }

    /// Moves the mouse over the centre of the element matching `selector`.
    pub fn hover_element(&mut self, selector: &str) -> Result<(), String> {
        let (x, y) = self.centre_of(selector)?;
        self.call("Input.dispatchMouseEvent", json!({ "type": "mouseMoved", "x": x, "y": y })).map(drop)
    }

    /// The viewport coordinates of the centre of the element matching `selector`,
    /// scrolled into view first.
    fn centre_of(&mut self, selector: &str) -> Result<(f64, f64), String> {
        let js = format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'center', inline: 'center'}}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()",
            sel = json!(selector)
        );
        let at = self.eval(&js)?;
        let (Some(x), Some(y)) = (at[0].as_f64(), at[1].as_f64()) else {
            return Err(format!("no element {selector}"));
        };
        Ok((x, y))
    }

    /// Types `text` into the focused element, as a keyboard would.
    pub fn type_text(&mut self, text: &str) -> Result<(), String> {
        self.call("Input.insertText", json!({ "text": text })).map(drop)
    }

    /// The page's console errors and uncaught exceptions so far.
    pub fn errors(&mut self) -> Vec<String> {
        // Let pending events arrive: a round trip orders them before its answer.
        let _ = self.eval("0");
        let mut out = Vec::new();
        for e in &self.events {
            let p = &e["params"];
            match e["method"].as_str() {
                Some("Runtime.exceptionThrown") => out.push(format!(
                    "exception: {}",
                    p["exceptionDetails"]["exception"]["description"].as_str().unwrap_or(&p["exceptionDetails"].to_string())
                )),
                Some("Runtime.consoleAPICalled") if p["type"] == "error" || p["type"] == "assert" => {
                    out.push(format!("console.{}: {}", p["type"].as_str().unwrap_or(""), p["args"]))
                }
                Some("Log.entryAdded") if p["entry"]["level"] == "error" => {
                    out.push(format!("log: {}", p["entry"]["text"].as_str().unwrap_or("")))
                }
                _ => {}
            }
        }
        out
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.session = None;
        let _ = self.to_browser.write_all(b"{\"id\":0,\"method\":\"Browser.close\"}\0");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
