//! A text many pointers hold (a tool name, a query id, a folder and tool prefix): one
//! copy, reference counted, held through a thin pointer. An `Rc<str>` is a fat pointer
//! (address and length: 8 bytes in wasm, 16 natively); `Shared` keeps the length with
//! the text and takes 4 (8), so each pointer holding three of them saves 12 bytes in
//! wasm, for one more allocation per distinct text (a few per store).

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::rc::Rc;

/// A shared text: compares, hashes and borrows as its `str`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Shared(Rc<Box<str>>);

impl Shared {
    /// Whether both are the same copy.
    pub(crate) fn ptr_eq(a: &Shared, b: &Shared) -> bool {
        Rc::ptr_eq(&a.0, &b.0)
    }
}

impl From<&str> for Shared {
    fn from(text: &str) -> Self {
        Shared(Rc::new(text.into()))
    }
}

impl Deref for Shared {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Shared {
    fn borrow(&self) -> &str {
        self
    }
}

impl Hash for Shared {
    // As the `str` hashes, so a set of them is searched by `&str` (`Borrow`).
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn a_shared_text_is_a_thin_pointer_found_by_its_str() {
        assert_eq!(std::mem::size_of::<Shared>(), std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<Option<Shared>>(), std::mem::size_of::<usize>());
        let mut set = HashSet::new();
        let a = Shared::from("readFile");
        set.insert(a.clone());
        let found = set.get("readFile").unwrap();
        assert!(Shared::ptr_eq(found, &a) && !Shared::ptr_eq(found, &Shared::from("readFile")));
        assert_eq!(&**found, "readFile");
        assert!(!set.contains("grep"));
    }
}
