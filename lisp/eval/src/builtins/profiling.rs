//! The MPROF package's builtins. Starting, stopping and reporting need the
//! driver (a full collection before a report; the context stack rebuilt from
//! the running frames on start), so most return a request; the Lisp side
//! (prelude/mprof.lisp) parses keyword arguments and writes the report.

use mprof_heap::{Value, alloc};
use mprof_display::report::{ReportOptions, Tables};

use crate::runtime::builtin::{BuiltinDef, mprof, sys};
use crate::runtime::ctx::{Ctx, string_designator};
use crate::profile::{self, Mode};
use crate::runtime::raise::{HostRequest, LResult, ProfileKinds, ProfileRequest, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

/// (mprof::%start primitives-to-caller memory time counts io)
fn start<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let kinds = ProfileKinds { memory: a[1].truthy(), time: a[2].truthy(), counts: a[3].truthy(), io: a[4].truthy() };
    Err(Raise::Request(HostRequest::Profile(ProfileRequest::Start { primitives_to_caller: a[0].truthy(), kinds })))
}

fn stop<'gc>(_ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Err(Raise::Request(HostRequest::Profile(ProfileRequest::Stop)))
}

fn reset<'gc>(_ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Err(Raise::Request(HostRequest::Profile(ProfileRequest::Reset)))
}

fn enabled_p<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(profile::mode() == Mode::Profiling))
}

/// (mprof::%report-text tables exact merge-cycles path-depth call-sites memory time counts io)
fn report_text<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let tables = match a[0] {
        Value::Nil => Tables::ALL,
        v => {
            let names: Vec<String> = match v {
                Value::Cons(_) => alloc::list_iter(v).map(|x| designator(ctx, x)).collect::<Result<_, _>>()?,
                other => vec![designator(ctx, other)?],
            };
            Tables::parse(&names.join(",").to_lowercase()).map_err(Raise::error)?
        }
    };
    let path_depth = match a[3] {
        Value::Fixnum(n) if n > 0 => n as usize,
        _ => 5,
    };
    let options = ReportOptions {
        tables,
        exact_percentages: a[1].truthy(),
        merge_cycles: a[2].truthy(),
        call_sites: a[4].truthy(),
        path_depth,
        ..ReportOptions::default()
    };
    let kinds = ProfileKinds { memory: a[5].truthy(), time: a[6].truthy(), counts: a[7].truthy(), io: a[8].truthy() };
    Err(Raise::Request(HostRequest::Profile(ProfileRequest::Report(options, kinds))))
}

fn designator<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<String, Raise<'gc>> {
    string_designator(ctx, v)
}

/// (mprof::%write-profile path)
fn write_profile<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = designator(ctx, a[0])?;
    Err(Raise::Request(HostRequest::Profile(ProfileRequest::Write(path))))
}

/// (sys:%allocation-counts) -> bytes allocated, objects allocated (since
/// counting or profiling began; 0 when allocation recording is off).
fn allocation_counts<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    let c = profile::counts();
    let bytes = c.total_allocated_bytes() as i64;
    let objects: u64 = c.allocated_objects.iter().sum();
    Ok(ctx.set_values(&[Value::Fixnum(bytes), Value::Fixnum(objects as i64)]))
}

/// (sys:%count-allocations on): turn counting mode on (for TIME) unless profiling;
/// returns the previous mode as a keyword.
fn count_allocations<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let before = profile::mode();
    let want = a[0].truthy();
    match (before, want) {
        (Mode::Off, true) => profile::set_mode(Mode::Counting),
        (Mode::Counting, false) => profile::set_mode(Mode::Off),
        _ => {}
    }
    Ok(ctx.kw(match before {
        Mode::Off => "OFF",
        Mode::Counting => "COUNTING",
        Mode::Profiling => "PROFILING",
    }))
}

/// (sys:%export-package-symbols name): make every symbol present in a package external.
fn export_package_symbols<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = designator(ctx, a[0])?;
    let Some(p) = ctx.world.packages.find_package(&name) else {
        return Err(Raise::error(format!("no package named {name}")));
    };
    let mut map = alloc::package_symbols_mut(ctx.mc, p);
    for (_, entry) in map.iter_mut() {
        entry.1 = true;
    }
    Ok(Value::Nil)
}

pub const BUILTINS: &[BuiltinDef] = &[
    mprof("%START", 5, 5, start),
    mprof("STOP", 0, 0, stop),
    mprof("RESET", 0, 0, reset),
    mprof("ENABLED-P", 0, 0, enabled_p),
    mprof("%REPORT-TEXT", 9, 9, report_text),
    mprof("%WRITE-PROFILE", 1, 1, write_profile),
    sys("%ALLOCATION-COUNTS", 0, 0, allocation_counts),
    sys("%COUNT-ALLOCATIONS", 1, 1, count_allocations),
    sys("%EXPORT-PACKAGE-SYMBOLS", 1, 1, export_package_symbols),
];
