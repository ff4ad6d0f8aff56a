//! `mprof run -- PROGRAM ARGS` end to end: the program runs under libmprof, its exit
//! status is passed on, its profile is written to a file named with its process id,
//! and the launcher says where it went and how to read it. (libmprof's own behaviour
//! under the launcher is tested in tests/ffi_c.rs.)

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::libmprof as library;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn the_program_runs_profiled_and_its_status_and_profile_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mprof"))
        .args(["run", "--library"])
        .arg(library())
        .args(["-o", "shell.out", "--depth", "64", "--", "sh", "-c", "echo $MPROF_DEPTH$LD_PRELOAD; exit 3"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "the program's own status: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "\n", "the program saw none of the launcher's variables");
    let profiles: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("shell."))
        .collect();
    assert_eq!(profiles.len(), 1, "{profiles:?} {stderr}");
    let name = profiles[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name != "shell.out" && name.contains(|c: char| c.is_ascii_digit()), "named with the pid: {name}");
    assert!(stderr.contains(&name) && stderr.contains("mprof report"), "{stderr}");
    let profile = mprof_engine::Profile::read(&std::fs::read(&profiles[0]).unwrap()).unwrap();
    assert_eq!(profile.language, mprof_engine::Language::C);
}

#[test]
fn a_missing_program_or_library_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_mprof")).args(["run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("<PROGRAM>"));
    let out = Command::new(env!("CARGO_BIN_EXE_mprof"))
        .args(["run", "--library", "/no/such/libmprof.so", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("mprof: ") && err.contains("/no/such/libmprof.so"), "{err}");
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn leak_exitcode_fails_a_leaking_program_and_passes_a_clean_one() {
    // `sh -c` leaks nothing definitely (its blocks are reachable from its globals);
    // a C program that drops three blocks does.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("drop.c");
    std::fs::write(&src, "#include <stdlib.h>\nint main(void) { for (int i = 0; i < 3; i++) { void *volatile p = malloc(100); p = 0; } return 0; }\n").unwrap();
    let exe = dir.path().join("drop");
    assert!(Command::new("gcc").args(["-O0", "-o"]).arg(&exe).arg(&src).status().unwrap().success());
    let gate = |program: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mprof"))
            .args(["run", "--library"])
            .arg(library())
            .args(["--leak-exitcode", "23", "-o", "g.%p.out", "--"])
            .args(program)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let out = gate(&[exe.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(23), "{stderr}");
    assert!(stderr.contains("300 bytes definitely lost"), "{stderr}");
    let out = gate(&["sh", "-c", "exit 0"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = gate(&["sh", "-c", "exit 4"]);
    assert_eq!(out.status.code(), Some(4), "the program's own failure still comes through");
}
