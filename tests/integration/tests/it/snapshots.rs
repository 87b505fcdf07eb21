//! What users read, as reviewed snapshots (insta, `tests/snapshots/`): each module's
//! documentation as `ansible-doc` prints it, the result and `--diff` of representative
//! runs against the simulator (in process; create, no-op, converge, each
//! in check mode and for real; a disk and a NIC), and the messages of bad input. A
//! change to any of it shows as a snapshot diff to review (`cargo insta review`, or
//! `INSTA_UPDATE=always` then read `git diff`); CI fails on an unreviewed change.
//!
//! Volatile values are redacted before comparing: UPIDs, MAC addresses, ports, temp
//! paths, digests, timings.

use std::process::Command;

use ferrox_integration::{ansible_playbook, module_command, Env, PlayOpts, TaskOutcome, MODULES};
use regex::Regex;
use serde_json::{json, Value};

/// Replaces what differs between runs with placeholders.
fn redact_text(text: &str) -> String {
    let rules: [(&str, &str); 6] = [
        (
            r"UPID:[A-Za-z0-9_.-]+:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:[a-z]+:[^:\s]*:[^:\s]+:",
            "[upid]",
        ),
        (r"\b(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}\b", "[mac]"),
        (r"(127\.0\.0\.1|localhost):\d{2,5}", "$1:[port]"),
        (r"/tmp/[^\s'\x22,)]+", "[tmp]"),
        (r"\b[0-9a-f]{40}\b", "[digest]"),
        (r"uuid=[0-9a-f-]{36}", "uuid=[uuid]"),
    ];
    let mut out = text.to_string();
    for (pattern, with) in rules {
        out = Regex::new(pattern)
            .expect("pattern")
            .replace_all(&out, with)
            .into_owned();
    }
    out
}

fn redact(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(redact_text(s)),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with("_ansible"))
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "vmgenid" if !v.is_null() => json!("[redacted]"),
                        _ => redact(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The parts of a task result users read: the module's keys (without `invocation`,
/// which only repeats the task), redacted.
fn shown(outcome: &TaskOutcome) -> Value {
    let mut result = outcome.result.clone();
    if let Some(map) = result.as_object_mut() {
        map.remove("invocation");
    }
    redact(&result)
}

#[test]
fn module_docs_as_ansible_doc_prints_them() {
    let env = Env::start();
    let doc = ansible_playbook().with_file_name("ansible-doc");
    // One ansible-doc for every module (each start costs the collection loader's
    // seconds); each module's text begins with its `> MODULE` line, which names the file
    // ansible-doc read, under this run's temp dir.
    let out = Command::new(&doc)
        .args(MODULES.iter().map(|m| format!("ferrox.proxmox.{m}")))
        .env("ANSIBLE_COLLECTIONS_PATH", env.collections_path())
        .env("ANSIBLE_HOME", env.dir().join("ansible-home"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("COLUMNS", "100")
        .env("PAGER", "cat")
        .output()
        .expect("run ansible-doc");
    assert!(
        out.status.success(),
        "ansible-doc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let read_from = Regex::new(r"\(/[^)]*/ansible_collections/").unwrap();
    let text = read_from.replace_all(&text, "(.../ansible_collections/");
    let docs = docs_by_module(&text);
    assert_eq!(
        docs.iter().map(|(m, _)| *m).collect::<Vec<_>>(),
        MODULES.to_vec(),
        "ansible-doc printed a document per module, in the order asked"
    );
    for (module, text) in docs {
        insta::assert_snapshot!(format!("doc_{module}"), redact_text(text));
    }
}

/// ansible-doc's output for several modules, split at each `> MODULE ferrox.proxmox.X`
/// line: (X, its text).
fn docs_by_module(text: &str) -> Vec<(&str, &str)> {
    const HEAD: &str = "> MODULE ferrox.proxmox.";
    let starts: Vec<usize> = text.match_indices(HEAD).map(|(i, _)| i).collect();
    starts
        .iter()
        .enumerate()
        .map(|(n, &start)| {
            let end = starts.get(n + 1).copied().unwrap_or(text.len());
            let doc = &text[start..end];
            let name = doc[HEAD.len()..].split([' ', '\n']).next().unwrap_or_default();
            (name, doc)
        })
        .collect()
}

const CREATE: &str = "ferrox.proxmox.proxmox_kvm:
    name: snap-web
    node: pve1
    cores: 2
    memory: 1024
    scsihw: virtio-scsi-single
    scsi:
      scsi0: local-lvm:4
    net:
      net0: virtio,bridge=vmbr0";

fn run(env: &Env, name: &str, task: &str, check: bool) -> Value {
    let play = env.run_with(
        &format!("- name: {name}\n  {task}\n  ignore_errors: true\n"),
        &PlayOpts {
            check,
            diff: true,
            ..Default::default()
        },
    );
    shown(play.task(name))
}

#[test]
fn results_and_diffs_of_representative_runs() {
    let env = Env::start();
    let converge = CREATE
        .replace("    node: pve1\n", "    update: true\n")
        .replace("memory: 1024", "memory: 2048");
    let runs = [
        ("create, check mode", CREATE.to_string(), true),
        ("create", CREATE.to_string(), false),
        ("create again (no-op)", CREATE.to_string(), false),
        ("converge memory, check mode", converge.clone(), true),
        ("converge memory", converge.clone(), false),
        ("converge again (no-op)", converge, false),
        (
            "disk create",
            "ferrox.proxmox.proxmox_disk: {vmid: 100, disk: scsi1, storage: local-lvm, size: 8}".to_string(),
            false,
        ),
        (
            "nic create, check mode",
            "ferrox.proxmox.proxmox_nic: {vmid: 100, interface: net1, bridge: vmbr1, tag: 20}".to_string(),
            true,
        ),
        (
            "nic create",
            "ferrox.proxmox.proxmox_nic: {vmid: 100, interface: net1, bridge: vmbr1, tag: 20}".to_string(),
            false,
        ),
        (
            "vm_info by name",
            "ferrox.proxmox.proxmox_vm_info: {name: snap-web}".to_string(),
            false,
        ),
    ];
    for (i, (label, task, check)) in runs.iter().enumerate() {
        let result = run(&env, label, task, *check);
        insta::assert_json_snapshot!(
            format!(
                "run_{i:02}_{}",
                label
                    .replace([' ', ',', '(', ')'], "_")
                    .replace("__", "_")
                    .trim_end_matches('_')
            ),
            result
        );
    }
}

/// Bad input per module, straight through the binary (validation needs no cluster).
fn bad_inputs() -> Vec<(&'static str, Value)> {
    let auth = json!({"api_host": "127.0.0.1", "api_port": 1, "api_user": "ansible@pve", "api_token_id": "automation", "api_token_secret": "s3cret"});
    let with = |extra: Value| {
        let mut v = auth.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    vec![
        ("proxmox_kvm", json!({})),
        ("proxmox_kvm", with(json!({"vmid": 100, "numa": true}))),
        ("proxmox_kvm", with(json!({"vmid": "abc"}))),
        ("proxmox_kvm", with(json!({"name": "x", "clone": "a", "update": false}))),
        ("proxmox_kvm", with(json!({"name": "x", "state": "running"}))),
        ("proxmox_kvm", with(json!({"name": "x", "bogus": 1}))),
        ("proxmox_kvm", with(json!({"name": "x", "timeout": 0}))),
        ("proxmox_disk", with(json!({"vmid": 100}))),
        (
            "proxmox_disk",
            with(json!({"vmid": 100, "disk": "scsi1", "state": "resized"})),
        ),
        (
            "proxmox_disk",
            with(json!({"vmid": 100, "disk": "scsi1", "state": "grown"})),
        ),
        ("proxmox_nic", with(json!({"vmid": 100}))),
        (
            "proxmox_nic",
            with(json!({"vmid": 100, "interface": "net1", "tag": "ten"})),
        ),
        (
            "proxmox_nic",
            with(json!({"vmid": 100, "interface": "net1", "model": "rtl"})),
        ),
        ("proxmox_vm_info", with(json!({"type": "vm"}))),
        ("proxmox_vm_info", with(json!({"config": "Current"}))),
    ]
}

#[test]
fn messages_of_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    for (i, (module, args)) in bad_inputs().into_iter().enumerate() {
        let path = dir.path().join(format!("args-{i}.json"));
        let mut full = args.clone();
        full["_ansible_version"] = json!("2.19.14");
        std::fs::write(&path, full.to_string()).unwrap();
        let out = module_command(module).arg(&path).output().expect("run module");
        let result: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{module}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        let shown_args: serde_json::Map<String, Value> = args
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| !k.starts_with("api_"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        lines.push(format!(
            "{module} {}\n  failed: {}\n  msg: {}\n",
            Value::Object(shown_args),
            result["failed"],
            redact_text(result["msg"].as_str().unwrap_or("(no msg)"))
        ));
        assert_eq!(result["failed"], json!(true), "{module} {args}: {result}");
        assert!(!out.stdout.windows(6).any(|w| w == b"s3cret"), "secret in output");
    }
    insta::assert_snapshot!("bad_input_messages", lines.join("\n"));
}
