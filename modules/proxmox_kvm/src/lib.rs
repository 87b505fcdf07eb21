//! The `ferrox.proxmox.proxmox_kvm` module: QEMU/KVM virtual machines.
//!
//! Shape: declare the options ([`options`]), turn the task into wanted config keys
//! ([`wanted`]), compare with the live VM ([`converge`]), plan the actions, execute
//! them unless in check mode, report.

pub mod converge;
pub mod docs;
pub mod options;
pub mod props;
pub mod wanted;

use ferrox_common::options::{ModuleSpec, Support};
use ferrox_common::protocol::{Failure, Module, Output};

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_kvm",
        short_description: docs::SHORT,
        description: docs::description(),
        version_added: "0.1.0",
        options: options::all(),
        rules: options::rules(),
        check_mode: (Support::Full, "Reads the live cluster and reports exactly the actions a real run would take, writing nothing."),
        diff_mode: (Support::Full, "Before and after of the config keys (or power state) that change; secrets masked."),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_disk", "ferrox.proxmox.proxmox_nic", "ferrox.proxmox.proxmox_vm_info"],
        examples: docs::EXAMPLES,
        returns: docs::RETURNS,
    }
}

pub fn run(_m: &mut Module) -> Result<Output, Failure> {
    Err(Failure::new("proxmox_kvm is not implemented yet"))
}
