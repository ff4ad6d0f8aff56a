//! Helpers shared by the end-to-end tests of the `mprof-lisp` binary: the binary
//! cargo built for the test (`CARGO_BIN_EXE_mprof-lisp`: these tests are declared by
//! the package that owns the binary, lisp/cli/Cargo.toml, so the binary is always
//! the current one) and a runner that captures its exit status and both output streams.
//! Each test file includes it with `mod support;`.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `mprof-lisp` binary under test.
pub fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mprof-lisp"))
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The whole outcome as one text, for snapshots.
    pub fn transcript(&self) -> String {
        let mut stdout = self.stdout.clone();
        if !stdout.is_empty() && !stdout.ends_with('\n') {
            stdout.push_str("\n[no newline at the end]\n");
        }
        format!("exit status: {}\n--- stdout\n{stdout}--- stderr\n{}", self.code, self.stderr)
    }
}

/// Start the binary in `dir` with `args`, its three standard streams piped (and no
/// REPL history file).
pub fn spawn(dir: &Path, args: &[&str]) -> std::process::Child {
    Command::new(binary())
        .args(args)
        .current_dir(dir)
        .env("MPROF_LISP_HISTORY", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mprof-lisp")
}

/// Run the binary in `dir` with `args`, feeding `stdin`. A run that takes
/// longer than a minute is killed and reported as a hang (status -1).
pub fn run_in(dir: &Path, args: &[&str], stdin: &str) -> Run {
    let mut child = spawn(dir, args);
    let mut input = child.stdin.take().expect("stdin pipe");
    let text = stdin.to_string();
    let writer = std::thread::spawn(move || {
        // The program may exit without reading everything: ignore EPIPE.
        let _ = input.write_all(text.as_bytes());
    });
    let stdout = child.stdout.take().expect("stdout pipe");
    let stderr = child.stderr.take().expect("stderr pipe");
    let out_reader = std::thread::spawn(move || read_all(stdout));
    let err_reader = std::thread::spawn(move || read_all(stderr));
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        match child.try_wait().expect("wait for mprof-lisp") {
            Some(status) => break status.code().unwrap_or(-2),
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break -1;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let _ = writer.join();
    Run {
        code,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    }
}

fn read_all(mut r: impl std::io::Read) -> String {
    let mut buf = Vec::new();
    let _ = r.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Write `files` (name, text) into `dir`, then run the binary there with `args`.
pub fn run_with_files(dir: &Path, files: &[(&str, &str)], args: &[&str], stdin: &str) -> Run {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write test file");
    }
    run_in(dir, args, stdin)
}
