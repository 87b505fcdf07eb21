//! What every part of a run shares: the task, the client, the cluster's listing read
//! once at the start ([`crate::observe::listing`]), the effects buffer, the privilege
//! gate, and the executor settings.

use std::time::Duration;

use ferrox_common::ansible::protocol::{Failure, Module};
use ferrox_common::api::client::Client;
use ferrox_common::cluster::vm::{self, Guest, GuestType};
use ferrox_common::pve::privileges::{Gate, Target};
use ferrox_common::pve::tags::TagCase;
use ferrox_common::run::connection::ConnectionParams;
use ferrox_common::run::name_index;
use ferrox_common::run::vm_task::{self, Effects, InfoWording, Lookup};
use serde_json::Value;

use crate::api::{self, Vm};
use crate::execute::{Executor, Outcome};
use crate::observe::listing::{self, Listing};
use crate::plan::effects::{self, Known};
use crate::plan::Plan;
use crate::task::{KvmTask, Operation};

/// The smallest wait for creating, cloning, restoring, converting and removing.
pub const LONG_TASK_SECS: u64 = 300;

pub struct Ctx<'a> {
    pub task: &'a KvmTask,
    pub client: &'a Client,
    /// The cluster as the run's one listing shows it.
    pub listing: Listing,
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
        let listing = listing::read(m, task, conn, client)?;
        let check_mode = m.check_mode;
        Ok(Ctx {
            task,
            client,
            listing,
            check_mode,
            warnings: Vec::new(),
            known: Known::default(),
            effects: Effects::default(),
            gate: Gate::new(client, conn),
            tag_case: TagCase::of_cluster(client),
            index_key: name_index::cluster_key(conn),
            listed: None,
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
        match vm_task::locate(self.client, &self.listing.guests, lookup)? {
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
        match self.listing.guests.iter_mut().find(|g| g.vmid == vm.vmid) {
            Some(g) => {
                g.name = Some(name.to_string());
                g.node = vm.node.as_str().into();
            }
            None => self.listing.guests.push(Guest {
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
                .listing
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
        let planned = self.check_mode && self.listing.listed_name(plan.vm.vmid).is_none();
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
