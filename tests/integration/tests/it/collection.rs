//! The collection as users get it: the installed galaxy tarball holds what it should and runs, ansible-doc
//! reads the docs stubs, the docs are current, and the oldest supported
//! ansible-core (2.17) runs the modules too.

use std::process::Command;

use ferrox_integration::{host_platform, installed_collection, repo_root, Env, PlayOpts};

fn venv_tool(venv: &str, tool: &str) -> std::path::PathBuf {
    let path = repo_root().join(venv).join("bin").join(tool);
    assert!(
        path.exists(),
        "{} is missing: run `cargo collection setup`",
        path.display()
    );
    path
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every end-to-end test runs this installed tarball (see `installed_collection`); here
/// its content: the collection and nothing of the build.
#[test]
fn the_installed_tarball_holds_the_collection_only_and_runs() {
    let installed = installed_collection();
    let binary = format!("plugins/modules/__bin/{}/ferrox", host_platform());
    let stubs = [
        "plugins/modules/proxmox_vm_info.py",
        "plugins/action/proxmox_vm_info.py",
        "plugins/plugin_utils/binary_module.py",
        "plugins/inventory/proxmox.py",
    ];
    for wanted in [
        "MANIFEST.json",
        "FILES.json",
        "meta/runtime.yml",
        "README.md",
        "COPYING",
        &binary,
    ]
    .into_iter()
    .chain(stubs)
    {
        assert!(installed.join(wanted).is_file(), "{wanted} missing from the tarball");
    }
    for unwanted in [
        "Cargo.toml",
        "Cargo.lock",
        "common",
        "modules",
        "collection",
        "tests/pvesim",
        "tests/integration",
        ".venv",
        "target",
        ".cargo",
        ".ci",
        ".config",
        ".gitignore",
    ] {
        assert!(!installed.join(unwanted).exists(), "{unwanted} must not ship");
    }
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(installed.join(&binary)).unwrap().permissions());
    assert_eq!(mode & 0o111, 0o111, "the installed binary must stay executable");

    let env = Env::start();
    let play = env.play("- name: info\n  ferrox.proxmox.proxmox_vm_info: {vmid: 100}\n");
    play.assert_ok();
    assert_eq!(play.task("info").result["proxmox_vms"][0]["name"], "web01");
}

#[test]
fn ansible_doc_shows_the_declared_options() {
    let env = Env::start();
    let out = run(Command::new(venv_tool(".venv", "ansible-doc"))
        .arg("ferrox.proxmox.proxmox_vm_info")
        .env("ANSIBLE_COLLECTIONS_PATH", env.collections_path())
        .env("ANSIBLE_NOCOLOR", "1")
        .env("PAGER", "cat"));
    for word in [
        "api_cert_fingerprint",
        "api_token_secret",
        "validate_certs",
        "network",
        "config",
        "vmid",
        "proxmox_vms",
        "EXAMPLES",
    ] {
        assert!(out.contains(word), "ansible-doc lacks {word}:\n{out}");
    }
}

/// The stubs carry the argument spec for linters; run as the module itself (by Python,
/// instead of the action plugin running the binary), a stub fails and says why.
#[test]
fn a_stub_run_as_the_module_fails_saying_so() {
    let dir = tempfile_dir();
    let args = dir.join("args.json");
    std::fs::write(&args, r#"{"ANSIBLE_MODULE_ARGS": {"name": "web01"}}"#).unwrap();
    let stub = installed_collection().join("plugins/modules/proxmox_kvm.py");
    let out = Command::new(venv_tool(".venv", "python3"))
        .arg(&stub)
        .arg(&args)
        .output()
        .unwrap();
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(result["failed"], true, "{result}");
    let msg = result["msg"].as_str().unwrap();
    assert!(
        msg.contains("holds only the documentation and argument spec of ferrox.proxmox.proxmox_kvm"),
        "{msg}"
    );
    assert!(
        msg.contains("the module is a binary, run by the action plugin"),
        "{msg}"
    );
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ferrox-stub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn ansible_core_2_17_runs_the_module() {
    let env = Env::start();
    let opts = PlayOpts {
        ansible: Some(venv_tool(".venv-2.17", "ansible-playbook")),
        ..Default::default()
    };
    let play = env.play_with(
        "- name: info\n  ferrox.proxmox.proxmox_vm_info: {type: qemu}\n- name: bad\n  ferrox.proxmox.proxmox_vm_info: {type: vm}\n  ignore_errors: true\n",
        &opts,
    );
    let info = play.task("info");
    assert!(!info.failed && !info.changed, "{}", info.result);
    assert_eq!(info.result["proxmox_vms"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        play.task("bad").msg(),
        "value of type must be one of: all, qemu, lxc, got: vm"
    );
}
