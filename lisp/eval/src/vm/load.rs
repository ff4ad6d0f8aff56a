//! Loading and compiling: the compiler's requests for macro expansions run
//! in native frames, and a source text is read and evaluated form by form,
//! each form with the `*package*`, `*readtable*` and features the previous
//! one left; a top-level PROGN or EVAL-WHEN is processed form by form.

use std::rc::Rc;

use mprof_heap::{Value, alloc};

use crate::compiler::{self, CompileError};
use crate::profile::counting::CountCtx;
use crate::runtime::raise::{ErrorKind, Raise};
use crate::runtime::world::World;
use crate::vm::{Cont, DynEntry, Env, Native, VResult, Vm};

impl<'gc> Vm<'gc> {
    /// Run the expanders of `needs` one after another (a `Native::Expansion`
    /// frame), for the compilation of `form` that started at expansion `mark`.
    pub(super) fn expand(&mut self, env: &mut Env<'_, 'gc>, needs: compiler::Needs<'gc>, form: Value<'gc>, mark: u32) -> VResult<'gc> {
        let Some((expander, call)) = needs.pair(0) else {
            return self.compile_start(env, form, mark);
        };
        self.push_native(Native::Expansion { needs, next: 0, form, mark });
        self.hide_prelude_expansion(expander);
        let b = self.stack.len();
        self.stack.push(call);
        self.stack.push(Value::Nil);
        self.call_value(env, expander, b, 2, b)?;
        Ok(())
    }

    /// Compile `form` and call the result; macro expansions needed along the
    /// way are run first, each in a native frame that resumes the compilation.
    pub(super) fn compile_start(&mut self, env: &mut Env<'_, 'gc>, form: Value<'gc>, mark: u32) -> VResult<'gc> {
        let file = self.compile_file.clone();
        let mut synthesized = std::mem::take(&mut self.synthesized);
        let counting = if self.counting && !self.count_spans.spans.is_empty() {
            Some(CountCtx { spans: &self.count_spans, registry: &mut self.count_registry })
        } else {
            None
        };
        let origin = compiler::Origin { file: file.as_deref(), line: self.compile_line };
        let compiled = compiler::compile_toplevel(env.mc, env.world, self.expansions.index(), &mut synthesized, form, origin, counting);
        self.synthesized = synthesized;
        if self.counts.len() < self.count_registry.points.len() {
            self.counts.resize(self.count_registry.points.len(), 0);
        }
        match compiled {
            Ok(proto) => {
                self.expansions.truncate(mark as usize);
                let clo = alloc::closure(env.mc, proto, Box::new([]));
                let b = self.stack.len();
                self.stack.push(clo);
                self.call_value(env, clo, b + 1, 0, b)?;
                Ok(())
            }
            Err(CompileError::NeedExpansions(needs)) => self.expand(env, needs, form, mark),
            Err(CompileError::NeedMacroFunction { key, lambda }) => {
                self.push_native(Native::MacroFunction { key, form, mark });
                let fform = alloc::list(env.mc, &[Value::Symbol(env.world.syms.function), lambda]);
                let inner_mark = self.expansions.len() as u32;
                self.compile_start(env, fform, inner_mark)
            }
            Err(CompileError::TooDeep { form: bad }) => {
                self.expansions.truncate(mark as usize);
                // Only the head is named: printing a form this deep would be huge.
                let head = match bad {
                    Value::Cons(c) if matches!(c.car.get(), Value::Symbol(_)) => {
                        let name = mprof_heap::printer::print_to_string(c.car.get(), &self.print_ctx(env));
                        format!(" (at a form headed by {name})")
                    }
                    _ => String::new(),
                };
                Err(Raise::simple(
                    ErrorKind::Storage,
                    format!("forms nest more than {} levels deep{head}", compiler::front::MAX_FORM_DEPTH),
                ))
            }
            Err(CompileError::Syntax { message, form: bad }) => {
                self.expansions.truncate(mark as usize);
                let text = mprof_heap::printer::print_to_string(bad, &self.print_ctx(env));
                let text = if text.chars().count() > 200 { format!("{}...", text.chars().take(200).collect::<String>()) } else { text };
                Err(Raise::program(format!("{message}, in {text}")))
            }
        }
    }

    /// Take the next form of the LoadSource frame on top and start evaluating it,
    /// or finish the frame.
    pub(super) fn load_step(&mut self, env: &mut Env<'_, 'gc>) -> VResult<'gc> {
        loop {
            let n = self.frames.len() - 1;
            let Cont::Native(b) = &mut self.frames[n].cont else {
                return Err(Raise::error("internal error: load step without a source"));
            };
            let Native::LoadSource { text, offset, file, queued, last, dyn_mark } = &mut **b else {
                return Err(Raise::error("internal error: load step without a source"));
            };
            let form = if let Value::Cons(c) = *queued {
                *queued = c.cdr.get();
                c.car.get()
            } else {
                let features = feature_names(env.world);
                let opts = mprof_reader::ReadOptions {
                    file: file.as_deref().map(String::from),
                    features,
                    read_base: env.world.read_base(),
                    case: env.world.read_case(),
                    ..Default::default()
                };
                match mprof_reader::read_one(text, *offset, &opts) {
                    Ok(None) => {
                        let (last, dyn_mark) = (*last, *dyn_mark as usize);
                        let ret = self.frames[n].ret as usize;
                        self.pop_frame();
                        self.stack.truncate(ret);
                        while self.dyn_stack.len() > dyn_mark {
                            if let Some(DynEntry::Special { sym, old }) = self.dyn_stack.pop() {
                                alloc::symbol_set_value(env.mc, sym, old);
                            }
                        }
                        return self.deliver(env, last);
                    }
                    Ok(Some((datum, end))) => {
                        *offset = end;
                        self.compile_line = datum.span.line;
                        self.compile_file = file.clone();
                        let package = match env.world.syms.package.value.get() {
                            Value::Package(p) => p,
                            _ => env.world.packages.user,
                        };
                        self.count_spans.spans.clear();
                        self.count_spans.cells.clear();
                        self.count_span_roots.clear();
                        let converted = match file {
                            Some(path) if self.counting => {
                                let source = match &self.count_source {
                                    Some((t, i)) if Rc::ptr_eq(t, text) => *i,
                                    _ => {
                                        let i = self.count_registry.source(path, text);
                                        self.count_source = Some((text.clone(), i));
                                        i
                                    }
                                };
                                self.count_spans.source = source;
                                let mut spans = mprof_heap::datum::SourceSpans::default();
                                let r = mprof_heap::datum::datum_to_value_spanned(
                                    env.mc,
                                    &env.world.packages,
                                    package,
                                    &datum,
                                    &mut spans,
                                );
                                for (v, span) in spans.lists {
                                    if let Some(a) = v.heap_address() {
                                        self.count_spans.spans.insert(a, span);
                                    }
                                }
                                // Every cons of the form is a cell: rooting the cells roots all.
                                for (v, span) in spans.cells {
                                    if let Some(a) = v.heap_address() {
                                        self.count_spans.cells.insert(a, span);
                                        self.count_span_roots.push(v);
                                    }
                                }
                                r
                            }
                            _ => mprof_heap::datum::datum_to_value(env.mc, &env.world.packages, package, &datum),
                        };
                        let converted = match converted {
                            Ok(v) if crate::runtime::labels::datum_has_labels(&datum) => {
                                crate::runtime::labels::resolve(env.mc, env.world, v).map(Ok)?
                            }
                            other => other,
                        };
                        match converted {
                            Ok(v) if crate::runtime::read_time::datum_needs_read_time(&datum) => {
                                crate::runtime::read_time::deferred_form(env.mc, env.world, v)
                            }
                            Ok(v) => v,
                            Err(e) => {
                                let where_ = match file {
                                    Some(f) => format!("{f}:{}:{}", e.span.line, e.span.column),
                                    None => format!("{}:{}", e.span.line, e.span.column),
                                };
                                return Err(Raise::simple(ErrorKind::Package, format!("{where_}: {}", e.error)));
                            }
                        }
                    }
                    Err(e) => {
                        // Skip the rest of the text: one reader error ends the load.
                        *offset = text.len();
                        return Err(Raise::simple(ErrorKind::Reader, e.to_string()));
                    }
                }
            };
            // A top-level PROGN's forms are top-level forms too, and so are those
            // of an EVAL-WHEN that runs at load time (a macro it defines is then
            // defined before the next of its forms is compiled, as in CL).
            if let Value::Cons(c) = form
                && let Some(body) = toplevel_body(env.world, c.car.get(), c.cdr.get())
            {
                let items = alloc::list_to_vec(body).unwrap_or_default();
                let n = self.frames.len() - 1;
                if let Cont::Native(b) = &mut self.frames[n].cont
                    && let Native::LoadSource { queued, .. } = &mut **b
                {
                    *queued = alloc::list_with_tail(env.mc, &items, *queued);
                }
                continue;
            }
            let mark = self.expansions.len() as u32;
            return self.compile_start(env, form, mark);
        }
    }
}

/// The names of the features in *FEATURES*, for #+ and #-.
pub(super) fn feature_names(world: &World<'_>) -> Vec<String> {
    alloc::list_iter(world.syms.features.value.get())
        .filter_map(|f| match f {
            Value::Symbol(s) => Some(s.name.to_string()),
            _ => None,
        })
        .collect()
}

/// The forms of a top-level form to be processed as top-level forms in turn:
/// a PROGN's body, and an EVAL-WHEN's body when its situations include load
/// or execute time (NIL, no forms, when they do not).
pub(super) fn toplevel_body<'gc>(world: &crate::runtime::world::World<'gc>, head: Value<'gc>, rest: Value<'gc>) -> Option<Value<'gc>> {
    let Value::Symbol(s) = head else { return None };
    let syms = &world.syms;
    if gc_arena::Gc::ptr_eq(s, syms.progn) {
        return Some(rest);
    }
    if !gc_arena::Gc::ptr_eq(s, syms.eval_when) {
        return None;
    }
    let situations = alloc::list_to_vec(alloc::car(rest))?;
    let runs = situations.iter().any(|x| match x {
        Value::Symbol(y) => {
            gc_arena::Gc::ptr_eq(*y, syms.execute)
                || gc_arena::Gc::ptr_eq(*y, syms.load_toplevel)
                || &*y.name == "EVAL"
                || &*y.name == "LOAD"
        }
        _ => false,
    });
    Some(if runs { alloc::cdr(rest) } else { Value::Nil })
}
