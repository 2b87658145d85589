//! Names that cross the boundary as fixed strings: the `named!` enums (the step kinds of
//! interop/steps.rs, the requests of interop/requests.rs), and `__stepKinds`, which lists
//! every one of them for the test that keeps pkg-template/protocol.js equal to them
//! (tests/js/protocol.test.mjs).

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;

/// An enum whose variants cross as fixed JavaScript strings, listed in `ALL`: each has
/// its `name` (what crosses) and its `constant` (how protocol.js names it).
macro_rules! named {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name { $($(#[$vm])* $v,)* }

        impl $name {
            /// Every variant, in order.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];

            /// Its name in pkg-template/protocol.js (`RemoveDir`: `REMOVE_DIR`).
            #[allow(dead_code)]
            pub fn constant(self) -> &'static str {
                match self { $($name::$v => stringify!($v),)* }
            }

            /// What crosses.
            pub fn name(self) -> &'static str {
                match self { $($name::$v => $s,)* }
            }

            /// The variant that crosses as `name`.
            #[allow(dead_code)]
            pub fn named(name: &str) -> Option<Self> {
                match name { $($s => Some($name::$v),)* _ => None }
            }
        }
    };
}

pub(crate) use named;

/// `RemoveDir` as protocol.js names it: `REMOVE_DIR`.
fn screaming(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i > 0 && c.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// `{NAME: "name"}` of an enum's variants.
pub fn table<T: Copy>(all: &[T], constant: fn(T) -> &'static str, name: fn(T) -> &'static str) -> JsValue {
    let o = Object::new();
    for &v in all {
        let _ = Reflect::set(&o, &screaming(constant(v)).into(), &JsValue::from_str(name(v)));
    }
    o.into()
}

/// `{STEP, OP}`, and in the core module `{WORK, QUERY, UPDATE, STOREWIDE}` too, in the
/// conversation module `{OPERATION}`: every
/// name that crosses, as protocol.js must name them (its test compares them). Not part
/// of the API.
#[wasm_bindgen(js_name = "__stepKinds")]
pub fn step_kinds() -> JsValue {
    let o = Object::new();
    let tables = super::steps::tables().into_iter();
    #[cfg(feature = "core")]
    let tables = tables.chain(super::requests::tables());
    #[cfg(feature = "conversation")]
    let tables = tables.chain(super::conversation::tables());
    for (key, value) in tables {
        let _ = Reflect::set(&o, &key.into(), &value);
    }
    o.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    #[wasm_bindgen_test]
    fn constants_are_the_variants_in_screaming_case() {
        assert_eq!(screaming("RemoveDir"), "REMOVE_DIR");
        assert_eq!(screaming("NotARecord"), "NOT_A_RECORD");
        assert_eq!(screaming("Run"), "RUN");
    }
}
