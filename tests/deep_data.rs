//! Data and code nested far deeper than any recursive Rust walk survives
//! (issue 12): every tree walk of the library on data 1,000,000 deep built by
//! loops, code nested 30,000 deep, a macro producing 4,000 nested lambdas,
//! the reader on data 1,000,000 deep and source nested 100,000 deep, and the
//! limits past which a walk ends in a Lisp storage-condition.
//!
//! The programs (programs/deep_data.lisp, deep_code.lisp, deep_read.lisp) print one line per walk; each
//! expected answer follows from how the data was built (a depth, an equality
//! with data built the same way), so a walk that overflowed, stopped early or
//! answered NIL past some depth fails the comparison.

mod support;

use support::run_with_files;

#[test]
fn walks_over_data_a_million_deep_give_the_right_answers() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = include_str!("programs/deep_data.lisp");
    let r = run_with_files(dir.path(), &[("deep.lisp", prog)], &["deep.lisp"], "");
    let expected = "equal T NIL\n\
                    equalp T NIL\n\
                    tree-equal T NIL\n\
                    sxhash T\n\
                    gethash FOUND\n\
                    backquote 1000001\n\
                    copy-tree 1000000 NIL T\n\
                    subst 1000000 T T\n\
                    subst-if 1000000 T\n\
                    sublis 1000000 T\n\
                    nsubst T\n";
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, expected, ""));
}

#[test]
fn the_reader_reads_back_data_a_million_deep_and_source_nested_100000_deep() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = include_str!("programs/deep_read.lisp");
    let r = run_with_files(dir.path(), &[("read.lisp", prog)], &["read.lisp"], "");
    let expected = "file 1000000 T\n\
                    read-from-string 2000003 1000000 T\n\
                    string stream T\n\
                    quotes T\n\
                    progn 1\n\
                    lets STORAGE-CONDITION\n\
                    too deep STORAGE-CONDITION\n";
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, expected, ""));
}

#[test]
fn code_nested_far_past_the_rust_stack_compiles_or_ends_in_a_condition() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = include_str!("programs/deep_code.lisp");
    let r = run_with_files(dir.path(), &[("code.lisp", prog)], &["code.lisp"], "");
    let expected = "lambdas 4000\n\
                    eval 30000\n\
                    too deep STORAGE-CONDITION\n\
                    nested macros 40000\n\
                    format FORMAT-ERROR\n";
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, expected, ""));
}

#[test]
fn every_list_builtin_ends_on_a_circular_list() {
    // Each call prints its form and its answer, or the class of the condition it
    // ended in; the expected lines were checked one by one (answers where a
    // circular list has one, a type-error where the walk must reach the end).
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = include_str!("programs/circular_lists.lisp");
    let r = run_with_files(dir.path(), &[("circ.lisp", prog)], &["--max-heap", "64M", "circ.lisp"], "");
    let expected = include_str!("programs/circular_lists.expected");
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, expected, ""));
}

#[test]
fn circular_data_ends_in_a_storage_condition_not_a_hang() {
    // A car chain that loops has no bottom: copy-tree and equal stop at their
    // depth bounds with a storage-condition a handler can catch.
    let prog = "(defvar *x* (list 1))\n\
                (setf (car *x*) *x*)\n\
                (defvar *y* (list 1))\n\
                (setf (car *y*) *y*)\n\
                (format t \"~a~%\" (handler-case (copy-tree *x*) (storage-condition () 'copy-tree-stopped)))\n\
                (format t \"~a~%\" (handler-case (equal *x* *y*) (storage-condition () 'equal-stopped)))\n";
    let dir = tempfile::tempdir().expect("temporary directory");
    let r = run_with_files(dir.path(), &[("circ.lisp", prog)], &["circ.lisp"], "");
    assert_eq!((r.code, r.stdout.as_str()), (0, "COPY-TREE-STOPPED\nEQUAL-STOPPED\n"), "stderr: {}", r.stderr);
}
