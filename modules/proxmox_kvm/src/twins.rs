//! Without `vmid_range`, two runs creating one name at once each get a free id from
//! PVE and both create: nothing PVE makes atomic ties a name to one VM. The race is made
//! visible instead. Once our create has finished, the cluster is looked at again: the
//! listing's vmids are consistent (its names lag), and a VM listed without a name yet
//! has its config read (the cluster file system, consistent) — so of two racers at
//! least the one that finishes last sees the other, and its result warns.

use ferrox_common::api::client::Client;
use ferrox_common::cluster::vm::{self, GuestType};
use serde_json::Value;

/// Other QEMU VMs (vmid, node) that carry `name`, besides `ours`. Best effort: a read
/// that fails finds nothing.
pub fn others_named(client: &Client, name: &str, ours: u32) -> Vec<(u32, String)> {
    let Ok(cluster) = vm::cluster(client) else {
        return Vec::new();
    };
    let online = |node: &str| cluster.nodes.iter().any(|n| n.name == node && n.status == "online");
    let mut found = Vec::new();
    for g in cluster.guests.iter().filter(|g| g.kind == GuestType::Qemu && g.vmid != ours) {
        let named = match g.name.as_deref() {
            Some(n) => n == name,
            // Not broadcast yet: created moments ago. Its config says.
            None if online(&g.node) => client
                .get(&format!("/nodes/{}/qemu/{}/config", g.node, g.vmid), &[])
                .is_ok_and(|c| c.get("name").and_then(Value::as_str) == Some(name)),
            None => false,
        };
        if named {
            found.push((g.vmid, g.node.to_string()));
        }
    }
    found
}

/// The warning naming both vmids and the way to make runs at once safe.
pub fn warning(name: &str, ours: u32, others: &[(u32, String)]) -> String {
    let others: Vec<String> = others.iter().map(|(id, node)| format!("VM {id} on node {node}")).collect();
    format!(
        "VM {name} was created as vmid {ours}, but {} carries the same name too: another run created it at the same time. A task by name now fails until one is removed (it lists both). Set vmid_range so that runs at once derive the same vmid from the name and PVE creates it only once.",
        others.join(" and ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_names_both_vmids_and_vmid_range() {
        assert_eq!(
            warning("dbl01", 110, &[(103, "pve1".into())]),
            "VM dbl01 was created as vmid 110, but VM 103 on node pve1 carries the same name too: another run created it at the same time. A task by name now fails until one is removed (it lists both). Set vmid_range so that runs at once derive the same vmid from the name and PVE creates it only once."
        );
    }
}
