//! The linux_aarch64 binary through the real path: real ansible-playbook, a collection
//! installed from the test tarball that ships only that platform, `FERROX_PLATFORM`
//! naming it, the simulator over HTTPS. On any other host the kernel hands the binary to
//! qemu-user through binfmt_misc (`cargo collection setup --cross` registers it), as
//! ansible-core execs it directly.
//!
//! The binary is the release cross build `cargo collection test` makes (`build
//! --all-platforms`) and packs into the test tarball.

use std::path::Path;

use ferrox_integration::{installed_collection, shipped_platforms, Env, PlayOpts, BINARY};

const PLATFORM: &str = "linux_aarch64";

/// Copies the installed test collection into `<env>/aarch64/`, keeping only the
/// linux_aarch64 binary, and makes it the env's ferrox.proxmox (ansible-playbook finds
/// the collections beside the playbook first, whatever ANSIBLE_COLLECTIONS_PATH says).
fn use_aarch64_only_collection(env: &Env) {
    let installed = installed_collection();
    let bin_root = installed.join("plugins/modules/__bin");
    assert!(
        bin_root.join(PLATFORM).join(BINARY).is_file(),
        "the installed test collection has no {PLATFORM} binary: run `cargo collection test` (it runs `setup --cross` and `build --all-platforms`), or those two and `cargo collection install --for-tests`"
    );
    if std::env::consts::ARCH != "aarch64" {
        assert!(
            Path::new("/proc/sys/fs/binfmt_misc/qemu-aarch64").exists(),
            "qemu-aarch64 is not registered with binfmt_misc, so this host cannot run {PLATFORM} binaries: run `cargo collection setup --cross` as root"
        );
    }
    let copy = env.dir().join("aarch64/ferrox.proxmox");
    copy_tree(&installed, &copy, &|rel: &Path| {
        rel.parent() == Some(Path::new("plugins/modules/__bin")) && rel.file_name() != Some(PLATFORM.as_ref())
    });
    let used = env.collections_path().join("ansible_collections/ferrox/proxmox");
    std::fs::remove_file(&used).unwrap_or_else(|e| panic!("{}: {e}", used.display()));
    std::os::unix::fs::symlink(&copy, &used).expect("collection symlink");
}

fn copy_tree(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) {
    fn walk(root: &Path, dir: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) {
        for entry in std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
        {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap();
            if skip(rel) {
                continue;
            }
            let target = to.join(rel);
            if path.is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                walk(root, &path, to, skip);
            } else {
                // std::fs::copy keeps the mode, so the binary stays executable.
                std::fs::copy(&path, &target).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
        }
    }
    std::fs::create_dir_all(to).unwrap();
    walk(from, from, to, skip);
}

fn on(platform: &str, check: bool) -> PlayOpts {
    PlayOpts {
        check,
        env: vec![("FERROX_PLATFORM".into(), platform.into())],
        ..Default::default()
    }
}

/// A VM, its disk and its NIC, by name.
const BUILD: &str = r#"
        - name: create
          ferrox.proxmox.proxmox_kvm: {node: pve1, name: arm1, memory: 512, agent: true, ostype: l26, scsihw: virtio-scsi-single}
        - name: disk
          ferrox.proxmox.proxmox_disk: {name: arm1, disk: scsi0, storage: local-lvm, size: 4, state: present}
        - name: nic
          ferrox.proxmox.proxmox_nic: {name: arm1, interface: net0, bridge: vmbr0}
"#;

#[test]
fn the_aarch64_binary_creates_clones_configures_starts_and_reports() {
    let env = Env::start();
    use_aarch64_only_collection(&env);
    // The installation holds the aarch64 binary alone, so nothing else can run.
    assert_eq!(
        shipped_platforms(&env.collections_path().join("ansible_collections/ferrox/proxmox")),
        [PLATFORM]
    );

    // A dry run first: it plans the whole build against the cluster and writes nothing.
    let dry = env.play_with(BUILD, &on(PLATFORM, true));
    dry.assert_ok();
    assert!(dry.results.iter().all(|t| t.changed), "{}", dry.transcript());
    assert_eq!(
        dry.task("nic").result["known_after_apply"],
        serde_json::json!(["mac"]),
        "{}",
        dry.task("nic").result
    );
    let names: Vec<String> = env
        .api_get("/cluster/resources?type=vm")
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["name"].as_str().map(String::from))
        .collect();
    assert!(
        !names.contains(&"arm1".to_string()),
        "the dry run made nothing: {names:?}"
    );

    let rest = r#"
        - name: clone
          ferrox.proxmox.proxmox_kvm: {clone: base-debian13, name: arm2, node: pve1}
        - name: start
          ferrox.proxmox.proxmox_kvm: {name: arm1, state: started, wait_for_ip: true}
        - name: info
          ferrox.proxmox.proxmox_vm_info: {name: arm1, network: true}
        - name: unknown node
          ferrox.proxmox.proxmox_kvm: {node: pve9, name: arm3, memory: 512}
          ignore_errors: true
        "#;
    let play = env.play_with(&format!("{BUILD}{rest}"), &on(PLATFORM, false));
    let created = play.task("create");
    assert!(created.changed && !created.failed, "{}", play.transcript());
    let vmid = created.result["vmid"].as_u64().expect("a vmid");
    let config = env.api_get(&format!("/nodes/pve1/qemu/{vmid}/config"));
    assert_eq!(config["name"], "arm1");
    assert!(
        config["scsi0"].as_str().is_some_and(|d| d.contains("size=4G")),
        "{config}"
    );

    let mac = play.task("nic").result["mac"].as_str().expect("the MAC").to_string();
    assert!(config["net0"].as_str().unwrap().contains(&mac), "{config}");

    let clone = play.task("clone");
    assert!(clone.changed, "{}", clone.result);
    let clone_config = env.api_get(&format!("/nodes/pve1/qemu/{}/config", clone.result["vmid"]));
    assert_eq!(clone_config["name"], "arm2");

    let started = play.task("start");
    assert!(started.changed, "{}", started.result);
    let address = started.result["ip_address"].as_str().expect("an address").to_string();
    assert_eq!(
        env.api_get(&format!("/nodes/pve1/qemu/{vmid}/status/current"))["status"],
        "running"
    );

    let info = &play.task("info").result["proxmox_vms"][0];
    assert_eq!(
        (info["vmid"].as_u64(), info["status"].as_str()),
        (Some(vmid), Some("running")),
        "{info}"
    );
    assert_eq!(info["ip_addresses"], started.result["ip_addresses"], "{info}");
    assert!(info["ip_addresses"].to_string().contains(&address), "{info}");

    let failed = play.task("unknown node");
    assert!(failed.failed, "{}", failed.result);
    assert!(
        failed.msg().contains("pve9"),
        "the message names the node: {}",
        failed.msg()
    );
}

#[test]
fn a_collection_without_the_targets_binary_names_the_released_platforms() {
    let env = Env::start();
    use_aarch64_only_collection(&env);
    env.clear_requests();
    let play = env.play_with(
        "- name: info\n  ferrox.proxmox.proxmox_vm_info: {vmid: 100}\n  ignore_errors: true\n",
        &on("linux_x86_64", false),
    );
    let info = play.task("info");
    assert!(info.failed, "{}", info.result);
    for needle in [
        "ferrox.proxmox.proxmox_vm_info has no binary for platform linux_x86_64",
        "Platforms shipped in this installation: linux_aarch64.",
        "The released collection ships linux_x86_64, linux_aarch64, darwin_arm64, darwin_x86_64",
        "cargo collection build --all-platforms",
    ] {
        assert!(info.msg().contains(needle), "{needle:?} missing from: {}", info.msg());
    }
    assert_eq!(
        env.requests()["total"],
        0,
        "nothing reached the API: {}",
        env.requests()
    );
}
