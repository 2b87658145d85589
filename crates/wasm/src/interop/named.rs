//! Names that cross the boundary as fixed strings: the `named!` enums (the step kinds of
//! interop/steps.rs, the requests of interop/requests.rs, the conversation store's
//! operations), and the test that keeps pkg-template/protocol.js naming exactly them
//! (the modules export no list of their kinds: the test reads protocol.js itself).

#[cfg(test)]
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
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$v,)*];

            /// Its name in pkg-template/protocol.js (`RemoveDir`: `REMOVE_DIR`).
            #[cfg(test)]
            pub fn constant(self) -> &'static str {
                match self { $($name::$v => stringify!($v),)* }
            }

            /// What crosses (the kinds the package sends are only read: `named`).
            #[allow(dead_code)]
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
#[cfg(test)]
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
#[cfg(test)]
pub fn table<T: Copy>(all: &[T], constant: fn(T) -> &'static str, name: fn(T) -> &'static str) -> JsValue {
    let o = js_sys::Object::new();
    for &v in all {
        let _ = js_sys::Reflect::set(&o, &screaming(constant(v)).into(), &JsValue::from_str(name(v)));
    }
    o.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use js_sys::{Array, Object};
    use wasm_bindgen_test::*;

    // The tables of pkg-template/protocol.js, as the package's JavaScript reads them.
    #[wasm_bindgen(module = "/../../pkg-template/protocol.js")]
    extern "C" {
        #[wasm_bindgen(thread_local_v2)]
        static STEP: JsValue;
        #[wasm_bindgen(thread_local_v2)]
        static OP: JsValue;
        #[wasm_bindgen(thread_local_v2)]
        static WORK: JsValue;
        #[wasm_bindgen(thread_local_v2)]
        static QUERY: JsValue;
        #[wasm_bindgen(thread_local_v2)]
        static UPDATE: JsValue;
        #[wasm_bindgen(thread_local_v2)]
        static START: JsValue;
        #[wasm_bindgen(thread_local_v2)]
        static COMPUTE: JsValue;
        #[wasm_bindgen(thread_local_v2)]
        static OPERATION: JsValue;
    }

    /// A table's `[NAME, name]` pairs, sorted.
    fn entries(table: &JsValue) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Object::entries(table.unchecked_ref())
            .iter()
            .map(|pair| {
                let pair: Array = pair.unchecked_into();
                (pair.get(0).as_string().unwrap_or_default(), pair.get(1).as_string().unwrap_or_default())
            })
            .collect();
        out.sort();
        out
    }

    #[wasm_bindgen_test]
    fn constants_are_the_variants_in_screaming_case() {
        assert_eq!(screaming("RemoveDir"), "REMOVE_DIR");
        assert_eq!(screaming("NotARecord"), "NOT_A_RECORD");
        assert_eq!(screaming("Run"), "RUN");
    }

    /// Every name that crosses (the steps and ops of every module; the core module's
    /// requests, the conversation store's operations, in the builds with those features)
    /// is exactly what protocol.js names, so the modules export no list of them.
    #[wasm_bindgen_test]
    fn protocol_js_names_exactly_the_kinds_that_cross() {
        let tables = super::super::steps::tables().into_iter();
        #[cfg(feature = "core")]
        let tables = tables.chain(super::super::requests::tables());
        #[cfg(feature = "conversation")]
        let tables = tables.chain(super::super::conversation::tables());
        let mut checked = Vec::new();
        for (name, kinds) in tables {
            let named = match name {
                "STEP" => STEP.with(JsValue::clone),
                "OP" => OP.with(JsValue::clone),
                "WORK" => WORK.with(JsValue::clone),
                "QUERY" => QUERY.with(JsValue::clone),
                "UPDATE" => UPDATE.with(JsValue::clone),
                "START" => START.with(JsValue::clone),
                "COMPUTE" => COMPUTE.with(JsValue::clone),
                "OPERATION" => OPERATION.with(JsValue::clone),
                other => panic!("protocol.js has no table {other}"),
            };
            assert!(Object::is_frozen(named.unchecked_ref::<Object>()), "protocol.js {name} is frozen");
            assert_eq!(entries(&named), entries(&kinds), "protocol.js {name}");
            checked.push(name);
        }
        assert!(checked.len() >= 2, "{checked:?}");
    }
}
