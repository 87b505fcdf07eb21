//! The collection's modules and their declarations.

use ferrox_common::options::ModuleSpec;

/// Every module of the collection, in the order of `meta/runtime.yml`.
pub const MODULES: [(&str, fn() -> ModuleSpec); 4] = [
    ("proxmox_kvm", proxmox_kvm::spec),
    ("proxmox_disk", proxmox_disk::spec),
    ("proxmox_nic", proxmox_nic::spec),
    ("proxmox_vm_info", proxmox_vm_info::spec),
];

pub fn names() -> impl Iterator<Item = &'static str> {
    MODULES.iter().map(|(name, _)| *name)
}

pub fn spec_of(name: &str) -> Option<ModuleSpec> {
    MODULES.iter().find(|(n, _)| *n == name).map(|(_, spec)| spec())
}
