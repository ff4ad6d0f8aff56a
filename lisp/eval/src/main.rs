//! The `mprof-lisp` binary: thin glue over the library (command line, REPL).

fn main() {
    std::process::exit(mprof_lisp::cli::main());
}
