//! Without `vmid_range`, two runs creating one name at once each get a free id from
//! PVE and both create: nothing PVE makes atomic ties a name to one VM. The race is made
//! visible instead. Once our create has finished, the cluster is looked at again: the
//! listing's vmids are consistent (its names lag), and a VM listed without a name yet
//! has its config read (the cluster file system, consistent) — so of two racers at
//! least the one that finishes last sees the other, and its result warns. The listing
//! that showed the new VM also becomes the run's name index ([`after_create`]).

use ferrox_cluster::vm::{self, Cluster, Guest, GuestType, ListingQuery};
use ferrox_pve_client::client::Client;

use crate::api::Vm;
use crate::step::{Learned, Run};

/// After a create or clone of `vm`: the listing that showed it (`listing`, when the
/// wait ended with one) becomes the run's name index, `vm` under the task's name even
/// when the listing does not name it yet (PVE broadcasts names late), so the next task
/// by that name confirms it with one read instead of listing again. With PVE's next free
/// id (`may_race`), another VM of the task's name, made by a run at the same moment, is
/// warned of.
pub(crate) fn after_create(run: &Run, may_race: bool, vm: &Vm, listing: Option<Cluster>, learned: &mut Learned) {
    let name = run.task.given_name();
    if let Some(listing) = &listing {
        let mut listing = listing.clone();
        if let (Some(name), Some(ours)) = (name, listing.guests.iter_mut().find(|g| g.vmid == vm.vmid)) {
            ours.name.get_or_insert_with(|| name.to_string());
        }
        learned.listed = Some((listing, std::time::Instant::now()));
    }
    let Some(name) = name.filter(|_| may_race && !run.task.check_mode) else {
        return;
    };
    let others = others_named(run.client, listing, name, vm.vmid);
    if !others.is_empty() {
        learned.warnings.push(warning(name, vm.vmid, &others));
    }
}

/// Other QEMU VMs (vmid, node) that carry `name`, besides `ours`, in `listing` (the one
/// our wait ended with; listed again when there is none). Best effort: a read that fails
/// finds nothing.
pub(crate) fn others_named(client: &Client, listing: Option<Cluster>, name: &str, ours: u32) -> Vec<(u32, String)> {
    let Some(listing) = listing.or_else(|| vm::read(client, &ListingQuery::whole_cluster()).ok().map(|l| l.cluster))
    else {
        return Vec::new();
    };
    let mut others: Vec<Guest> = listing
        .guests
        .into_iter()
        .filter(|g| g.kind == GuestType::Qemu && g.vmid != ours)
        .collect();
    // A racer made moments ago is listed without its name yet: its config says.
    vm::name_unbroadcast(client, &mut others, &listing.nodes);
    others
        .into_iter()
        .filter(|g| g.name.as_deref() == Some(name))
        .map(|g| (g.vmid, g.node.to_string()))
        .collect()
}

/// The warning naming both vmids and the way to make runs at once safe.
pub(crate) fn warning(name: &str, ours: u32, others: &[(u32, String)]) -> String {
    let others: Vec<String> = others
        .iter()
        .map(|(id, node)| format!("VM {id} on node {node}"))
        .collect();
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
