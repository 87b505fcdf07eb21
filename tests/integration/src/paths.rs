//! Where the harness finds the repository, the module binaries and ansible-playbook.

use std::path::PathBuf;

/// The collection's modules, each a binary in `plugins/modules/__bin/<platform>/`.
pub const MODULES: [&str; 4] = ["proxmox_kvm", "proxmox_disk", "proxmox_nic", "proxmox_vm_info"];

/// The repository root (it is also the collection root: galaxy.yml, meta/, plugins/).
pub fn repo_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = here.join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The `plugins/modules/__bin/` folder of the machine running the tests (the names the
/// action plugins and `cargo collection build` use).
pub fn host_platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux_x86_64",
        ("linux", "aarch64") => "linux_aarch64",
        ("macos", "aarch64") => "darwin_arm64",
        ("macos", "x86_64") => "darwin_x86_64",
        (os, arch) => panic!("no module binaries are built for {os}/{arch}"),
    }
}

/// `plugins/modules/__bin/<host platform>/<name>`, or a panic saying how to build it.
pub fn module_binary(name: &str) -> PathBuf {
    let path = repo_root()
        .join("plugins/modules/__bin")
        .join(host_platform())
        .join(name);
    if !path.is_file() {
        panic!(
            "module binary {} is missing: run `cargo collection build --debug` before the integration tests",
            path.display()
        );
    }
    path
}

/// The ansible-playbook to run: `FERROX_ANSIBLE_PLAYBOOK`, else `<repo>/.venv/bin/ansible-playbook`.
pub fn ansible_playbook() -> PathBuf {
    let path = std::env::var_os("FERROX_ANSIBLE_PLAYBOOK")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/ansible-playbook"));
    if !path.is_file() {
        panic!(
            "{} not found: run `cargo collection setup` to create the venvs, or set FERROX_ANSIBLE_PLAYBOOK",
            path.display()
        );
    }
    path
}

/// The Python next to an ansible-playbook (its venv's interpreter), for the inventory.
pub fn python_next_to(playbook: &std::path::Path) -> PathBuf {
    let python = playbook.with_file_name("python3");
    if python.exists() {
        python
    } else {
        PathBuf::from("/usr/bin/python3")
    }
}
