//! The `ferrox.proxmox.proxmox_nic` module (being written).

use ferrox_common::options::{ModuleSpec, Rules, Support};
use ferrox_common::protocol::{Failure, Module, Output};
use ferrox_common::connection;

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_nic",
        short_description: "(being written)",
        description: vec![],
        version_added: "0.1.0",
        options: connection::options(),
        rules: Rules::default().merge(connection::rules()),
        check_mode: (Support::Full, ""),
        diff_mode: (Support::Full, ""),
        notes: vec![],
        seealso: vec![],
        examples: "",
        returns: "",
    }
}

pub fn run(_m: &mut Module) -> Result<Output, Failure> {
    Err(Failure::new("proxmox_nic is not implemented yet"))
}
