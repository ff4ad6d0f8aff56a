//! A spin lock for the rare paths (node creation, error records, orphan
//! counters, dumps). It never allocates, which a `std` mutex does not promise
//! across versions, and `fork` handlers can take and release it from C
//! callbacks without holding a guard object.

use core::sync::atomic::{AtomicBool, Ordering};

/// A test-and-test-and-set lock that yields the CPU while waiting.
pub struct SpinLock {
    held: AtomicBool,
}

impl Default for SpinLock {
    fn default() -> Self {
        Self::new()
    }
}

impl SpinLock {
    pub const fn new() -> Self {
        SpinLock {
            held: AtomicBool::new(false),
        }
    }

    pub fn lock(&self) {
        loop {
            if !self.held.swap(true, Ordering::Acquire) {
                return;
            }
            while self.held.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
        }
    }

    pub fn unlock(&self) {
        self.held.store(false, Ordering::Release);
    }

    /// Run `f` with the lock held.
    pub fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        self.lock();
        let r = f();
        self.unlock();
        r
    }
}

/// A value behind a [`SpinLock`].
pub struct Locked<T> {
    lock: SpinLock,
    value: core::cell::UnsafeCell<T>,
}

// SAFETY: the value is only reached through `with`, which holds the lock.
unsafe impl<T: Send> Sync for Locked<T> {}

impl<T> Locked<T> {
    pub const fn new(value: T) -> Self {
        Locked {
            lock: SpinLock::new(),
            value: core::cell::UnsafeCell::new(value),
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.lock.lock();
        // SAFETY: the lock is held, so this is the only reference.
        let r = f(unsafe { &mut *self.value.get() });
        self.lock.unlock();
        r
    }

    /// The lock itself, for fork handlers that must hold it across `fork`.
    pub fn raw(&self) -> &SpinLock {
        &self.lock
    }
}
