//! The controller-side shim (plugins/action + plugins/plugin_utils/binary_module.py):
//! `ansible-doc -l` sees every module, the binary for the target's platform runs, an
//! unshipped platform fails before any API call, and everything a module task can do
//! (async, become, delegation, local_action, ad-hoc runs, -vvv, no_log) still works.

use std::process::Command;

use ferrox_integration::{
    host_platform, installed_collection, module_binary, module_command, repo_root, shipped_platforms, Env, PlayOpts,
};
use serde_json::{json, Value};

fn venv_tool(venv: &str, tool: &str) -> std::path::PathBuf {
    let path = repo_root().join(venv).join("bin").join(tool);
    assert!(
        path.exists(),
        "{} is missing: run `cargo collection setup`",
        path.display()
    );
    path
}

fn output(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const MODULES: [(&str, &str); 11] = [
    ("proxmox_access_acl", "Manage ACL entries"),
    ("proxmox_disk", "Manage one disk"),
    ("proxmox_kvm", "Management of QEMU/KVM"),
    ("proxmox_nic", "Manage one network interface"),
    ("proxmox_pool", "Pool management"),
    ("proxmox_pool_member", "Add or delete members"),
    ("proxmox_snap", "Take, remove or roll back a snapshot"),
    ("proxmox_snap_info", "List the snapshots"),
    ("proxmox_template", "Management of OS templates"),
    ("proxmox_user_info", "Retrieve information about one or more"),
    ("proxmox_vm_info", "Retrieve information"),
];

#[test]
fn ansible_doc_lists_every_module_on_2_17_and_2_19() {
    let env = Env::start();
    for venv in [".venv", ".venv-2.17"] {
        let doc = || {
            let mut cmd = Command::new(venv_tool(venv, "ansible-doc"));
            cmd.env("ANSIBLE_COLLECTIONS_PATH", env.collections_path())
                .env("ANSIBLE_NOCOLOR", "1");
            cmd
        };
        let (ok, out, err) = output(doc().args(["-l", "ferrox.proxmox"]));
        assert!(ok && !err.contains("WARNING"), "{venv}: ansible-doc -l:\n{out}\n{err}");
        for (m, description) in MODULES {
            let line = out.lines().find(|l| l.starts_with(&format!("ferrox.proxmox.{m} ")));
            assert!(
                line.is_some_and(|l| l.contains(description)),
                "{venv}: {m} not listed:\n{out}"
            );
        }
        assert_eq!(
            out.lines().filter(|l| l.starts_with("ferrox.proxmox.")).count(),
            MODULES.len(),
            "{venv}: only the modules:\n{out}"
        );

        let (ok, out, err) = output(doc().args(["-l", "--json", "ferrox.proxmox"]));
        assert!(ok, "{venv}: ansible-doc -l --json: {err}");
        let listed: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{venv}: not JSON ({e}):\n{out}"));
        let names: Vec<&String> = listed.as_object().expect("an object").keys().collect();
        assert_eq!(
            names,
            MODULES
                .iter()
                .map(|(m, _)| format!("ferrox.proxmox.{m}"))
                .collect::<Vec<_>>()
                .iter()
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn an_unshipped_platform_fails_before_any_api_call_and_names_the_ways_out() {
    let env = Env::start();
    env.clear_requests();
    let opts = PlayOpts {
        env: vec![("FERROX_PLATFORM".into(), "freebsd_amd64".into())],
        ..Default::default()
    };
    let play = env.play_with(
        r#"
        - name: by environment
          ferrox.proxmox.proxmox_kvm: {node: pve1, name: never-created, memory: 512}
          ignore_errors: true
        - name: by variable
          ferrox.proxmox.proxmox_vm_info: {}
          vars: {ferrox_platform: linux_riscv64}
          ignore_errors: true
        "#,
        &opts,
    );
    let by_env = play.task("by environment");
    assert!(by_env.failed, "{}", by_env.result);
    let msg = by_env.msg();
    for needle in [
        "ferrox.proxmox.proxmox_kvm has no binary for platform freebsd_amd64",
        "FERROX_PLATFORM",
        &format!(
            "Platforms shipped in this installation: {}",
            shipped_platforms(&installed_collection()).join(", ")
        ),
        "cargo collection build",
        "delegate_to",
    ] {
        assert!(msg.contains(needle), "{needle:?} missing from: {msg}");
    }
    assert!(!msg.contains("Exec format error"));
    let by_var = play.task("by variable");
    assert!(
        by_var.failed
            && by_var
                .msg()
                .contains("platform linux_riscv64 of localhost, the task's host (from the variable ferrox_platform)"),
        "{}",
        by_var.result
    );
    assert_eq!(
        env.requests()["total"],
        0,
        "nothing may reach the API: {}",
        env.requests()
    );
}

#[test]
fn async_become_delegation_local_action_and_no_log_run_the_binary() {
    let env = Env::start();
    let play = env.play(
        r#"
        - name: async polled
          ferrox.proxmox.proxmox_vm_info: {vmid: 100}
          async: 60
          poll: 1
          register: polled
        - name: async fire and forget
          ferrox.proxmox.proxmox_vm_info: {vmid: 100}
          async: 60
          poll: 0
          register: job
        - name: async status
          ansible.builtin.async_status: {jid: "{{ job.ansible_job_id }}"}
          register: status
          until: status.finished
          retries: 60
          delay: 1
        - name: become
          ferrox.proxmox.proxmox_vm_info: {vmid: 100}
          become: true
          become_method: ansible.builtin.su
        - name: delegated
          ferrox.proxmox.proxmox_vm_info: {vmid: 100}
          delegate_to: localhost
        - name: local_action
          local_action:
            module: ferrox.proxmox.proxmox_vm_info
            vmid: 100
        - name: check mode and diff
          ferrox.proxmox.proxmox_nic: {vmid: 100, interface: net5, model: virtio, bridge: vmbr0}
          check_mode: true
          diff: true
        - name: no_log
          ferrox.proxmox.proxmox_vm_info: {vmid: 100}
          no_log: true
        - name: unknown option
          ferrox.proxmox.proxmox_vm_info: {vmid: 100, bogus: 1}
          ignore_errors: true
        "#,
    );
    for name in ["async polled", "async status", "become", "delegated", "local_action"] {
        let t = play.task(name);
        assert!(!t.failed && !t.changed, "{name}: {}", t.result);
        assert_eq!(t.result["proxmox_vms"][0]["name"], "web01", "{name}: {}", t.result);
    }
    let dry = play.task("check mode and diff");
    assert!(dry.changed && !dry.failed, "{}", dry.result);
    assert!(
        dry.result["diff"].is_object() || dry.result["diff"].is_array(),
        "{}",
        dry.result
    );
    assert!(
        env.api_get("/nodes/pve1/qemu/100/config").get("net5").is_none(),
        "check mode wrote"
    );
    let hidden = play.task("no_log");
    assert!(hidden.result.get("proxmox_vms").is_none(), "{}", hidden.result);
    assert_eq!(
        play.task("unknown option").msg().split(':').next(),
        Some("Unsupported parameters for (ferrox.proxmox.proxmox_vm_info) module"),
        "the message names the module as the task wrote it, not its __bin path"
    );
}

#[test]
fn a_remote_connection_detects_the_platform_with_uname() {
    let env = Env::start();
    let opts = PlayOpts {
        verbosity: 3,
        vars: json!({"ansible_connection": "ferrox_remote_like"}),
        env: vec![(
            "ANSIBLE_CONNECTION_PLUGINS".into(),
            repo_root()
                .join("tests/integration/connection_plugins")
                .display()
                .to_string(),
        )],
        ..Default::default()
    };
    let play = env.play_with("- name: info\n  ferrox.proxmox.proxmox_vm_info: {vmid: 100}\n", &opts);
    play.assert_ok();
    assert_eq!(play.task("info").result["proxmox_vms"][0]["vmid"], 100);
    assert!(
        play.stdout.contains("uname -sm"),
        "no uname round trip:\n{}",
        play.stdout
    );
    let used = format!("plugins/modules/__bin/{}/ferrox", host_platform());
    assert!(
        play.stdout.contains(&used),
        "-vvv names the binary used ({used}):\n{}",
        play.stdout
    );
}

#[test]
fn ad_hoc_ansible_m_runs_the_module() {
    let env = Env::start();
    let mut args = env.auth();
    args["vmid"] = json!(100);
    let (ok, out, err) = output(
        Command::new(venv_tool(".venv", "ansible"))
            .args(["localhost", "-i"])
            .arg(env.dir().join("inventory"))
            .args(["-m", "ferrox.proxmox.proxmox_vm_info", "-a"])
            .arg(args.to_string())
            .env("ANSIBLE_CONFIG", env.dir().join("ansible.cfg"))
            .env("ANSIBLE_COLLECTIONS_PATH", env.collections_path())
            .env("ANSIBLE_PYTHON_INTERPRETER", venv_tool(".venv", "python3"))
            .env("ANSIBLE_NOCOLOR", "1"),
    );
    assert!(ok, "ansible -m failed:\n{out}\n{err}");
    let json_start = out.find('{').unwrap_or_else(|| panic!("no result:\n{out}"));
    let result: Value = serde_json::from_str(&out[json_start..]).unwrap_or_else(|e| panic!("{e}:\n{out}"));
    assert_eq!(result["proxmox_vms"][0]["name"], "web01", "{out}");
}

#[test]
fn the_binary_still_runs_by_hand_with_an_args_file() {
    let env = Env::start();
    let mut args = env.auth();
    args["vmid"] = json!(100);
    let file = env.dir().join("args.json");
    std::fs::write(&file, args.to_string()).unwrap();
    let (_, out, err) = output(module_command("proxmox_vm_info").arg(&file));
    let result: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!(result["proxmox_vms"][0]["name"], "web01", "{result}");
}

#[test]
fn ansible_core_2_17_runs_async_delegated_check_mode_tasks() {
    let env = Env::start();
    let opts = PlayOpts {
        ansible: Some(venv_tool(".venv-2.17", "ansible-playbook")),
        check: true,
        ..Default::default()
    };
    let play = env.play_with(
        r#"
        - name: async
          ferrox.proxmox.proxmox_vm_info: {vmid: 100}
          async: 60
          poll: 1
        - name: delegated dry run
          ferrox.proxmox.proxmox_kvm: {node: pve1, name: web01, cores: 8, update: true}
          delegate_to: localhost
        "#,
        &opts,
    );
    play.assert_ok();
    assert_eq!(play.task("async").result["proxmox_vms"][0]["name"], "web01");
    assert!(
        play.task("delegated dry run").changed,
        "{}",
        play.task("delegated dry run").result
    );
    assert_ne!(
        env.api_get("/nodes/pve1/qemu/100/config")["cores"],
        8,
        "check mode wrote"
    );
}

/// The env's collection replaced by the installed one linked file by file, with
/// binary_module.py's protocol version replaced by `version`: a shim of another build
/// than its binary.
fn use_shim_version(env: &Env, version: u64) {
    use std::os::unix::fs::symlink;
    let installed = installed_collection();
    let ours = env.collections_path().join("ansible_collections/ferrox/proxmox");
    std::fs::remove_file(&ours).expect("the env links the installed collection");
    let link_all_but = |from: &std::path::Path, to: &std::path::Path, except: &str| {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name() != except {
                symlink(entry.path(), to.join(entry.file_name())).unwrap();
            }
        }
    };
    link_all_but(&installed, &ours, "plugins");
    link_all_but(&installed.join("plugins"), &ours.join("plugins"), "plugin_utils");
    link_all_but(
        &installed.join("plugins/plugin_utils"),
        &ours.join("plugins/plugin_utils"),
        "binary_module.py",
    );
    let shim = std::fs::read_to_string(installed.join("plugins/plugin_utils/binary_module.py")).unwrap();
    let line = shim
        .lines()
        .find(|l| l.starts_with("PROTOCOL_VERSION = "))
        .expect("the shim names its protocol version")
        .to_string();
    std::fs::write(
        ours.join("plugins/plugin_utils/binary_module.py"),
        shim.replace(&line, &format!("PROTOCOL_VERSION = {version}")),
    )
    .unwrap();
}

#[test]
fn a_shim_and_a_binary_of_different_builds_fail_naming_both_versions_and_the_rebuild() {
    let env = Env::start();
    use_shim_version(&env, 99);
    env.clear_requests();
    let play = env.play("- name: info\n  ferrox.proxmox.proxmox_vm_info: {vmid: 100}\n  ignore_errors: true\n");
    let t = play.task("info");
    assert!(t.failed, "{}", play.transcript());
    for needle in [
        "action plugin speaks module protocol 99",
        "its module binary speaks 1",
        "cargo collection build",
    ] {
        assert!(t.msg().contains(needle), "{needle:?} missing from: {}", t.msg());
    }
    assert_eq!(env.requests()["total"], 0, "nothing reaches the API");

    // A shim older than protocol versions: the binary as ansible-core runs it, no version.
    let mut args = env.auth();
    args["vmid"] = json!(100);
    args["_ferrox_module"] = json!("proxmox_vm_info");
    let file = env.dir().join("args-unversioned.json");
    std::fs::write(&file, args.to_string()).unwrap();
    let (_, out, err) = output(Command::new(module_binary()).arg(&file));
    let result: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let msg = result["msg"].as_str().unwrap();
    assert!(
        result["failed"] == json!(true)
            && msg.contains("speaks module protocol none")
            && msg.contains("cargo collection build"),
        "{result}"
    );
}
