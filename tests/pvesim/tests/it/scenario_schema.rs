//! The scenario format's JSON Schema: derived from the Rust types, published as
//! `tests/pvesim/scenario.schema.json` and printed by `pvesim --print-scenario-schema`;
//! a scenario that does not fit is refused with the path of the bad field.

use pvesim::Scenario;
use std::path::Path;
use std::process::Command;

const PUBLISHED: &str = "scenario.schema.json";

fn published() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(PUBLISHED)).unwrap()
}

#[test]
fn the_published_schema_is_current() {
    let current = serde_json::to_string_pretty(&Scenario::json_schema()).unwrap() + "\n";
    assert!(
        published() == current,
        "tests/pvesim/{PUBLISHED} is stale: the scenario types changed. Regenerate it with\n  cargo run -p pvesim -- --print-scenario-schema > tests/pvesim/{PUBLISHED}"
    );
}

#[test]
fn the_cli_prints_the_published_schema() {
    let out = Command::new(env!("CARGO_BIN_EXE_pvesim"))
        .arg("--print-scenario-schema")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), published());
}

#[test]
fn the_schema_describes_the_format() {
    let schema = Scenario::json_schema();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for key in ["nodes", "storages", "users"] {
        assert!(required.contains(&key), "{required:?}");
    }
    assert_eq!(schema["additionalProperties"], false, "unknown keys are refused");
    assert!(
        schema["$defs"]["GuestSpec"]["properties"]["type"]["$ref"].is_string()
            || schema["$defs"]["GuestKind"].is_object()
    );
}

fn default_json() -> serde_json::Value {
    serde_json::to_value(Scenario::default_cluster()).unwrap()
}

#[test]
fn a_bad_field_is_refused_with_its_path() {
    let mut s = default_json();
    s["guests"][1]["config"] = serde_json::json!(["memory", 2048]);
    let err = Scenario::from_json(&s.to_string()).unwrap_err().to_string();
    assert!(
        err.starts_with("guests[1].config: invalid type: sequence, expected a map"),
        "{err}"
    );

    let mut s = default_json();
    s["storages"][0]["total"] = serde_json::json!("lots");
    let err = Scenario::from_json(&s.to_string()).unwrap_err().to_string();
    assert!(
        err.starts_with("storages[0].total: invalid type: string \"lots\""),
        "{err}"
    );

    let mut s = default_json();
    s["nodes"][0]["bridge"] = serde_json::json!(["vmbr9"]);
    let err = Scenario::from_json(&s.to_string()).unwrap_err().to_string();
    assert!(
        err.starts_with("nodes[0].bridge: unknown field `bridge`, expected one of `name`"),
        "{err}"
    );

    let mut s = default_json();
    s.as_object_mut().unwrap().remove("nodes");
    let err = Scenario::from_json(&s.to_string()).unwrap_err().to_string();
    assert!(err.contains("missing field `nodes`"), "{err}");
}

#[test]
fn pvesim_refuses_to_serve_a_bad_scenario() {
    let mut s = default_json();
    s["guests"][0]["type"] = serde_json::json!("vm");
    let file = std::env::temp_dir().join(format!("pvesim-bad-scenario-{}.json", std::process::id()));
    std::fs::write(&file, s.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pvesim"))
        .args(["--listen", "127.0.0.1:0", "--scenario"])
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("guests[0].type: unknown variant `vm`, expected `qemu` or `lxc`"),
        "{stderr}"
    );
}
