//! What the pointer table keeps in compact form reads back exactly as it was saved.

use futures_executor::block_on;
use serde_json::Value;
use toolctx::{ContextManager, Error, Filter, MemoryStorage, SaveInput};

/// Args whose generated description exercises every path of `describe`.
const ARGS: &[&str] = &[
    r#"{"path":"src/auth/login.ts"}"#,
    r#"{"b":2,"a":1,"c":{"z":[1,"two",null],"y":true}}"#,
    r#"{"pattern":"  spaced  ","n":-0,"f":1e21,"g":0.1,"h":12345678901234567890}"#,
    r#"{"q":"quote \" backslash \\ line\u2028sep \u0000 nul","é":"Σίσυφος 🦀"}"#,
    r#"{"text":"word word word word word word word word word word word word word word word word word word word word word word word word word word word word word"}"#,
    r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13}"#,
    r#"{"list":["a",["b",{"c":"d"}],3.5e-7]}"#,
    r#"{}"#,
];

fn pointers(m: &ContextManager<MemoryStorage>) -> Vec<Value> {
    serde_json::from_str(&m.pointers_json(Filter::default())).unwrap()
}

#[test]
fn generated_descriptions_are_rebuilt_byte_for_byte() {
    for persist_threshold in [0, usize::MAX] {
        block_on(async {
            let mut o = toolctx::options("/ctx");
            o.persist_threshold = persist_threshold;
            let m = ContextManager::new(MemoryStorage::new(), o)?;
            let tools = ["readFile", "HTTPGet_v2", "search-code", "", "grép"];
            let mut paths = Vec::new();
            for (i, args) in ARGS.iter().enumerate() {
                let tool = tools[i % tools.len()];
                let input =
                    SaveInput { tool_name: tool, args_json: args, result_json: Some("1"), ..SaveInput::default() };
                paths.push(m.save(input).await?);
            }
            let records = m.load(&paths).await?;
            for ((pointer, record), (i, args)) in pointers(&m).iter().zip(&records).zip(ARGS.iter().enumerate()) {
                let record: Value = serde_json::from_slice(record).unwrap();
                let expected = toolctx::describe(tools[i % tools.len()], &serde_json::from_str(args).unwrap());
                assert_eq!(record["toolDescription"], expected, "the record holds the generated description");
                assert_eq!(pointer["toolDescription"], expected, "pointer of {args}");
                assert_eq!(m.description_of(&paths[i]).as_deref(), Some(expected.as_str()));
            }
            Ok::<(), Error>(())
        })
        .unwrap();
    }
}

#[test]
fn a_given_description_is_kept_as_given() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), toolctx::options("/ctx"))?;
        let generated = toolctx::describe("readFile", &serde_json::json!({"path": "a.ts"}));
        for description in ["my own words", "", generated.as_str()] {
            let input = SaveInput {
                tool_name: "readFile",
                args_json: r#"{"path":"a.ts"}"#,
                result_json: Some("1"),
                description: Some(description.to_owned()),
                ..SaveInput::default()
            };
            let path = m.save(input).await?;
            assert_eq!(m.description_of(&path).as_deref(), Some(description));
            assert_eq!(pointers(&m).last().unwrap()["toolDescription"], description);
        }
        Ok::<(), Error>(())
    })
    .unwrap();
}
