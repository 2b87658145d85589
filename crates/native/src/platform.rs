//! The native platform's clock and random source. The core never reads them itself: they
//! are inputs of its options ([`crate::inputs`]; [`Options::clock`], [`Options::random`],
//! [`StoreOptions`]'s), and this module holds the defaults that [`options`] and
//! [`conversation_options`] hand in. In wasm the exports hand in the host's (`Date.now()`,
//! `Math.random()`: `crates/wasm/src/interop/options/`); tests hand in their own.

use std::rc::Rc;

use crate::conversation::StoreOptions;
use crate::error::Result;
use crate::store::Options;

/// Milliseconds since the Unix epoch, from the system clock.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// A uniform number in `[0, 1)` from the OS CSPRNG (53 random bits).
pub fn random_unit() -> Result<f64> {
    let mut bytes = [0u8; 8];
    for b in &mut bytes {
        *b = native_random::next_byte()?;
    }
    Ok((u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64)
}

/// `n` characters of `[a-z0-9]` from the OS CSPRNG.
pub fn random_chars(n: usize) -> Result<String> {
    native_random::chars(n)
}

/// The OS CSPRNG, drawn through a pool.
mod native_random {
    use std::cell::RefCell;

    use crate::error::{Error, ErrorKind, Result};

    thread_local! {
        static POOL: RefCell<RandomPool> = const { RefCell::new(RandomPool { bytes: [0; RandomPool::SIZE], used: RandomPool::SIZE }) };
    }

    fn no_csprng(e: getrandom::Error) -> Error {
        Error::new(ErrorKind::Internal, format!("no CSPRNG: {e}"))
    }

    /// One byte of the pool.
    pub fn next_byte() -> Result<u8> {
        POOL.with(|pool| pool.borrow_mut().next()).map_err(no_csprng)
    }

    /// `n` characters of `[a-z0-9]`. The bytes come from a pool of `RandomPool::SIZE`
    /// filled in one call: a name takes a handful of bytes, and the pool spares the calls.
    pub fn chars(n: usize) -> Result<String> {
        POOL.with(|pool| {
            let mut pool = pool.borrow_mut();
            let mut failure = None;
            let out = crate::naming::random_chars(n, || {
                pool.next().unwrap_or_else(|e| {
                    failure = Some(e);
                    0
                })
            });
            match failure {
                // Bytes drawn before the failure are dropped with the pool's remainder.
                Some(e) => {
                    pool.used = RandomPool::SIZE;
                    Err(no_csprng(e))
                }
                None => Ok(out),
            }
        })
    }

    /// CSPRNG bytes drawn ahead, each handed out once.
    struct RandomPool {
        bytes: [u8; RandomPool::SIZE],
        /// How many of `bytes` are handed out (`SIZE`: none left).
        used: usize,
    }

    impl RandomPool {
        /// Bytes drawn per call to the platform: a few dozen names' worth.
        const SIZE: usize = 256;

        fn next(&mut self) -> std::result::Result<u8, getrandom::Error> {
            if self.used == Self::SIZE {
                getrandom::fill(&mut self.bytes)?;
                self.used = 0;
            }
            self.used += 1;
            Ok(self.bytes[self.used - 1])
        }
    }
}

/// Defaults for a store in `context_dir`, with the platform's clock ([`now_ms`]) and
/// random source ([`random_unit`]): [`Options::with`] those.
pub fn options(context_dir: impl Into<String>) -> Options {
    Options::with(context_dir, Rc::new(now_ms), Rc::new(random_unit))
}

/// Defaults for a conversation store in `context_dir`, with the platform's clock
/// ([`now_ms`]) and random source ([`random_chars`]): [`StoreOptions::with`] those.
pub fn conversation_options(context_dir: impl Into<String>) -> StoreOptions {
    StoreOptions::with(context_dir, Rc::new(now_ms), Rc::new(random_chars))
}
