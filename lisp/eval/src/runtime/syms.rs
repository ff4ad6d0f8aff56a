//! The well-known symbols the compiler and VM refer to by identity.
//!
//! Invariant: each field is interned once at start-up in the package named
//! by the table and exported from it, so `Value::eq` against a field is the
//! way to recognise a special form or lambda-list keyword.

use gc_arena::{Collect, Mutation};
use mprof_heap::value::{Ptr, Symbol, Value};
use mprof_heap::Packages;

macro_rules! well_known_symbols {
    ($( $field:ident = $pkg:ident $name:literal ;)*) => {
        /// Symbols the implementation recognises by identity.
        #[derive(Collect, Clone, Copy)]
        #[collect(no_drop)]
        pub struct Syms<'gc> {
            $( pub $field: Ptr<'gc, Symbol<'gc>>, )*
        }

        impl<'gc> Syms<'gc> {
            pub fn new(mc: &Mutation<'gc>, packages: &Packages<'gc>) -> Syms<'gc> {
                Syms {
                    $( $field: {
                        let package = well_known_symbols!(@pkg packages, $pkg);
                        match packages.intern_external(mc, package, $name) {
                            Value::Symbol(s) => s,
                            // Only "NIL" interns to Value::Nil, and it is not in the table.
                            _ => mprof_heap::alloc::make_symbol(mc, $name),
                        }
                    }, )*
                }
            }
        }
    };
    (@pkg $p:ident, CL) => { $p.common_lisp };
    (@pkg $p:ident, SYS) => { $p.system };
    (@pkg $p:ident, KW) => { $p.keyword };
    (@pkg $p:ident, MPROF) => { $p.mprof };
}

well_known_symbols! {
    t_symbol = CL "T";
    values_list = CL "VALUES-LIST";
    quote = CL "QUOTE";
    function = CL "FUNCTION";
    lambda = CL "LAMBDA";
    if_ = CL "IF";
    progn = CL "PROGN";
    let_ = CL "LET";
    let_star = CL "LET*";
    setq = CL "SETQ";
    flet = CL "FLET";
    labels = CL "LABELS";
    macrolet = CL "MACROLET";
    symbol_macrolet = CL "SYMBOL-MACROLET";
    block = CL "BLOCK";
    return_from = CL "RETURN-FROM";
    tagbody = CL "TAGBODY";
    go = CL "GO";
    catch = CL "CATCH";
    throw = CL "THROW";
    unwind_protect = CL "UNWIND-PROTECT";
    multiple_value_call = CL "MULTIPLE-VALUE-CALL";
    multiple_value_prog1 = CL "MULTIPLE-VALUE-PROG1";
    multiple_value_bind = CL "MULTIPLE-VALUE-BIND";
    multiple_value_list = CL "MULTIPLE-VALUE-LIST";
    destructuring_bind = CL "DESTRUCTURING-BIND";
    the = CL "THE";
    locally = CL "LOCALLY";
    eval_when = CL "EVAL-WHEN";
    load_time_value = CL "LOAD-TIME-VALUE";
    progv = CL "PROGV";
    counted_branch = SYS "%COUNTED-BRANCH";
    declare = CL "DECLARE";
    special = CL "SPECIAL";
    setf = CL "SETF";
    optional = CL "&OPTIONAL";
    rest = CL "&REST";
    key = CL "&KEY";
    aux = CL "&AUX";
    body = CL "&BODY";
    whole = CL "&WHOLE";
    allow_other_keys = CL "&ALLOW-OTHER-KEYS";
    environment = CL "&ENVIRONMENT";
    list = CL "LIST";
    list_star = CL "LIST*";
    append = CL "APPEND";
    cons = CL "CONS";
    vector = CL "VECTOR";
    apply = CL "APPLY";
    funcall = CL "FUNCALL";
    values = CL "VALUES";
    error = CL "ERROR";
    defun = CL "DEFUN";
    defmacro = CL "DEFMACRO";
    compile_toplevel = KW "COMPILE-TOPLEVEL";
    load_toplevel = KW "LOAD-TOPLEVEL";
    execute = KW "EXECUTE";
    allow_other_keys_kw = KW "ALLOW-OTHER-KEYS";
    backquote = SYS "BACKQUOTE";
    unquote = SYS "UNQUOTE";
    unquote_splicing = SYS "UNQUOTE-SPLICING";
    label = SYS "%LABEL";
    label_ref = SYS "%LABEL-REF";
    read_eval = SYS "%READ-EVAL";
    named_lambda = SYS "NAMED-LAMBDA";
    handler_clusters = SYS "*HANDLER-CLUSTERS*";
    invoke_debugger_hook = SYS "%UNHANDLED-CONDITION";
    make_condition_for_error = SYS "%MAKE-ERROR-CONDITION";
    standard_output = CL "*STANDARD-OUTPUT*";
    standard_input = CL "*STANDARD-INPUT*";
    error_output = CL "*ERROR-OUTPUT*";
    terminal_io = CL "*TERMINAL-IO*";
    trace_output = CL "*TRACE-OUTPUT*";
    stream = CL "STREAM";
    stdin = SYS "*STDIN*";
    stdout = SYS "*STDOUT*";
    stderr = SYS "*STDERR*";
    tty = SYS "*TTY*";
    package = CL "*PACKAGE*";
    features = CL "*FEATURES*";
    print_escape = CL "*PRINT-ESCAPE*";
    print_readably = CL "*PRINT-READABLY*";
    print_circle = CL "*PRINT-CIRCLE*";
    print_length = CL "*PRINT-LENGTH*";
    print_level = CL "*PRINT-LEVEL*";
    print_lines = CL "*PRINT-LINES*";
    print_right_margin = CL "*PRINT-RIGHT-MARGIN*";
    print_base = CL "*PRINT-BASE*";
    print_radix = CL "*PRINT-RADIX*";
    print_case = CL "*PRINT-CASE*";
    print_array = CL "*PRINT-ARRAY*";
    print_gensym = CL "*PRINT-GENSYM*";
    print_pretty = CL "*PRINT-PRETTY*";
    print_miser_width = CL "*PRINT-MISER-WIDTH*";
    print_pprint_dispatch = CL "*PRINT-PPRINT-DISPATCH*";
    pretty_targets = SYS "*PRETTY-TARGETS*";
    print_current_level = SYS "*CURRENT-PRINT-LEVEL*";
    pprint_object = SYS "%PPRINT-OBJECT";
    circle_table = SYS "*CIRCLE-TABLE*";
    star = CL "*";
    star2 = CL "**";
    star3 = CL "***";
    type_error = CL "TYPE-ERROR";
    program_error = CL "PROGRAM-ERROR";
    simple_error = CL "SIMPLE-ERROR";
    control_error = CL "CONTROL-ERROR";
    unbound_variable = CL "UNBOUND-VARIABLE";
    undefined_function = CL "UNDEFINED-FUNCTION";
    division_by_zero = CL "DIVISION-BY-ZERO";
    arithmetic_error = CL "ARITHMETIC-ERROR";
    file_error = CL "FILE-ERROR";
    stream_error = CL "STREAM-ERROR";
    storage_condition = CL "STORAGE-CONDITION";
    reader_error = CL "READER-ERROR";
    package_error = CL "PACKAGE-ERROR";
    stack_exhausted = SYS "STACK-EXHAUSTED";
    interrupted = SYS "INTERACTIVE-INTERRUPT";
    kw_datum = KW "DATUM";
    kw_expected_type = KW "EXPECTED-TYPE";
    kw_format_control = KW "FORMAT-CONTROL";
    kw_format_arguments = KW "FORMAT-ARGUMENTS";
    kw_name = KW "NAME";
    kw_operation = KW "OPERATION";
    kw_operands = KW "OPERANDS";
    kw_pathname = KW "PATHNAME";
    kw_stream = KW "STREAM";
    kw_package = KW "PACKAGE";
}
