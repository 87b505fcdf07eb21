//! Whether local mode can run here: a task without `api_host` talks to Proxmox VE
//! through `pvesh` on the machine it runs on, which must be a Proxmox VE node (pvesh on
//! PATH) and the task root there (pvesh refuses anyone else: `please run as root`,
//! pve-access-control `PVE::RPCEnvironment::init_request`). Checked before anything
//! else, so the task fails saying which is missing and how to fix it rather than with
//! the first call's error.

use std::path::{Path, PathBuf};

pub use ferrox_pve_client::client::local::PVESH;

/// What local mode needs of the machine the task runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The `pvesh` found on PATH.
    pub pvesh: Option<PathBuf>,
    /// The task's effective user id (`None`: unknown, not checked).
    pub uid: Option<u32>,
}

impl Node {
    /// This machine, as the task sees it.
    pub fn probe() -> Node {
        Node {
            pvesh: find_on_path(PVESH, std::env::var_os("PATH").as_deref()),
            uid: effective_uid(),
        }
    }
}

/// `Ok` when local mode can run here, else the message that says what is missing.
pub fn ready(node: &Node) -> Result<(), String> {
    const FIX: &str = "Delegate the task to a Proxmox VE node (delegate_to: one of its nodes), or set api_host (or PROXMOX_HOST) with api_user and api_password or an API token to call the API over HTTPS.";
    if node.pvesh.is_none() {
        return Err(format!(
            "api_host is not set, so the module talks to Proxmox VE through {PVESH} on the machine the task runs on, but there is no {PVESH} on its PATH: this is not a Proxmox VE node. {FIX}"
        ));
    }
    match node.uid {
        Some(uid) if uid != 0 => Err(format!(
            "api_host is not set, so the module talks to Proxmox VE through {PVESH} on this node, which runs only as root, but the task runs as uid {uid}. Run the task as root there (become: true), or set api_host (or PROXMOX_HOST) with api_user and api_password or an API token to call the API over HTTPS."
        )),
        _ => Ok(()),
    }
}

/// This machine's host name, which Proxmox VE takes as the node's name
/// (`PVE::INotify::nodename`: the short host name); empty when unknown.
pub fn node_name() -> String {
    let full = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    full.trim().split('.').next().unwrap_or_default().to_string()
}

/// The first `name` in the directories of `path` that is an executable file.
pub fn find_on_path(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// The effective user id, read as the owner of `/proc/self` (Linux; elsewhere unknown).
fn effective_uid() -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").ok().map(|m| m.uid())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_mode_needs_pvesh_then_root() {
        let pvesh = Some(PathBuf::from("/usr/bin/pvesh"));
        assert_eq!(
            ready(&Node {
                pvesh: pvesh.clone(),
                uid: Some(0)
            }),
            Ok(())
        );
        assert_eq!(
            ready(&Node {
                pvesh: pvesh.clone(),
                uid: None
            }),
            Ok(())
        );
        let not_root = ready(&Node { pvesh, uid: Some(1000) }).unwrap_err();
        assert!(
            not_root.contains("api_host") && not_root.contains("uid 1000") && not_root.contains("become"),
            "{not_root}"
        );
        // Without pvesh that is what is said, root or not.
        for uid in [Some(0), Some(1000), None] {
            let e = ready(&Node { pvesh: None, uid }).unwrap_err();
            assert!(
                e.starts_with("api_host is not set") && e.contains("no pvesh on its PATH") && e.contains("delegate_to"),
                "{e}"
            );
        }
    }

    #[test]
    fn pvesh_is_found_on_path_only_as_an_executable_file() {
        let dir = std::env::temp_dir().join(format!("ferrox-local-mode-{}", std::process::id()));
        let (empty, bin) = (dir.join("empty"), dir.join("bin"));
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::create_dir_all(bin.join("pvesh-dir")).unwrap();
        let path = std::env::join_paths([&empty, &bin]).unwrap();
        assert_eq!(find_on_path("pvesh-dir", Some(&path)), None);
        std::fs::write(bin.join("pvesh"), "#!/bin/sh\n").unwrap();
        assert_eq!(find_on_path("pvesh", Some(&path)), None, "not executable");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(bin.join("pvesh"), std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(find_on_path("pvesh", Some(&path)), Some(bin.join("pvesh")));
        }
        assert_eq!(find_on_path("pvesh", None), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
