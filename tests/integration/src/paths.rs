//! Where the harness finds the repository, the module binaries and ansible-playbook.

use std::path::PathBuf;

/// The collection's modules, all in one binary per platform, `plugins/modules/__bin/<platform>/ferrox`.
pub const MODULES: [&str; 11] = [
    "proxmox_kvm",
    "proxmox_disk",
    "proxmox_nic",
    "proxmox_vm_info",
    "proxmox_template",
    "proxmox_snap",
    "proxmox_snap_info",
    "proxmox_user_info",
    "proxmox_access_acl",
    "proxmox_pool_member",
    "proxmox_pool",
];

/// The module binary's file name.
pub const BINARY: &str = "ferrox";

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

/// `plugins/modules/__bin/<host platform>/ferrox`, or a panic saying how to build it.
pub fn module_binary() -> PathBuf {
    let path = repo_root()
        .join("plugins/modules/__bin")
        .join(host_platform())
        .join(BINARY);
    if !path.is_file() {
        panic!(
            "module binary {} is missing: run `cargo collection build --debug` before the integration tests",
            path.display()
        );
    }
    path
}

/// The module binary, run by hand for `module` (`ferrox MODULE ARGS_FILE`): add the args file.
pub fn module_command(module: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(module_binary());
    cmd.arg(module);
    cmd
}

/// The platforms a collection (its `ansible_collections/ferrox/proxmox` root) ships a
/// binary for, sorted as the action plugin lists them.
pub fn shipped_platforms(collection: &std::path::Path) -> Vec<String> {
    let bin_root = collection.join("plugins/modules/__bin");
    let mut names: Vec<String> = std::fs::read_dir(&bin_root)
        .unwrap_or_else(|e| panic!("{}: {e}", bin_root.display()))
        .flatten()
        .filter(|e| e.path().join(BINARY).is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The collection the end-to-end tests run: the tarball installed into
/// `build/test-collections` by `cargo collection test` (or `cargo collection install
/// --for-tests`), checked once per test process against the tree it was built from
/// (same content; binaries: same size and not older), so a test never runs a stale
/// build. Returns the `ansible_collections/ferrox/proxmox` directory.
pub fn installed_collection() -> PathBuf {
    static CHECKED: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    CHECKED
        .get_or_init(check_installed)
        .clone()
        .unwrap_or_else(|why| panic!("{why}"))
}

fn check_installed() -> Result<PathBuf, String> {
    let installed = repo_root().join("build/test-collections/ansible_collections/ferrox/proxmox");
    let fix = "run `cargo collection test` (or, after `cargo collection build --debug`, `cargo collection install --for-tests`) before the end-to-end tests";
    let mut sources = vec![repo_root().join("meta/runtime.yml")];
    collect_files(&repo_root().join("plugins"), &mut sources);
    let binary = module_binary();
    if !sources.contains(&binary) {
        sources.push(binary);
    }
    for source in sources {
        let rel = source.strip_prefix(repo_root()).expect("inside the repository");
        let copy = installed.join(rel);
        let (Ok(src), Ok(dst)) = (std::fs::metadata(&source), std::fs::metadata(&copy)) else {
            return Err(format!(
                "{} is not installed in {}: {fix}",
                rel.display(),
                installed.display()
            ));
        };
        // Small files (docs stubs, plugins) by content, so a rebase that rewrites them
        // unchanged does not count; binaries (git-ignored, never rewritten by git) by
        // size and time.
        let stale = if src.len() != dst.len() {
            true
        } else if src.len() < 1 << 20 {
            std::fs::read(&source).ok() != std::fs::read(&copy).ok()
        } else {
            matches!((src.modified(), dst.modified()), (Ok(s), Ok(d)) if s > d)
        };
        if stale {
            return Err(format!(
                "the installed {} is older than the tree's: {fix}",
                rel.display()
            ));
        }
    }
    Ok(installed)
}

fn collect_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == "__pycache__" || name.ends_with(".new") {
            continue;
        }
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
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
