//! Loading and compiling: the compiler's requests for macro expansions run
//! in native frames, and a source text is read and evaluated form by form,
//! each form with the `*package*`, `*readtable*` and features the previous
//! one left; a top-level PROGN or EVAL-WHEN is processed form by form.

use std::rc::Rc;

use mprof_engine::exec::CountKind;
use mprof_heap::{Value, alloc};

use crate::compiler::{self, CompileError};
use crate::profile::counting::CountCtx;
use crate::runtime::raise::{ErrorKind, Raise};
use crate::runtime::world::World;
use crate::vm::{Cont, DynEntry, Env, LoadWait, Native, VResult, Vm};

impl<'gc> Vm<'gc> {
    /// Run the expanders of `needs` one after another (a `Native::Expansion`
    /// frame), for the compilation of `form` that started at expansion `mark`.
    pub(super) fn expand(&mut self, env: &mut Env<'_, 'gc>, needs: compiler::Needs<'gc>, form: Value<'gc>, mark: u32) -> VResult<'gc> {
        let Some((expander, call)) = needs.pair(0) else {
            return self.compile_start(env, form, mark);
        };
        let environment = needs.scopes.first().map_or(Value::Nil, |s| s.to_environment(env.mc, &env.world.packages));
        self.push_native(Native::Expansion { needs, next: 0, form, mark });
        self.hide_prelude_expansion(expander);
        let b = self.stack.len();
        self.stack.push(call);
        self.stack.push(environment);
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

    /// What a value delivered to the LoadSource frame on top means: the value of
    /// the form just evaluated, a form the Lisp reader read, or a top-level macro
    /// call's expansion (both queued as the next top-level form).
    pub(super) fn load_delivered(&mut self, env: &mut Env<'_, 'gc>, v: Value<'gc>) {
        let n = self.frames.len() - 1;
        let Cont::Native(b) = &mut self.frames[n].cont else { return };
        let Native::LoadSource { text, offset, queued, last, wait, .. } = &mut **b else { return };
        match std::mem::replace(wait, LoadWait::Value) {
            LoadWait::Value => *last = v,
            LoadWait::Expansion => *queued = alloc::cons(env.mc, v, *queued),
            LoadWait::Read => match alloc::list_to_vec(v).as_deref() {
                Some([form, Value::Fixnum(end)]) => {
                    *offset = (*end).clamp(*offset as i64, text.len() as i64) as usize;
                    *queued = alloc::cons(env.mc, *form, *queued);
                }
                _ => *offset = text.len(),
            },
        }
    }

    /// Take the next top-level form of the LoadSource frame on top and start
    /// processing it (CLHS 3.2.3.1): a PROGN's forms, a LOCALLY's without
    /// declarations and a running EVAL-WHEN's are processed in turn as
    /// top-level forms, a global macro call is expanded first and its expansion
    /// processed in its place, and any other form is compiled and evaluated.
    /// A form is read with the Rust reader while `*readtable*` has the standard
    /// syntax, else with the Lisp reader (`SYS::%LOAD-READ`), so reader macros a
    /// file installs apply to the rest of it. At the end, finish the frame.
    pub(super) fn load_step(&mut self, env: &mut Env<'_, 'gc>) -> VResult<'gc> {
        loop {
            let n = self.frames.len() - 1;
            let Cont::Native(b) = &mut self.frames[n].cont else {
                return Err(Raise::error("internal error: load step without a source"));
            };
            let Native::LoadSource { text, offset, file, queued, last, dyn_mark, text_value, wait } = &mut **b else {
                return Err(Raise::error("internal error: load step without a source"));
            };
            let form = if let Value::Cons(c) = *queued {
                *queued = c.cdr.get();
                c.car.get()
            } else if *offset < text.len() && !env.world.standard_syntax() {
                // The program's reader macros: the Lisp reader reads the next form.
                if text_value.is_nil() {
                    *text_value = alloc::string(env.mc, text);
                }
                *wait = LoadWait::Read;
                let args = [*text_value, Value::Fixnum(*offset as i64)];
                let line = line_of(text, *offset);
                let file = file.clone();
                self.compile_line = line;
                self.compile_file = file;
                let reader = env.world.packages.intern_external(env.mc, env.world.packages.system, "%LOAD-READ");
                let Some(f) = crate::runtime::world::function_of(reader) else {
                    return Err(Raise::error("internal error: SYS::%LOAD-READ is not defined"));
                };
                let base = self.stack.len();
                self.stack.extend_from_slice(&args);
                self.call_value(env, f, base, 2, base)?;
                return Ok(());
            } else {
                let features = feature_names(env.world);
                let opts = mprof_reader::ReadOptions {
                    file: file.as_deref().map(String::from),
                    features,
                    read_base: env.world.read_base(),
                    case: env.world.read_case(),
                    suppress: env.world.read_suppress(),
                    ..Default::default()
                };
                let read = if *offset < text.len() { mprof_reader::read_one(text, *offset, &opts) } else { Ok(None) };
                match read {
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
                        let (text, file) = (text.clone(), file.clone());
                        self.compile_line = datum.span.line;
                        self.compile_file = file.clone();
                        self.datum_form(env, &datum, &text, file.as_deref())?
                    }
                    Err(e) => {
                        // Skip the rest of the text: one reader error ends the load.
                        // The error names its own file and line; no form is named.
                        *offset = text.len();
                        self.compile_line = 0;
                        return Err(Raise::simple(ErrorKind::Reader, e.to_string()));
                    }
                }
            };
            let Value::Cons(c) = form else {
                let mark = self.expansions.len() as u32;
                return self.compile_start(env, form, mark);
            };
            // A top-level PROGN's forms are top-level forms too, and so are those
            // of an EVAL-WHEN that runs at load time and of a LOCALLY without
            // declarations (a macro one of them defines is then defined before
            // the next is compiled, as in CL).
            if let Some(body) = toplevel_body(env.world, c.car.get(), c.cdr.get()) {
                self.queue_toplevel(env, body);
                continue;
            }
            // A global macro call: expand it, then process the expansion.
            if let Value::Symbol(head) = c.car.get()
                && compiler::front::expands_at_toplevel(&env.world.syms, head)
            {
                let expander = head.function.get();
                self.count_expanded_toplevel(form);
                self.set_load_wait(LoadWait::Expansion);
                self.hide_prelude_expansion(expander);
                let base = self.stack.len();
                self.stack.push(form);
                self.stack.push(Value::Nil);
                self.call_value(env, expander, base, 2, base)?;
                return Ok(());
            }
            let mark = self.expansions.len() as u32;
            return self.compile_start(env, form, mark);
        }
    }

    /// Under `--count`, a source top-level form that is a macro call is counted
    /// here, once, as it is processed: the compiler sees only its expansion, which
    /// has no source span of its own.
    fn count_expanded_toplevel(&mut self, form: Value<'gc>) {
        if !self.counting {
            return;
        }
        let Some(span) = form.heap_address().and_then(|a| self.count_spans.spans.get(&a).copied()) else { return };
        let id = self.count_registry.point(self.count_spans.source, span, CountKind::Toplevel, "", 0) as usize;
        if self.counts.len() <= id {
            self.counts.resize(id + 1, 0);
        }
        self.counts[id] += 1;
    }

    fn set_load_wait(&mut self, to: LoadWait) {
        let n = self.frames.len() - 1;
        if let Cont::Native(b) = &mut self.frames[n].cont
            && let Native::LoadSource { wait, .. } = &mut **b
        {
            *wait = to;
        }
    }

    /// Put `body`'s forms in front of the LoadSource frame's queue, in order.
    fn queue_toplevel(&mut self, env: &mut Env<'_, 'gc>, body: Value<'gc>) {
        let items = alloc::list_to_vec(body).unwrap_or_default();
        let n = self.frames.len() - 1;
        if let Cont::Native(b) = &mut self.frames[n].cont
            && let Native::LoadSource { queued, .. } = &mut **b
        {
            *queued = alloc::list_with_tail(env.mc, &items, *queued);
        }
    }

    /// The value of a datum the Rust reader read from a file being loaded: its
    /// labels resolved, a `#.` deferred to Lisp, and under `--count` the source
    /// span of each of its lists recorded.
    fn datum_form(
        &mut self,
        env: &mut Env<'_, 'gc>,
        datum: &mprof_reader::Datum,
        text: &Rc<str>,
        file: Option<&str>,
    ) -> Result<Value<'gc>, Raise<'gc>> {
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
                        let i = self.count_registry.source(&Rc::from(path), text);
                        self.count_source = Some((text.clone(), i));
                        i
                    }
                };
                self.count_spans.source = source;
                let mut spans = mprof_heap::datum::SourceSpans::default();
                let r = mprof_heap::datum::datum_to_value_spanned(env.mc, &env.world.packages, package, datum, &mut spans);
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
            _ => mprof_heap::datum::datum_to_value(env.mc, &env.world.packages, package, datum),
        };
        let converted = match converted {
            Ok(v) if crate::runtime::labels::datum_has_labels(datum) => crate::runtime::labels::resolve(env.mc, env.world, v).map(Ok)?,
            other => other,
        };
        match converted {
            Ok(v) if crate::runtime::read_time::datum_needs_read_time(datum) => {
                Ok(crate::runtime::read_time::deferred_form(env.mc, env.world, v))
            }
            Ok(v) => Ok(v),
            Err(e) => {
                let where_ = match file {
                    Some(f) => format!("{f}:{}:{}", e.span.line, e.span.column),
                    None => format!("{}:{}", e.span.line, e.span.column),
                };
                Err(Raise::simple(ErrorKind::Package, format!("{where_}: {}", e.error)))
            }
        }
    }
}

/// The line (from 1) of the first non-blank character at or after byte `offset`
/// of `text`: where the next form starts, unless a comment comes first.
fn line_of(text: &str, offset: usize) -> u32 {
    let rest = text.get(offset..).unwrap_or("");
    let start = offset + (rest.len() - rest.trim_start().len());
    let upto = text.get(..start).unwrap_or(text);
    1 + upto.bytes().filter(|&b| b == b'\n').count() as u32
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
/// a PROGN's body, a LOCALLY's when it declares nothing, and an EVAL-WHEN's body when its situations include load
/// or execute time (NIL, no forms, when they do not).
pub(super) fn toplevel_body<'gc>(world: &crate::runtime::world::World<'gc>, head: Value<'gc>, rest: Value<'gc>) -> Option<Value<'gc>> {
    let Value::Symbol(s) = head else { return None };
    let syms = &world.syms;
    if gc_arena::Gc::ptr_eq(s, syms.progn) {
        return Some(rest);
    }
    if gc_arena::Gc::ptr_eq(s, syms.locally) {
        let declares = matches!(alloc::car(rest), Value::Cons(d) if matches!(d.car.get(), Value::Symbol(h) if gc_arena::Gc::ptr_eq(h, syms.declare)));
        return (!declares).then_some(rest);
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
