//! The cross-runtime test vectors in `tests/vectors/`: the JavaScript suite reads the
//! same files, so every runtime proves it produces the same bytes.

use serde_json::Value;

fn vectors(name: &str) -> Vec<Value> {
    let path = format!("{}/../../tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("vector file");
    let doc: Value = serde_json::from_str(&text).expect("vector JSON");
    doc["vectors"].as_array().expect("vectors array").clone()
}

#[test]
fn canonical_json_and_args_hash() {
    for v in vectors("canonical.json") {
        let args: Value = serde_json::from_str(v["json"].as_str().unwrap()).unwrap();
        assert_eq!(toolctx::canonical_json(&args).unwrap(), v["canonical"].as_str().unwrap(), "{}", v["name"]);
        assert_eq!(toolctx::args_hash(&args).unwrap(), v["sha256"].as_str().unwrap(), "{}", v["name"]);
    }
}

#[test]
fn hash_query() {
    for v in vectors("hash_query.json") {
        let query = v["query"].as_str().unwrap();
        assert_eq!(toolctx::naming::normalize_query(query), v["normalized"].as_str().unwrap());
        assert_eq!(toolctx::hash_query(query), v["id"].as_str().unwrap(), "{query:?}");
    }
}

#[test]
fn sanitize_tool_names() {
    for v in vectors("sanitize.json") {
        assert_eq!(toolctx::sanitize_tool_name(v["name"].as_str().unwrap()), v["sanitized"].as_str().unwrap());
    }
}

#[test]
fn sample_record_file_byte_for_byte() {
    let path = format!("{}/../../tests/vectors/record.json", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let input = &doc["input"];
    let randoms: Vec<f64> = input["random"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let next = std::cell::Cell::new(0);
    let mut options = toolctx::options("/ctx");
    options.persist_threshold = 0;
    let epoch = input["epochMs"].as_i64().unwrap();
    options.clock = std::rc::Rc::new(move || epoch);
    options.random = std::rc::Rc::new(move || {
        next.set(next.get() + 1);
        Ok(randoms[(next.get() - 1) % randoms.len()])
    });
    let manager = toolctx::ContextManager::new(toolctx::MemoryStorage::new(), options).unwrap();
    assert_eq!(toolctx::hash_query(input["query"].as_str().unwrap()), input["queryId"].as_str().unwrap());
    let (args, result) = (input["args"].to_string(), input["result"].to_string());
    let saved = futures_executor::block_on(manager.save(toolctx::SaveInput {
        tool_name: input["toolName"].as_str().unwrap(),
        args_json: &args,
        result_json: Some(&result),
        task_id: Some(input["taskId"].as_i64().unwrap().into()),
        query_id: Some(input["queryId"].as_str().unwrap().to_owned()),
        description: None,
        category: None,
        tool_call_id: None,
        result_body: None,
    }))
    .unwrap();
    assert_eq!(saved, format!("/ctx/{}", doc["filename"].as_str().unwrap()));
    let bytes = futures_executor::block_on(toolctx::Storage::read(manager.storage(), &saved)).unwrap().unwrap();
    assert_eq!(String::from_utf8(bytes).unwrap(), doc["file"].as_str().unwrap());
}
