//! libloading's API as abi_stable 0.11 uses it. Natively: libloading 0.8 itself. On wasm32
//! (no dynamic loading; backends are linked statically and registered with
//! `quabla::runtime::register_static`): every open fails with [`Error::Unsupported`].
//!
//! ```
//! # #[cfg(not(target_arch = "wasm32"))]
//! assert!(unsafe { libloading::Library::new("/no/such/library.so") }.is_err());
//! ```

#[cfg(not(target_arch = "wasm32"))]
pub use real::*;

#[cfg(target_arch = "wasm32")]
mod unsupported {
    use std::convert::Infallible;
    use std::ffi::OsStr;
    use std::marker::PhantomData;

    /// Why nothing could be loaded.
    #[derive(Debug)]
    pub enum Error {
        /// wasm32 has no dynamic libraries.
        Unsupported,
    }

    impl std::fmt::Display for Error {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(
                "dynamic libraries cannot be loaded on wasm32; link the backend statically \
                 and register it instead",
            )
        }
    }

    impl std::error::Error for Error {}

    /// A loaded library; none can exist on wasm32.
    pub struct Library(Infallible);

    impl Library {
        /// Always fails on wasm32.
        ///
        /// # Safety
        /// None needed; `unsafe` only to match libloading's signature.
        pub unsafe fn new<P: AsRef<OsStr>>(_path: P) -> Result<Library, Error> {
            Err(Error::Unsupported)
        }

        /// Unreachable: no `Library` value exists.
        ///
        /// # Safety
        /// None needed; `unsafe` only to match libloading's signature.
        pub unsafe fn get<T>(&self, _symbol: &[u8]) -> Result<Symbol<'_, T>, Error> {
            match self.0 {}
        }
    }

    /// A symbol of a loaded library; none can exist on wasm32.
    pub struct Symbol<'lib, T> {
        never: Infallible,
        _lib: PhantomData<&'lib T>,
    }

    impl<T> std::ops::Deref for Symbol<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            match self.never {}
        }
    }
}

#[cfg(target_arch = "wasm32")]
pub use unsupported::*;
