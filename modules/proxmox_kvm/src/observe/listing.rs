//! The cluster as the run's one listing shows it (one `/cluster/resources`, or the run's
//! name index when the task only finds a VM by its name): the guests the task may look
//! up, decoded; every other guest's vmid, name and lock; the nodes; the storages the
//! caller may audit; with `placement`, the nodes' load.

use ferrox_ansible::protocol::{Failure, Module};
use ferrox_cluster::listing_probe::{LookupTargets, OtherGuest};
use ferrox_cluster::load::Load;
use ferrox_cluster::vm::{self, Guest, GuestType, ListingQuery};
use ferrox_pve_client::client::Client;
use ferrox_run::connection::ConnectionParams;
use ferrox_run::name_index;

use crate::api::Vm;
use crate::task::{KvmTask, Operation, State};
use crate::vmid_range;

/// What the run's listing says of the cluster.
pub(crate) struct Listing {
    /// The guests the task may look up (its `vmid`, `newid`, `name`, `clone`), decoded.
    pub(crate) guests: Vec<Guest>,
    /// Every other guest, by vmid, name and lock: which vmids are taken, by which name.
    pub(crate) unsought: Vec<OtherGuest>,
    /// The cluster's node names.
    pub(crate) nodes: Vec<String>,
    /// The storages per node the caller may audit.
    pub(crate) storages: Vec<vm::Storage>,
    /// With `placement` and no `node`: the nodes' capacity and the guests' sizes (taken
    /// by [`crate::placement::place`]).
    pub(crate) load: Option<Load>,
}

/// Lists the cluster once for `task`, decoding only the guests it may look up.
pub(crate) fn read(
    m: &mut Module,
    task: &KvmTask,
    conn: &ConnectionParams,
    client: &Client,
) -> Result<Listing, Failure> {
    let sought = sought(task);
    let by_name = task
        .given_name()
        .filter(|_| sought.only_one_name() && finds_by_name_only(task));
    let mut query = ListingQuery::whole_cluster()
        .only(&sought)
        .with_others_thin()
        .with_name_unbroadcast(task.given_name().is_some() || !task.clone.source.is_empty())
        .with_name_alone(by_name);
    if task.chooses_node() {
        query = query.with_load();
    }
    let vm::Listing { cluster, load } = name_index::read(m, client, conn, &query)
        .map_err(|e| Failure::new(format!("Unable to retrieve list of VMs: {e}")))?;
    Ok(Listing {
        nodes: cluster.node_names(),
        storages: cluster.storages,
        guests: cluster.guests,
        unsought: cluster.unsought,
        load,
    })
}

impl Listing {
    /// Every listed vmid with the name it counts with for [`crate::vmid_range::held_by_other`].
    pub(crate) fn listed(&self) -> impl Iterator<Item = (u32, Option<&str>)> + '_ {
        let decoded = self
            .guests
            .iter()
            .map(|g| (g.vmid, vmid_range::listed_name(g.lock.as_deref(), g.name.as_deref())));
        let others = self
            .unsought
            .iter()
            .map(|u| (u.vmid, vmid_range::listed_name(u.lock.as_deref(), u.name.as_deref())));
        decoded.chain(others)
    }

    /// The name `vmid` is listed with (`None`: not listed; `Some(None)`: listed, counting
    /// without a name).
    pub(crate) fn listed_name(&self, vmid: u32) -> Option<Option<&str>> {
        self.listed().find(|(id, _)| *id == vmid).map(|(_, name)| name)
    }

    /// Records that `vm` carries `name` (the listing may not show it yet: PVE
    /// broadcasts a new VM's name later), so the next lookup by name finds it; `pool`:
    /// the task's (the VM was made by this task or its twin).
    pub(crate) fn learn_name(&mut self, vm: &Vm, name: &str, pool: Option<&String>) {
        match self.guests.iter_mut().find(|g| g.vmid == vm.vmid) {
            Some(g) => {
                g.name = Some(name.to_string());
                g.node = vm.node.as_str().into();
            }
            None => self.guests.push(Guest {
                vmid: vm.vmid,
                node: vm.node.as_str().into(),
                kind: GuestType::Qemu,
                name: Some(name.to_string()),
                status: None,
                template: false,
                lock: None,
                pool: pool.cloned(),
                hastate: None,
            }),
        }
    }
}

/// Whether the task only converges, powers or edits the keys of the VM its name finds,
/// so the run's name index may find it: never a create, a clone, a migration or a removal
/// (they read every guest and node as they are now), nor a pool move (the listing tells
/// the pool).
fn finds_by_name_only(task: &KvmTask) -> bool {
    let acts_on_existing = match &task.operation {
        Operation::State(state) => matches!(
            state,
            State::Present | State::Started | State::Stopped | State::Restarted | State::Current
        ),
        Operation::DeleteKeys(_) | Operation::RevertKeys(_) => true,
        Operation::Clone | Operation::Migrate => false,
    };
    acts_on_existing && task.vmid.is_none() && task.pool.is_none()
}

/// The guests a task may look up by vmid or name: the rest of the listing is read only
/// for which vmids it takes (at thousands of guests, decoding them all costs more than the
/// rest of the task).
fn sought(task: &KvmTask) -> LookupTargets {
    let vmids = [task.vmid, task.clone.newid].into_iter().flatten();
    let names = [
        task.given_name(),
        Some(task.clone.source.as_str()).filter(|s| !s.is_empty()),
    ]
    .into_iter()
    .flatten();
    let sought = vmids.fold(LookupTargets::nothing(), LookupTargets::and_vmid);
    names.fold(sought, LookupTargets::and_name)
}
