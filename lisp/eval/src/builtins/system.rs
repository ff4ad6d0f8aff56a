//! The environment: clocks (`get-internal-run-time`, `get-universal-time`,
//! `decode-universal-time`...), `sleep`, environment variables, the command
//! line, running programs (`sys::%run-program`, under MPROF-EXT:RUN-PROGRAM
//! and UIOP:RUN-PROGRAM), the file dates, and the operations only the driver
//! can carry out (`gc`, `room`, `exit`), which return a host request. Also
//! the counters behind the `time` macro of the prelude.
//!
//! Invariants:
//! - Internal time is in microseconds (`internal-time-units-per-second` is
//!   1000000 in the prelude), for both real and run time.
//! - Universal time counts seconds from 1900-01-01T00:00:00Z; decoding uses
//!   UTC unless a time zone is given (this Lisp knows no local time zone).

use mprof_heap::{Value, alloc};
use num_bigint::BigInt;
use num_traits::ToPrimitive;

use crate::runtime::builtin::{BuiltinDef, MANY, cl, ext, sys};
use crate::runtime::capabilities::Capability;
use crate::runtime::ctx::{Ctx, file_name_arg};
use crate::runtime::raise::{HostRequest, LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

// ---- the machine and the software (MACHINE-TYPE, SOFTWARE-TYPE...) ----

/// The processor architecture as SBCL names it (X86-64, ARM64...).
fn machine_type() -> String {
    match std::env::consts::ARCH {
        "x86_64" => "X86-64".to_string(),
        "aarch64" => "ARM64".to_string(),
        other => other.to_uppercase(),
    }
}

/// The operating system's name, capitalized as SBCL prints it ("Linux").
fn software_type() -> String {
    let os = std::env::consts::OS;
    let mut chars = os.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The kernel release, where the system tells it.
fn os_release() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|s| s.trim().to_string())
}

fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|s| s.trim().to_string())
}

/// A string, or NIL when the system does not tell.
fn text<'gc>(ctx: &mut Ctx<'_, 'gc>, s: Option<String>) -> LResult<'gc> {
    Ok(s.map_or(Value::Nil, |s| alloc::string(ctx.mc, &s)))
}

/// (sys::%getenv name): the environment variable's value, or NIL.
fn getenv<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = ctx.string_arg(a[0])?;
    ctx.require(Capability::Environment)?;
    Ok(std::env::var(&name).map_or(Value::Nil, |v| alloc::string(ctx.mc, &v)))
}

/// (mprof-ext:posix-argv): the command line as SBCL's `*posix-argv*` gives it,
/// `"mprof-lisp"` then the program's arguments.
fn posix_argv<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    let mut items = vec![alloc::string(ctx.mc, "mprof-lisp")];
    items.extend(ctx.host.argv.iter().map(|a| alloc::string(ctx.mc, a)));
    Ok(alloc::list(ctx.mc, &items))
}

/// (sys::%run-program program args input directory) => exit-code, output,
/// error-output: run PROGRAM (found on PATH when it has no slash) with the
/// argument strings ARGS, feeding it the string INPUT (NIL: no input), in
/// DIRECTORY (NIL: the current one), and wait for it; its standard output
/// and error come back as strings. The exit code is NIL when a signal ended
/// it. A program that cannot be started is an error naming it.
fn run_program<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let program = file_name_arg(ctx, a[0])?;
    ctx.require(Capability::Processes)?;
    let args: Vec<String> = alloc::list_iter(a[1])
        .map(|v| crate::runtime::ctx::string_designator(ctx, v))
        .collect::<Result<_, _>>()?;
    let input = match a[2] {
        Value::Nil => None,
        v => Some(ctx.string_arg(v)?),
    };
    let mut command = Command::new(&program);
    command.args(&args).stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    if a[3].truthy() {
        command.current_dir(file_name_arg(ctx, a[3])?);
    }
    let mut child = command.spawn().map_err(|e| Raise::error(format!("cannot run the program {program:?}: {e}")))?;
    // Feed the input from a thread, so a program that writes much before
    // reading all of it cannot deadlock against us.
    let feeder = match (input, child.stdin.take()) {
        (Some(text), Some(mut stdin)) => Some(std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        })),
        _ => None,
    };
    let output = child.wait_with_output().map_err(|e| Raise::error(format!("running the program {program:?} failed: {e}")))?;
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let code = output.status.code().map_or(Value::Nil, |c| Value::Fixnum(i64::from(c)));
    let out = alloc::string(ctx.mc, &String::from_utf8_lossy(&output.stdout));
    let err = alloc::string(ctx.mc, &String::from_utf8_lossy(&output.stderr));
    Ok(ctx.set_values(&[code, out, err]))
}

/// (sys::%file-write-date pathname): the file's modification time as a universal
/// time, or NIL when the system cannot tell (as CLHS allows).
fn file_write_date<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    ctx.require_file(Capability::FileRead, &path)?;
    let modified = std::fs::metadata(&path).and_then(|m| m.modified());
    Ok(match modified.ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()) {
        Some(d) => Value::Fixnum(d.as_secs() as i64 + UNIX_EPOCH_UNIVERSAL),
        None => Value::Nil,
    })
}

/// (sys::%create-directories directory): create the directory and its
/// parents; T when one was created, NIL when it existed.
fn create_directories<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    ctx.require_file(Capability::FileWrite, &path)?;
    if path.is_empty() || std::path::Path::new(&path).is_dir() {
        return Ok(Value::Nil);
    }
    match std::fs::create_dir_all(&path) {
        Ok(()) => Ok(ctx.t()),
        Err(e) => Err(Raise::simple(crate::runtime::raise::ErrorKind::Stream, format!("cannot create the directory {path}: {e}"))),
    }
}

/// Seconds between 1900-01-01 (universal time 0) and 1970-01-01 (Unix time 0).
const UNIX_EPOCH_UNIVERSAL: i64 = 2_208_988_800;

/// CPU time this process has used, in microseconds: the scheduler's exact
/// figure when /proc offers it, else the tick counts, else real time.
fn run_time_micros(ctx: &Ctx<'_, '_>) -> i64 {
    if let Ok(text) = std::fs::read_to_string("/proc/self/schedstat")
        && let Some(ns) = text.split_whitespace().next().and_then(|f| f.parse::<u64>().ok())
    {
        return (ns / 1000) as i64;
    }
    if let Ok(text) = std::fs::read_to_string("/proc/self/stat")
        && let Some(after) = text.rsplit_once(')').map(|(_, rest)| rest)
    {
        // Fields after the command name: state is field 3; utime and stime are 14 and 15.
        let fields: Vec<&str> = after.split_whitespace().collect();
        let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<i64>().ok()).unwrap_or(0);
        // Linux reports them in USER_HZ, which is 100 on every current platform.
        return (tick(11) + tick(12)) * 10_000;
    }
    ctx.host.start.elapsed().as_micros() as i64
}

fn get_internal_run_time<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum(run_time_micros(ctx)))
}

fn unix_seconds() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

fn get_universal_time<'gc>(_ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum(unix_seconds() + UNIX_EPOCH_UNIVERSAL))
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's civil_from_days).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) to days since 1970-01-01 (days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A time zone argument in hours west of Greenwich, as seconds (rationals allowed).
fn zone_seconds<'gc>(ctx: &Ctx<'_, 'gc>, v: Option<Value<'gc>>) -> Result<i64, Raise<'gc>> {
    match v {
        None | Some(Value::Nil) => Ok(0),
        Some(Value::Fixnum(h)) if h.abs() <= 24 => Ok(h * 3600),
        Some(v @ Value::Ratio(r)) => {
            let secs = (&r.num * BigInt::from(3600)) / &r.den;
            secs.to_i64().filter(|s| s.abs() <= 24 * 3600).ok_or_else(|| ctx.type_error(v, "(RATIONAL -24 24)"))
        }
        Some(other) => Err(ctx.type_error(other, "(RATIONAL -24 24)")),
    }
}

/// (decode-universal-time universal-time &optional time-zone)
/// => second minute hour date month year day daylight-p zone
fn decode_universal_time<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let ut = match a[0] {
        Value::Fixnum(t) if t >= 0 => t,
        other => return Err(ctx.type_error(other, "UNSIGNED-BYTE")),
    };
    let zone = zone_seconds(ctx, a.get(1).copied())?;
    let unix = ut - UNIX_EPOCH_UNIVERSAL - zone;
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    // 1970-01-01 was a Thursday; CL numbers Monday 0.
    let weekday = (days + 3).rem_euclid(7);
    let zone_value = match a.get(1) {
        Some(&v) if v.truthy() => v,
        _ => Value::Fixnum(0),
    };
    Ok(ctx.set_values(&[
        Value::Fixnum(secs % 60),
        Value::Fixnum(secs / 60 % 60),
        Value::Fixnum(secs / 3600),
        Value::Fixnum(day),
        Value::Fixnum(month),
        Value::Fixnum(year),
        Value::Fixnum(weekday),
        Value::Nil,
        zone_value,
    ]))
}

fn get_decoded_time<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    let now = Value::Fixnum(unix_seconds() + UNIX_EPOCH_UNIVERSAL);
    decode_universal_time(ctx, &[now])
}

/// (encode-universal-time second minute hour date month year &optional time-zone)
fn encode_universal_time<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut f = [0i64; 6];
    for (slot, &v) in f.iter_mut().zip(a) {
        *slot = ctx.fixnum_arg(v)?;
    }
    let [second, minute, hour, date, month, year] = f;
    if !(0..60).contains(&second) || !(0..60).contains(&minute) || !(0..24).contains(&hour) || !(1..=12).contains(&month) || !(1..=31).contains(&date) {
        return Err(Raise::error(format!(
            "ENCODE-UNIVERSAL-TIME: {second}:{minute}:{hour} {date}/{month}/{year} is not a valid time"
        )));
    }
    // Two-digit years mean the year within 50 years of now, as CL says.
    let year = if (0..100).contains(&year) {
        let (this_year, _, _) = civil_from_days(unix_seconds().div_euclid(86_400));
        let candidate = this_year - this_year.rem_euclid(100) + year;
        if candidate > this_year + 50 {
            candidate - 100
        } else if candidate <= this_year - 50 {
            candidate + 100
        } else {
            candidate
        }
    } else {
        year
    };
    let zone = zone_seconds(ctx, a.get(6).copied())?;
    let unix = days_from_civil(year, month, date) * 86_400 + hour * 3600 + minute * 60 + second + zone;
    Ok(alloc::integer(ctx.mc, BigInt::from(unix) + BigInt::from(UNIX_EPOCH_UNIVERSAL)))
}

/// (sleep seconds)
fn sleep<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let secs = crate::runtime::numbers::to_f64(a[0]).ok_or_else(|| ctx.type_error(a[0], "(REAL 0)"))?;
    if secs.is_nan() || secs < 0.0 || secs.is_infinite() {
        return Err(ctx.type_error(a[0], "(REAL 0)"));
    }
    // In steps, so that a host's termination ends a long sleep within 10 ms.
    let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.min(1e9));
    loop {
        let now = std::time::Instant::now();
        if now >= end || ctx.host.terminate.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(Value::Nil);
        }
        std::thread::sleep((end - now).min(std::time::Duration::from_millis(10)));
    }
}

/// (gc &key full): a full collection, run by the driver.
fn gc<'gc>(_ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Err(Raise::Request(HostRequest::FullGc))
}

/// (room &optional detail): the driver collects, then prints the heap's contents.
fn room<'gc>(_ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Err(Raise::Request(HostRequest::Room))
}

/// (exit &key code abort timeout), (quit &key unix-status recklessly-p), or
/// either with the exit code as the only argument.
fn exit<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let code_value = match a {
        [] => None,
        [single] => Some(*single),
        _ => {
            if !a.len().is_multiple_of(2) {
                return Err(Raise::program("odd number of &KEY arguments to EXIT"));
            }
            a.chunks(2)
                .find(|p| matches!(p[0], Value::Symbol(s) if &*s.name == "CODE" || &*s.name == "UNIX-STATUS"))
                .map(|p| p[1])
        }
    };
    let code = match code_value {
        None | Some(Value::Nil) => 0,
        Some(Value::Fixnum(c)) => c.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        Some(other) => return Err(ctx.type_error(other, "INTEGER")),
    };
    Err(Raise::Request(HostRequest::Exit(code)))
}

/// (sys:%bytes-consed): bytes allocated since counting began (0 while
/// allocations are not counted; see `sys:%time-begin`).
fn bytes_consed<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    let bytes = crate::profile::counts().total_allocated_bytes();
    Ok(alloc::integer(ctx.mc, BigInt::from(bytes)))
}

/// (sys:%time-begin) => T when it turned allocation counting on for TIME
/// (it was off), NIL when counting or profiling was already running.
fn time_begin<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    if crate::profile::mode() == crate::profile::Mode::Off {
        crate::profile::set_mode(crate::profile::Mode::Counting);
        return Ok(ctx.t());
    }
    Ok(Value::Nil)
}

/// (sys:%time-end turned-on): turn counting off again if TIME turned it on
/// and nothing has changed the mode since.
fn time_end<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if a[0].truthy() && crate::profile::mode() == crate::profile::Mode::Counting {
        crate::profile::set_mode(crate::profile::Mode::Off);
    }
    Ok(Value::Nil)
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("GET-INTERNAL-RUN-TIME", 0, 0, get_internal_run_time),
    cl("GET-UNIVERSAL-TIME", 0, 0, get_universal_time),
    cl("GET-DECODED-TIME", 0, 0, get_decoded_time),
    cl("DECODE-UNIVERSAL-TIME", 1, 2, decode_universal_time),
    cl("ENCODE-UNIVERSAL-TIME", 6, 7, encode_universal_time),
    cl("SLEEP", 1, 1, sleep),
    cl("LISP-IMPLEMENTATION-TYPE", 0, 0, |ctx, _| text(ctx, Some("mprof-lisp".to_string()))),
    cl("LISP-IMPLEMENTATION-VERSION", 0, 0, |ctx, _| text(ctx, Some(env!("CARGO_PKG_VERSION").to_string()))),
    cl("MACHINE-TYPE", 0, 0, |ctx, _| text(ctx, Some(machine_type()))),
    cl("MACHINE-VERSION", 0, 0, |ctx, _| text(ctx, None)),
    cl("MACHINE-INSTANCE", 0, 0, |ctx, _| text(ctx, host_name())),
    cl("SOFTWARE-TYPE", 0, 0, |ctx, _| text(ctx, Some(software_type()))),
    cl("SOFTWARE-VERSION", 0, 0, |ctx, _| text(ctx, os_release())),
    cl("SHORT-SITE-NAME", 0, 0, |ctx, _| text(ctx, None)),
    cl("LONG-SITE-NAME", 0, 0, |ctx, _| text(ctx, None)),
    sys("%GETENV", 1, 1, getenv),
    ext("GETENV", 1, 1, getenv),
    ext("POSIX-ARGV", 0, 0, posix_argv),
    sys("%RUN-PROGRAM", 4, 4, run_program),
    sys("%FILE-WRITE-DATE", 1, 1, file_write_date),
    sys("%CREATE-DIRECTORIES", 1, 1, create_directories),
    ext("GC", 0, MANY, gc),
    cl("ROOM", 0, 1, room),
    ext("EXIT", 0, MANY, exit),
    ext("QUIT", 0, MANY, exit),
    sys("%BYTES-CONSED", 0, 0, bytes_consed),
    sys("%TIME-BEGIN", 0, 0, time_begin),
    sys("%TIME-END", 1, 1, time_end),
];
