//! The typed side of the embedding API: calling any function value through a
//! [`Handle`], holding results as handles, converting with
//! [`FromLisp`]/[`IntoLisp`], and natives with typed, arity-checked arguments
//! whose panics become Lisp errors instead of unwinding through the VM.
//!
//! Invariant: every value crossing into Lisp goes through `from_host` with
//! the interpreter's held values, so a handle resolves, and a value that
//! cannot be converted is an [`ErrorKind::Conversion`] error before any Lisp
//! runs.

use std::panic::{AssertUnwindSafe, catch_unwind};

use mprof_heap::Value;

use super::{ErrorKind, Interpreter, LispError};
use crate::runtime::convert::{FromArgs, FromLisp, IntoLisp};
use crate::runtime::handles::Handle;
use crate::runtime::host_value::{HostValue, from_host, to_host};

fn conversion(message: impl Into<String>) -> LispError {
    LispError::new(ErrorKind::Conversion, "CONVERSION-ERROR", message)
}

/// Wrap a native so that a panic in it is a Lisp error naming it, not an
/// unwind through the VM and the host's `eval`.
pub(super) fn catching_panics(
    name: &str,
    mut f: impl FnMut(&[HostValue]) -> Result<HostValue, String> + 'static,
) -> impl FnMut(&[HostValue]) -> Result<HostValue, String> + 'static {
    let name = name.to_string();
    move |args| match catch_unwind(AssertUnwindSafe(|| f(args))) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Err(format!("the host function {name} panicked: {what}"))
        }
    }
}

impl Interpreter {
    /// Call the global function `name` (read in CL-USER) with host arguments.
    pub fn call(&mut self, name: &str, args: &[HostValue]) -> Result<HostValue, LispError> {
        let f = self.global_function(name)?;
        self.call_value(&f, args)
    }

    /// A handle to the global function `name` (read in CL-USER), to call later
    /// with [`Interpreter::call_value`] even if the name is redefined.
    pub fn global_function(&mut self, name: &str) -> Result<Handle, LispError> {
        let found = self.arena.mutate_root(|mc, root| {
            let world = &root.world;
            let f = match mprof_reader::read_one(name, 0, &Default::default()) {
                Ok(Some((d, _))) => mprof_heap::datum::datum_to_value(mc, &world.packages, world.packages.user, &d).ok(),
                _ => None,
            };
            f.and_then(crate::runtime::world::function_of).map(|f| root.held.hold(f))
        });
        found.ok_or_else(|| {
            LispError::new(ErrorKind::Condition, "UNDEFINED-FUNCTION", format!("The function {name} is undefined."))
        })
    }

    /// Call the function `f` holds (a closure returned by Lisp, a global
    /// function, anything FUNCALL takes) with host arguments.
    pub fn call_value(&mut self, f: &Handle, args: &[HostValue]) -> Result<HostValue, LispError> {
        self.start_call(f, args)?;
        self.drive()?;
        Ok(self.arena.mutate(|_mc, root| to_host(&root.world, root.vm.result, 0)))
    }

    /// Call `f` and hold its (first) value as a handle.
    pub fn call_value_handle(&mut self, f: &Handle, args: &[HostValue]) -> Result<Handle, LispError> {
        self.start_call(f, args)?;
        self.drive()?;
        Ok(self.arena.mutate_root(|_mc, root| root.held.hold(root.vm.result)))
    }

    fn start_call(&mut self, f: &Handle, args: &[HostValue]) -> Result<(), LispError> {
        self.arena
            .mutate_root(|mc, root| {
                let f = root.held.get(f)?;
                let args = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| from_host(mc, &root.world, Some(&root.held), a).map_err(|e| format!("argument {}: {e}", i + 1)))
                    .collect::<Result<Vec<Value<'_>>, String>>()?;
                root.vm.start_call(mc, f, &args);
                Ok::<(), String>(())
            })
            .map_err(conversion)
    }

    /// Evaluate `src` and hold its (first) value as a handle: any object,
    /// kept alive and valid across collections until the handle is dropped.
    pub fn eval_handle(&mut self, src: &str) -> Result<Handle, LispError> {
        self.arena.mutate_root(|mc, root| root.vm.start_source(mc, src, None));
        self.drive()?;
        Ok(self.arena.mutate_root(|_mc, root| root.held.hold(root.vm.result)))
    }

    /// The value a handle holds, converted for the host.
    pub fn value_of(&mut self, h: &Handle) -> Result<HostValue, LispError> {
        self.arena.mutate(|_mc, root| root.held.get(h).map(|v| to_host(&root.world, v, 0))).map_err(conversion)
    }

    /// Handles the host holds now (a dropped handle's slot is freed at the
    /// interpreter's next use of its table).
    pub fn held_handles(&mut self) -> usize {
        self.arena.mutate_root(|_mc, root| {
            root.held.sweep();
            root.held.len()
        })
    }

    /// Evaluate `src` and convert its (first) value to `T`; a value of another
    /// shape is an [`ErrorKind::Conversion`] error.
    pub fn eval_as<T: FromLisp>(&mut self, src: &str) -> Result<T, LispError> {
        let v = self.eval(src)?;
        T::from_lisp(v).map_err(|e| conversion(format!("the value of {src:?}: {e}")))
    }

    /// Call the global function `name` with arguments converted from Rust and
    /// its result converted to `R`.
    pub fn call_as<R: FromLisp>(&mut self, name: &str, args: impl IntoArgs) -> Result<R, LispError> {
        let v = self.call(name, &args.into_args())?;
        R::from_lisp(v).map_err(|e| conversion(format!("the result of {name}: {e}")))
    }

    /// Make a Rust function with typed arguments callable from Lisp as `name`:
    /// a call with the wrong number of arguments, or an argument that does not
    /// convert, is a Lisp `program-error`/`error` naming the function; an
    /// `Err` is a Lisp error with its message; a panic is caught and becomes a
    /// Lisp error too.
    pub fn register_fn<A: FromArgs, R: IntoLisp>(
        &mut self,
        name: &str,
        mut f: impl FnMut(A) -> Result<R, String> + 'static,
    ) -> Result<(), LispError> {
        self.register_native(name, move |args| {
            if args.len() != A::ARITY {
                return Err(format!("takes {} argument(s), got {}", A::ARITY, args.len()));
            }
            let a = A::from_args(args).map_err(|e| e.to_string())?;
            f(a).map(IntoLisp::into_lisp)
        })
    }
}

/// Arguments a host passes to [`Interpreter::call_as`]: a tuple of values
/// that convert into Lisp, or a slice of [`HostValue`]s.
pub trait IntoArgs {
    /// The arguments, converted.
    fn into_args(self) -> Vec<HostValue>;
}

impl IntoArgs for () {
    fn into_args(self) -> Vec<HostValue> {
        Vec::new()
    }
}

impl IntoArgs for &[HostValue] {
    fn into_args(self) -> Vec<HostValue> {
        self.to_vec()
    }
}

macro_rules! into_args {
    ($(($($t:ident),+)),*) => {$(
        impl<$($t: IntoLisp),+> IntoArgs for ($($t,)+) {
            #[allow(non_snake_case)]
            fn into_args(self) -> Vec<HostValue> {
                let ($($t,)+) = self;
                vec![$($t.into_lisp()),+]
            }
        }
    )*};
}
into_args!((A), (A, B), (A, B, C), (A, B, C, D), (A, B, C, D, E), (A, B, C, D, E, F));
