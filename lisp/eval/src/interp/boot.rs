//! What a new interpreter starts with: the builtins interned as functions,
//! the special operators flagged, the standard variables and streams bound,
//! and the prelude (the Lisp library) it then compiles.

use gc_arena::Mutation;
use mprof_heap::value::{SYM_SPECIAL, SYM_SPECIAL_OPERATOR, StreamKind};
use mprof_heap::{Value, alloc};

use crate::builtins;
use crate::runtime::builtin::Pkg;
use crate::runtime::host::{STDERR, STDIN, STDOUT};
use crate::runtime::world::World;

/// The Lisp library compiled at start-up, in load order.
pub(super) const PRELUDE: &[(&str, &str)] = &[
    ("prelude/base.lisp", include_str!("../prelude/base.lisp")),
    ("prelude/places.lisp", include_str!("../prelude/places.lisp")),
    ("prelude/conditions.lisp", include_str!("../prelude/conditions.lisp")),
    ("prelude/lists.lisp", include_str!("../prelude/lists.lisp")),
    ("prelude/numbers.lisp", include_str!("../prelude/numbers.lisp")),
    ("prelude/sequences.lisp", include_str!("../prelude/sequences.lisp")),
    ("prelude/strings.lisp", include_str!("../prelude/strings.lisp")),
    ("prelude/hash.lisp", include_str!("../prelude/hash.lisp")),
    ("prelude/io.lisp", include_str!("../prelude/io.lisp")),
    ("prelude/reader.lisp", include_str!("../prelude/reader.lisp")),
    ("prelude/defstruct.lisp", include_str!("../prelude/defstruct.lisp")),
    ("prelude/loop.lisp", include_str!("../prelude/loop.lisp")),
    ("prelude/clos-classes.lisp", include_str!("../prelude/clos-classes.lisp")),
    ("prelude/clos-generic.lisp", include_str!("../prelude/clos-generic.lisp")),
    ("prelude/clos-standard.lisp", include_str!("../prelude/clos-standard.lisp")),
    ("prelude/pathnames.lisp", include_str!("../prelude/pathnames.lisp")),
    ("prelude/modules.lisp", include_str!("../prelude/modules.lisp")),
    ("prelude/gray-streams.lisp", include_str!("../prelude/gray-streams.lisp")),
    ("prelude/debugger.lisp", include_str!("../prelude/debugger.lisp")),
    ("prelude/readtable.lisp", include_str!("../prelude/readtable.lisp")),
    ("prelude/mprof.lisp", include_str!("../prelude/mprof.lisp")),
    ("prelude/devtools.lisp", include_str!("../prelude/devtools.lisp")),
    ("prelude/pprint.lisp", include_str!("../prelude/pprint.lisp")),
    ("prelude/direct-macros.lisp", include_str!("../prelude/direct-macros.lisp")),
    ("prelude/compiler-macros.lisp", include_str!("../prelude/compiler-macros.lisp")),
];

/// The initial `*features*`: the implementation, the standard, and the
/// platform as SBCL names it (`:unix`, `:linux`, `:64-bit`, `:x86-64`...).
fn feature_names() -> Vec<&'static str> {
    let mut f = vec!["MPROF-LISP", "COMMON-LISP", "ANSI-CL", "IEEE-FLOATING-POINT"];
    if cfg!(unix) {
        f.push("UNIX");
    }
    match std::env::consts::OS {
        "linux" => f.push("LINUX"),
        "macos" => f.extend(["DARWIN", "BSD"]),
        "freebsd" => f.extend(["FREEBSD", "BSD"]),
        _ => {}
    }
    if cfg!(target_pointer_width = "64") {
        f.push("64-BIT");
    }
    match std::env::consts::ARCH {
        "x86_64" => f.push("X86-64"),
        "aarch64" => f.push("ARM64"),
        _ => {}
    }
    f.push(if cfg!(target_endian = "little") { "LITTLE-ENDIAN" } else { "BIG-ENDIAN" });
    f
}

const SPECIAL_OPERATORS: &[&str] = &[
    "QUOTE", "FUNCTION", "IF", "PROGN", "LET", "LET*", "SETQ", "FLET", "LABELS", "MACROLET",
    "SYMBOL-MACROLET", "BLOCK", "RETURN-FROM", "TAGBODY", "GO", "CATCH", "THROW", "UNWIND-PROTECT",
    "MULTIPLE-VALUE-CALL", "MULTIPLE-VALUE-PROG1", "THE", "LOCALLY", "EVAL-WHEN", "LOAD-TIME-VALUE", "PROGV",
];

/// Install builtins, special operators, standard variables and streams.
pub(super) fn init_world<'gc>(mc: &Mutation<'gc>, world: &World<'gc>) {
    let p = &world.packages;
    for (id, def) in builtins::table().iter().enumerate() {
        let package = match def.package {
            Pkg::Cl => p.common_lisp,
            Pkg::Sys => p.system,
            Pkg::Ext => p.extensions,
            Pkg::Mprof => p.mprof,
        };
        let name = p.intern_external(mc, package, def.name);
        if let Value::Symbol(s) = name {
            let f = alloc::builtin(mc, name, id as u32);
            alloc::symbol_set_function(mc, s, f);
        }
    }
    for name in SPECIAL_OPERATORS {
        if let Value::Symbol(s) = p.intern_external(mc, p.common_lisp, name) {
            s.set_flag(SYM_SPECIAL_OPERATOR, true);
        }
    }
    let set_special = |s: mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>, v: Value<'gc>| {
        s.set_flag(SYM_SPECIAL, true);
        alloc::symbol_set_value(mc, s, v);
    };
    let syms = &world.syms;
    // The standard streams as SBCL sets them up: the process's channels in
    // SYS::*STDIN*, *STDOUT* and *STDERR*, the terminal SYS::*TTY* (a
    // two-way stream over them), and the standard variables synonym streams
    // to those.
    let host = |name: &str, channel: u32, input: bool| {
        alloc::stream(mc, name, StreamKind::Host { channel, input, output: !input, written: 0, fresh: false })
    };
    let stdin = host("*STDIN*", STDIN, true);
    let stdout = host("*STDOUT*", STDOUT, false);
    set_special(syms.stdin, stdin);
    set_special(syms.stdout, stdout);
    set_special(syms.stderr, host("*STDERR*", STDERR, false));
    set_special(syms.tty, alloc::stream(mc, "*TTY*", StreamKind::TwoWay { input: stdin, output: stdout }));
    let synonym = |target: mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>| {
        alloc::stream(mc, &format!("SYNONYM-STREAM :SYMBOL {}", target.name), StreamKind::Synonym { symbol: Value::Symbol(target) })
    };
    set_special(syms.standard_input, synonym(syms.stdin));
    set_special(syms.standard_output, synonym(syms.stdout));
    set_special(syms.error_output, synonym(syms.stderr));
    set_special(syms.terminal_io, synonym(syms.tty));
    set_special(syms.trace_output, synonym(syms.stdout));
    for name in ["*QUERY-IO*", "*DEBUG-IO*"] {
        if let Value::Symbol(s) = p.intern_external(mc, p.common_lisp, name) {
            set_special(s, synonym(syms.terminal_io));
        }
    }
    set_special(syms.package, Value::Package(p.user));
    set_special(syms.features, alloc::list(mc, &feature_names().iter().map(|f| p.keyword(mc, f)).collect::<Vec<_>>()));
    set_special(syms.star, Value::Nil);
    set_special(syms.star2, Value::Nil);
    set_special(syms.star3, Value::Nil);
    set_special(syms.handler_clusters, Value::Nil);
    set_special(syms.print_escape, world.t());
    set_special(syms.print_readably, Value::Nil);
    // *print-pretty* starts NIL, as the test programs' SBCL runs set it (SBCL's own default is T).
    for s in [
        syms.print_circle,
        syms.print_length,
        syms.print_level,
        syms.print_lines,
        syms.print_right_margin,
        syms.print_radix,
        syms.print_pretty,
        syms.print_miser_width,
        syms.pretty_targets,
        syms.circle_table,
    ] {
        set_special(s, Value::Nil);
    }
    set_special(syms.print_base, Value::Fixnum(10));
    set_special(syms.print_current_level, Value::Fixnum(0));
    set_special(syms.print_case, p.keyword(mc, "UPCASE"));
    set_special(syms.print_array, world.t());
    set_special(syms.print_gensym, world.t());
    if let Value::Symbol(s) = p.intern_external(mc, p.common_lisp, "*GENSYM-COUNTER*") {
        set_special(s, Value::Fixnum(0));
    }
}
