//! What every part of a run shares: the task, the client, the cluster's listing read
//! once at the start ([`crate::observe::listing`]), the warnings, the effects buffer and
//! the privilege gate ([`crate::execute::execute`] holds each plan to them), the run's
//! name index.

use ferrox_common::ansible::protocol::{Failure, Module};
use ferrox_common::api::client::Client;
use ferrox_common::cluster::vm::{self, Guest, GuestType};
use ferrox_common::pve::privileges::Gate;
use ferrox_common::pve::tags::TagCase;
use ferrox_common::run::connection::ConnectionParams;
use ferrox_common::run::name_index;
use ferrox_common::run::vm_task::{self, Effects, InfoWording};
use serde_json::Value;

use crate::api::{self, Vm};
use crate::observe::listing::{self, Listing};
use crate::task::KvmTask;

pub struct Ctx<'a> {
    pub task: &'a KvmTask,
    pub client: &'a Client,
    /// The cluster as the run's one listing shows it.
    pub listing: Listing,
    pub check_mode: bool,
    pub warnings: Vec<String>,
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
