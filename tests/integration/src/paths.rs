//! Where the harness finds the repository, the module binaries and ansible-playbook.

use std::path::PathBuf;

/// The collection's modules, each a binary in `plugins/modules/`.
pub const MODULES: [&str; 4] = ["proxmox_kvm", "proxmox_disk", "proxmox_nic", "proxmox_vm_info"];

/// The repository root (it is also the collection root: galaxy.yml, meta/, plugins/).
pub fn repo_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = here.join("../..");
    root.canonicalize().unwrap_or(root)
}

/// `plugins/modules/<name>`, or a panic saying how to build it.
pub fn module_binary(name: &str) -> PathBuf {
    let path = repo_root().join("plugins/modules").join(name);
    if !path.is_file() {
        panic!(
            "module binary {} is missing: run `cargo collection build --debug` (or copy target/debug/{name} there) before the integration tests",
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
