//! Helpers shared by the end-to-end tests: the `mprof-lisp` binary under test
//! (rebuilt into the test's own target directory, so a test never runs a stale
//! binary) and a runner that captures its exit status and both output streams.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The `mprof-lisp` binary under test, built once per test process.
pub fn binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build("mprof-lisp", "mprof-lisp"))
}

/// The `mprof` binary (reports, listings, exports), built once per test process.
pub fn mprof_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build("mprof-profiler", "mprof"))
}

/// Builds `bin` of `package` into the target directory this test runs from.
fn build(package: &str, bin: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // <target>/<profile>/deps/<test>-<hash>
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>").to_path_buf();
    let target = profile_dir.parent().expect("target dir").to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", package, "--bin", bin]).env("CARGO_TARGET_DIR", &target);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let out = cmd.output().expect("run cargo build");
    assert!(out.status.success(), "cargo build -p {package} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    profile_dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX))
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

/// Run the binary in `dir` with `args`, feeding `stdin`. A run that takes
/// longer than a minute is killed and reported as a hang (status -1).
pub fn run_in(dir: &Path, args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(binary())
        .args(args)
        .current_dir(dir)
        .env("MPROF_LISP_HISTORY", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mprof-lisp");
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
