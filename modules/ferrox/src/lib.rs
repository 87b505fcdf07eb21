//! Every module of the collection, in the order of `meta/runtime.yml`.
//!
//! The modules share most of their code (the PVE client, TLS, JSON, the plan), so they
//! ship as one binary per platform that runs the module the action plugin names: the
//! tarball carries four platforms in the space four separate binaries took for one.

use ferrox_ansible::protocol::Registered;

/// The binary's file name in `plugins/modules/__bin/<platform>/`.
pub const BINARY: &str = "ferrox";

/// `ferrox inventory -`: the inventory plugin's API side (`proxmox_inventory`), not a
/// module: it reads the plugin's options on stdin and prints JSON lines.
pub const INVENTORY: &str = "inventory";

/// The modules that look a guest up by `name` through the run's name index (the action
/// plugin hands them the index: `plugins/plugin_utils/_wire.py`); their docs carry
/// the index's note.
pub const NAME_INDEX_MODULES: [&str; 6] = [
    "proxmox_kvm",
    "proxmox_disk",
    "proxmox_nic",
    "proxmox_vm_info",
    "proxmox_snap",
    "proxmox_snap_info",
];

pub const MODULES: [Registered; 11] = [
    Registered {
        name: "proxmox_kvm",
        spec: proxmox_kvm::spec,
        body: proxmox_kvm::run,
    },
    Registered {
        name: "proxmox_disk",
        spec: proxmox_disk::spec,
        body: proxmox_disk::run,
    },
    Registered {
        name: "proxmox_nic",
        spec: proxmox_nic::spec,
        body: proxmox_nic::run,
    },
    Registered {
        name: "proxmox_vm_info",
        spec: proxmox_vm_info::spec,
        body: proxmox_vm_info::run,
    },
    Registered {
        name: "proxmox_template",
        spec: proxmox_template::spec,
        body: proxmox_template::run,
    },
    Registered {
        name: "proxmox_snap",
        spec: proxmox_snap::spec,
        body: proxmox_snap::run,
    },
    Registered {
        name: "proxmox_snap_info",
        spec: proxmox_snap_info::spec,
        body: proxmox_snap_info::run,
    },
    Registered {
        name: "proxmox_user_info",
        spec: proxmox_user_info::spec,
        body: proxmox_user_info::run,
    },
    Registered {
        name: "proxmox_access_acl",
        spec: proxmox_access_acl::spec,
        body: proxmox_access_acl::run,
    },
    Registered {
        name: "proxmox_pool_member",
        spec: proxmox_pool_member::spec,
        body: proxmox_pool_member::run,
    },
    Registered {
        name: "proxmox_pool",
        spec: proxmox_pool::spec,
        body: proxmox_pool::run,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_index_modules_are_those_whose_docs_explain_the_index() {
        let notes = [
            ferrox_run::name_index::doc_note("name"),
            ferrox_run::name_index::doc_note("hostname"),
        ];
        for module in MODULES {
            let spec = (module.spec)();
            let documented = spec.notes.iter().any(|n| notes.contains(n));
            assert_eq!(
                documented,
                NAME_INDEX_MODULES.contains(&module.name),
                "{}: the index note and NAME_INDEX_MODULES disagree",
                module.name
            );
        }
    }
}
