//! Finding a guest: by vmid, or by name over QEMU VMs only (an LXC container with the
//! same name is not a match), and the node that owns it, from one
//! `GET /cluster/resources?type=vm`.

use serde_json::Value;

use crate::client::{ApiError, Client};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestType {
    Qemu,
    Lxc,
}

/// One guest as `/cluster/resources` lists it.
#[derive(Debug, Clone)]
pub struct Guest {
    pub vmid: u32,
    pub node: String,
    pub kind: GuestType,
    /// Absent for a freshly created VM until the node's next status broadcast.
    pub name: Option<String>,
    pub status: Option<String>,
    pub template: bool,
    /// The record as PVE sent it.
    pub raw: Value,
}

/// All guests of the cluster.
pub fn list(_client: &Client) -> Result<Vec<Guest>, ApiError> {
    todo!("vm: list")
}

/// The guest with this vmid, of either type.
pub fn by_vmid(guests: &[Guest], vmid: u32) -> Option<&Guest> {
    guests.iter().find(|g| g.vmid == vmid)
}

/// The QEMU VM with this exact name; an error listing the vmids when several match.
pub fn qemu_by_name<'a>(guests: &'a [Guest], name: &str) -> Result<Option<&'a Guest>, String> {
    let matches: Vec<&Guest> = guests
        .iter()
        .filter(|g| g.kind == GuestType::Qemu && g.name.as_deref() == Some(name))
        .collect();
    match matches.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => {
            let ids: Vec<String> = many.iter().map(|g| g.vmid.to_string()).collect();
            Err(format!(
                "Multiple VMs with name {name} found (vmids {}), provide vmid instead",
                ids.join(", ")
            ))
        }
    }
}
