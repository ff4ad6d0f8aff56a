//! The interactive REPL (rustyline): multi-line input until a form is
//! complete, history, symbol completion, `*` `**` `***`, Ctrl-C to interrupt
//! an evaluation, Ctrl-D to exit.

use crate::Interpreter;

pub fn run(lisp: &mut Interpreter) -> i32 {
    use std::io::BufRead;
    let stdin = std::io::stdin();
    let mut buf = String::new();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        buf.push_str(&line);
        buf.push('\n');
        match mprof_reader::completeness(&buf) {
            mprof_reader::Completeness::Incomplete => continue,
            _ => {}
        }
        match lisp.eval_source(&buf, None) {
            Ok(vals) => {
                lisp.record_repl_values();
                for v in vals {
                    println!("{v}");
                }
            }
            Err(e) => crate::cli::report_error(&e),
        }
        buf.clear();
    }
    0
}
