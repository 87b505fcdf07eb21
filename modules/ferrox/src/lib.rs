//! Every module of the collection, in the order of `meta/runtime.yml`.
//!
//! The modules share most of their code (the PVE client, TLS, JSON, the plan), so they
//! ship as one binary per platform that runs the module the action plugin names: the
//! tarball carries four platforms in the space four separate binaries took for one.

use ferrox_common::ansible::protocol::Registered;

/// The binary's file name in `plugins/modules/__bin/<platform>/`.
pub const BINARY: &str = "ferrox";

/// `ferrox inventory -`: the inventory plugin's API side (`proxmox_inventory`), not a
/// module: it reads the plugin's options on stdin and prints JSON lines.
pub const INVENTORY: &str = "inventory";

pub const MODULES: [Registered; 5] = [
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
];
