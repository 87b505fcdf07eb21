//! Validation parity: the same argument sets go through real AnsibleModule (built
//! from our declaration, exported by `cargo collection spec`) and through the module
//! binary; the failure messages must be identical, on every supported ansible-core.

use std::path::Path;
use std::process::{Command, Stdio};

use ferrox_integration::{module_command, repo_root};
use serde_json::{json, Value};

const MODULE: &str = "proxmox_vm_info";
const SECRET: &str = "5f1c9e0a-secret-for-parity";

fn auth() -> Value {
    json!({"api_host": "127.0.0.1", "api_port": 1, "api_user": "ansible@pve", "api_token_id": "automation", "api_token_secret": SECRET})
}

fn plus(base: Value, extra: Value) -> Value {
    let mut v = base;
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// Argument sets that fail validation, each exercising one rule (or two at once, to
/// settle which error AnsibleModule reports first).
fn cases() -> Vec<Value> {
    vec![
        json!({"bogus": 1}),
        json!({"bogus": 1, "other": 2, "api_host": "h"}),
        plus(auth(), json!({"bogus": 1})),
        json!({"api_host": "h", "api_user": "u", "api_token_id": "automation"}),
        json!({"api_host": "h", "api_user": "u", "api_token_secret": SECRET}),
        plus(auth(), json!({"vmid": "abc"})),
        plus(auth(), json!({"vmid": 1.5})),
        plus(auth(), json!({"vmid": [1]})),
        plus(auth(), json!({"type": "vm"})),
        plus(auth(), json!({"config": "Current"})),
        plus(auth(), json!({"network": "maybe"})),
        plus(auth(), json!({"api_port": "x"})),
        plus(auth(), json!({"validate_certs": "sometimes"})),
        plus(auth(), json!({"type": "vm", "vmid": "abc"})),
        json!({"bogus": 1, "type": "vm"}),
    ]
}

fn spec_json() -> Value {
    let module = ferrox::MODULES
        .iter()
        .find(|m| m.name == MODULE)
        .expect("the module is registered");
    ferrox_ansible::spec_json::argument_spec(&(module.spec)())
}

/// `(ansible-core version, messages)` from real AnsibleModule in this venv.
fn python_says(python: &Path, spec: &Value, cases: &[Value]) -> (String, Vec<Value>) {
    let script = repo_root().join("tests/integration/parity/ansible_module_says.py");
    let mut child = Command::new(python)
        .arg(&script)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (run `cargo collection setup`)", python.display()));
    let request = json!({"module_name": MODULE, "spec": spec, "cases": cases});
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), request.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["version"].as_str().unwrap().to_string(),
        v["messages"].as_array().unwrap().clone(),
    )
}

/// The binary's `msg` for one argument set, told it runs under `version`.
fn binary_says(case: &Value, version: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let args = dir.path().join("args");
    let mut full = case.clone();
    full["_ansible_module_name"] = json!(MODULE);
    full["_ansible_version"] = json!(version);
    std::fs::write(&args, full.to_string()).unwrap();
    let out = module_command(MODULE)
        .arg(&args)
        .env_clear()
        .output()
        .expect("run the module binary");
    let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON result");
    result["msg"].clone()
}

/// The message with the list of valid booleans as a sorted set: AnsibleModule prints
/// a Python set there, whose order changes with the interpreter's hash seed.
fn comparable(msg: &Value) -> (String, Vec<String>) {
    const LIST: &str = "Valid booleans include: ";
    let text = msg.as_str().unwrap_or_default();
    match text.split_once(LIST) {
        Some((head, items)) => {
            let mut set: Vec<String> = items.split(", ").map(str::to_string).collect();
            set.sort();
            (format!("{head}{LIST}"), set)
        }
        None => (text.to_string(), Vec::new()),
    }
}

fn check_parity(venv: &str) {
    let python = repo_root().join(venv).join("bin/python3");
    let spec = spec_json();
    let cases = cases();
    let (version, expected) = python_says(&python, &spec, &cases);
    let mut mismatches = Vec::new();
    for (case, want) in cases.iter().zip(&expected) {
        assert!(
            want.is_string(),
            "case {case} must fail validation in AnsibleModule {version}, it passed"
        );
        let got = binary_says(case, &version);
        if comparable(&got) != comparable(want) {
            mismatches.push(format!(
                "args {case}\n  AnsibleModule {version}: {want}\n  binary:              {got}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} messages differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
}

#[test]
fn validation_messages_match_ansible_module_2_19() {
    check_parity(".venv");
}

#[test]
fn validation_messages_match_ansible_module_2_17() {
    check_parity(".venv-2.17");
}
