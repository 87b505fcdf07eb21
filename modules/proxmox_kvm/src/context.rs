//! What every part of a run shares: the task, the client, the cluster listing read
//! once at the start (one unfiltered `/cluster/resources`: guests and nodes), and the
//! executor settings.

use std::time::Duration;

use ferrox_common::ansible::protocol::{Failure, Module};
use ferrox_common::api::client::Client;
use ferrox_common::cluster::listing_probe::{LookupTargets, OtherGuest};
use ferrox_common::cluster::load::Load;
use ferrox_common::cluster::vm::{self, Guest, GuestType, ListingQuery};
use ferrox_common::pve::privileges::{Gate, Target};
use ferrox_common::pve::tags::TagCase;
use ferrox_common::run::connection::ConnectionParams;
use ferrox_common::run::name_index;
use ferrox_common::run::vm_task::{self, Effects, InfoWording, Lookup};
use serde_json::Value;

use crate::api::{self, Vm};
use crate::execute::{Executor, Outcome};
use crate::plan::effects::{self, Known};
use crate::plan::Plan;
use crate::task::{KvmTask, Operation, State};
use crate::vmid_range;

/// The smallest wait for creating, cloning, restoring, converting and removing.
pub const LONG_TASK_SECS: u64 = 300;

pub struct Ctx<'a> {
    pub task: &'a KvmTask,
    pub client: &'a Client,
    /// The guests the task may look up (its `vmid`, `newid`, `name`, `clone`), decoded.
    pub guests: Vec<Guest>,
    /// Every other guest, by vmid, name and lock: which vmids are taken, by which name.
    pub unsought: Vec<OtherGuest>,
    /// The cluster's node names, from the same listing.
    pub nodes: Vec<String>,
    /// The storages per node the caller may audit, from the same listing.
    pub storages: Vec<vm::Storage>,
    pub check_mode: bool,
    pub warnings: Vec<String>,
    /// What the flow knew when planning, for the effects of a check-mode run.
    pub known: Known,
    /// The effects a check-mode run would have (for the playbook run's plan).
    pub effects: Effects,
    /// What PVE will refuse, known before the first write (one call, fetched when needed).
    pub gate: Gate<'a>,
    /// How the cluster compares tags (its `tag-style`, read when a comparison needs it).
    pub tag_case: TagCase<'a>,
    /// Which of the run's name indexes is this connection's ([`name_index::cluster_key`]).
    pub index_key: String,
    /// A listing made after the start (a create's or clone's, showing the new VM) as the
    /// run's name index, for the module to return ([`Ctx::index_listing`]).
    pub listed: Option<(Value, std::time::Instant)>,
    /// With `placement` and no `node`: the nodes' capacity and the guests' sizes from the
    /// same listing (taken by [`crate::placement::place`]).
    pub load: Option<Load>,
    /// The node placement chose, and why (a VM this task creates).
    pub placement: Option<crate::placement::Placed>,
}

impl<'a> Ctx<'a> {
    pub fn new(
        m: &mut Module,
        task: &'a KvmTask,
        conn: &ConnectionParams,
        client: &'a Client,
    ) -> Result<Ctx<'a>, Failure> {
        let sought = sought(task);
        let placing = crate::placement::wanted(task);
        let by_name = task
            .given_name()
            .filter(|_| sought.only_one_name() && finds_by_name_only(task));
        let mut query = ListingQuery::whole_cluster()
            .only(&sought)
            .with_others_thin()
            .with_name_unbroadcast(task.given_name().is_some() || !task.clone.source.is_empty())
            .with_name_alone(by_name);
        if placing {
            query = query.with_load();
        }
        let vm::Listing { cluster, load } = name_index::read(m, client, conn, &query)
            .map_err(|e| Failure::new(format!("Unable to retrieve list of VMs: {e}")))?;
        let check_mode = m.check_mode;
        Ok(Ctx {
            task,
            client,
            nodes: cluster.node_names(),
            storages: cluster.storages,
            guests: cluster.guests,
            unsought: cluster.unsought,
            check_mode,
            warnings: Vec::new(),
            known: Known::default(),
            effects: Effects::default(),
            gate: Gate::new(client, conn),
            tag_case: TagCase::of_cluster(client),
            index_key: name_index::cluster_key(conn),
            listed: None,
            load,
            placement: None,
        })
    }

    /// Keeps `listing` (made now, showing `vm`) for the run's name index, `vm` under
    /// `name` even when the listing does not name it yet (PVE broadcasts names late): the
    /// next task by that name confirms it with one read instead of listing again.
    pub fn index_listing(&mut self, listing: &vm::Cluster, vm: u32, name: Option<&str>) {
        let mut listing = listing.clone();
        if let (Some(name), Some(ours)) = (name, listing.guests.iter_mut().find(|g| g.vmid == vm)) {
            ours.name.get_or_insert_with(|| name.to_string());
        }
        self.listed = Some((
            name_index::refreshed(&self.index_key, &listing),
            std::time::Instant::now(),
        ));
    }

    pub fn timeout(&self) -> u64 {
        self.task.timeout.as_secs()
    }

    /// The VM the task names: by `vmid`, else by `name` (QEMU VMs only; when several
    /// share the name, the one on `node`, except for `migrate`, whose `node` is the
    /// destination).
    pub fn target(&self) -> Result<Option<Guest>, Failure> {
        let prefer_node = self
            .task
            .node
            .as_deref()
            .filter(|_| self.task.operation != Operation::Migrate);
        self.locate(&Lookup {
            vmid: self.task.vmid,
            name: self.task.name.as_deref(),
            prefer_node,
        })
    }

    /// The VM the task names, which must exist (`delete`, `revert`, `migrate`).
    pub fn existing_target(&self) -> Result<Guest, Failure> {
        self.target()?.ok_or_else(|| match self.task.vmid {
            Some(id) => Failure::new(format!("VM with vmid {id} does not exist in cluster")).with("vmid", id),
            None => Failure::new(format!(
                "VM with name = {} does not exist in cluster",
                self.task.name.as_deref().unwrap_or_default()
            )),
        })
    }

    /// The guest `lookup` names ([`vm_task::locate`]); a vmid of a container is refused.
    pub fn locate(&self, lookup: &Lookup) -> Result<Option<Guest>, Failure> {
        match vm_task::locate(self.client, &self.guests, lookup)? {
            Some(g) if g.kind == GuestType::Lxc => Err(Failure::new(format!(
                "vmid {} belongs to a container (LXC) on node {}, not a QEMU VM; choose another vmid",
                g.vmid, g.node
            ))
            .with("vmid", g.vmid)),
            other => Ok(other.cloned()),
        }
    }

    pub fn qemu_by_vmid(&self, id: u32) -> Result<Option<Guest>, Failure> {
        self.locate(&Lookup {
            vmid: Some(id),
            ..Lookup::default()
        })
    }

    /// The QEMU VM with this name; when several have it, the one on `node` (if given).
    pub fn qemu_named(&self, name: Option<&str>, node: Option<&str>) -> Result<Option<Guest>, Failure> {
        self.locate(&Lookup {
            vmid: None,
            name,
            prefer_node: node,
        })
    }

    /// Records that `vm` carries `name` (the listing may not show it yet: PVE
    /// broadcasts a new VM's name later), so the next lookup by name finds it.
    pub fn learn_name(&mut self, vm: &Vm, name: &str) {
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
                // Made by this task (or its twin), so in the task's pool.
                pool: self.task.pool.clone(),
            }),
        }
    }

    /// Every listed vmid with the name it counts with for [`crate::vmid_range::held_by_other`].
    pub fn listed(&self) -> impl Iterator<Item = (u32, Option<&str>)> + '_ {
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
    pub fn listed_name(&self, vmid: u32) -> Option<Option<&str>> {
        self.listed().find(|(id, _)| *id == vmid).map(|(_, name)| name)
    }

    /// The name for messages: the task's, else the VM's.
    pub fn name_of(&self, guest: Option<&Guest>) -> String {
        self.task
            .name
            .clone()
            .or_else(|| guest.and_then(|g| g.name.clone()))
            .unwrap_or_default()
    }

    pub fn executor(&self, name: String) -> Executor<'a> {
        Executor {
            client: self.client,
            check_mode: self.check_mode,
            timeout: Duration::from_secs(self.timeout()),
            long_timeout: Duration::from_secs(self.timeout().max(LONG_TASK_SECS)),
            name,
            skiplock: self.task.skiplock,
            listed: self
                .listed()
                .map(|(vmid, name)| (vmid, name.map(str::to_string)))
                .collect(),
            tag_case: self.tag_case.clone(),
            outcome: Outcome::default(),
        }
    }

    /// Runs the plan (unless in check mode) and returns what it found out; the
    /// `actions` list goes on the result either way.
    pub fn execute(&mut self, plan: &mut Plan, name: String) -> Result<Outcome, Failure> {
        // Whether PVE will allow all of it: a plan it would refuse fails before any write.
        let writes = crate::plan::privileges::of(plan, &self.known);
        let planned = self.check_mode && self.listed_name(plan.vm.vmid).is_none();
        let target = Target {
            vmid: plan.vm.vmid,
            node: &plan.vm.node,
            planned,
        };
        let verdict = self
            .effects
            .hold(&self.gate, "proxmox_kvm", &target, &writes, self.check_mode);
        self.warnings.extend(self.gate.take_warnings());
        verdict?;
        let mut exec = self.executor(name);
        let result = exec.run(plan);
        self.warnings.append(&mut exec.outcome.warnings);
        if result.is_ok() {
            self.effects.record_all(
                self.check_mode,
                effects::effects(plan, self.task.name.as_deref(), &self.known, &self.tag_case),
            );
        }
        result.map(|_| exec.outcome)
    }

    /// The VM's config, failing as 1.6 words it.
    pub fn read_config(&self, vm: &Vm) -> Result<serde_json::Map<String, Value>, Failure> {
        api::config(self.client, vm).map_err(|e| vm_task::info_failure(vm.vmid, InfoWording::WithVmidEquals, e))
    }
}

/// The `Vm` of a listed guest.
pub fn vm_of(g: &Guest) -> Vm {
    Vm {
        node: g.node.to_string(),
        vmid: g.vmid,
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
