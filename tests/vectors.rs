//! The cross-runtime test vectors in `tests/vectors/`: the JavaScript suite reads the
//! same files, so every runtime proves it produces the same bytes.

use serde_json::Value;

fn vectors(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
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
