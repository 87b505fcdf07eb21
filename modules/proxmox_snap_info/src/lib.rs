//! The `ferrox.proxmox.proxmox_snap_info` module: the snapshots of a QEMU VM or an LXC
//! container, or one of them.
//!
//! A [`Task`] the one driver runs ([`driver`]) that only reads: observe finds the guest
//! (one `GET /cluster/resources`, or the run's name index) and reads its snapshot list
//! (`/nodes/{node}/qemu/{vmid}/snapshot` or `/lxc/...`: PVE's API is the same for
//! both); the plan never changes anything, so the driver goes straight to the report.
//! In a check-mode run the list is the one the run's plan leaves (snapshots earlier
//! tasks would take or remove).

mod docs;

use serde_json::Value;

use ferrox_ansible::options::{ModuleSpec, Opt, Params, Rules, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::listing_probe::LookupTargets;
use ferrox_cluster::vm::{GuestType, ListingQuery};
use ferrox_run::connection;
use ferrox_run::driver::{self, Cx, Decided, Guard, Outcome, Prediction, Subject, Task};
use ferrox_run::name_index;
use ferrox_run::vm_task::{self, Lookup};

pub fn spec() -> ModuleSpec {
    let mut options = connection::options();
    options.extend([
        Opt::str("hostname")
            .desc("The name of the guest. Used only when O(vmid) is not given; must match exactly one QEMU VM."),
        Opt::vmid("vmid").desc("The VMID of the QEMU VM or LXC container. Takes precedence over O(hostname)."),
        Opt::str("snapname").desc("Return only this snapshot, as RV(snapshot)."),
    ]);
    ModuleSpec {
        name: "proxmox_snap_info",
        short_description: "List the snapshots of a QEMU VM or LXC container in Proxmox VE",
        description: docs::description(),
        version_added: "0.2.0",
        options,
        rules: Rules::default()
            .required_one_of(&["hostname", "vmid"])
            .merge(connection::rules()),
        check_mode: (
            Support::Full,
            "The module only reads, so check mode runs it normally (the list includes what earlier check-mode tasks of the run would take or remove).",
        ),
        diff_mode: (Support::None, "The module changes nothing, so there is nothing to diff."),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_snap"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

/// The task: which guest, and which snapshot.
pub(crate) struct SnapInfoTask {
    vmid: Option<u32>,
    hostname: Option<String>,
    snapname: Option<String>,
}

impl SnapInfoTask {
    pub(crate) fn from_params(p: &Params) -> Result<SnapInfoTask, String> {
        let vmid = match p.int("vmid") {
            Some(0) | None => None,
            Some(id) => Some(ferrox_ansible::options::read::vmid_in_range("vmid", id)?),
        };
        Ok(SnapInfoTask {
            vmid,
            hostname: p.non_empty("hostname").map(str::to_string),
            snapname: p.non_empty("snapname").map(str::to_string),
        })
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = SnapInfoTask::from_params(&m.params)?;
    driver::run(m, task)
}

/// The guest and its snapshot list as PVE returns it (`current` last).
pub(crate) struct Seen {
    vmid: u32,
    node: String,
    list: Value,
}

/// Reading changes nothing.
pub(crate) struct Nothing;

impl Decided for Nothing {
    fn changes(&self) -> bool {
        false
    }
}

impl Task for SnapInfoTask {
    type Seen = Seen;
    type Plan = Nothing;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let sought = LookupTargets::lookup(self.vmid, self.hostname.as_deref());
        let query = ListingQuery::lookup(self.vmid, self.hostname.as_deref(), &sought);
        let guests = name_index::read(cx.m, cx.client, cx.conn, &query)
            .map_err(|e| Failure::new(format!("Unable to retrieve list of VMs: {e}")))?
            .cluster
            .guests;
        let lookup = Lookup {
            vmid: self.vmid,
            name: self.hostname.as_deref(),
            prefer_node: None,
        };
        let guest = match (vm_task::locate(cx.client, &guests, &lookup)?, self.vmid, &self.hostname) {
            (Some(g), _, _) => g,
            (None, Some(id), _) => return Err(Failure::new(format!("VM with vmid {id} does not exist in cluster"))),
            (None, None, Some(name)) => return Err(Failure::new(format!("No VM with name {name} found"))),
            (None, None, None) => return Err(Failure::new("Vmid could not be fetched (vmid or hostname required)")),
        };
        let kind = match guest.kind {
            GuestType::Qemu => "qemu",
            GuestType::Lxc => "lxc",
        };
        let (node, vmid) = (guest.node.to_string(), guest.vmid);
        let list = cx
            .client
            .get(&format!("/nodes/{node}/{kind}/{vmid}/snapshot"), &[])
            .map_err(|e| Failure::new(format!("Failed to list snapshots: {e}")).with("vmid", vmid))?;
        Ok(Seen { vmid, node, list })
    }

    fn plan(&self, _seen: &Seen) -> Result<Nothing, Failure> {
        Ok(Nothing)
    }

    fn guard<'s>(&self, seen: &'s Seen, _plan: &Nothing) -> Guard<'s> {
        Guard {
            subject: Subject::Vm {
                vmid: seen.vmid,
                node: &seen.node,
            },
            lock: None,
            writes: Vec::new(),
        }
    }

    fn predict(&self, _cx: &mut Cx<'_>, _seen: &Seen, _plan: &Nothing) -> Result<Prediction, Failure> {
        Ok(Prediction::default())
    }

    fn execute(&self, _cx: &mut Cx<'_>, _seen: &Seen, _plan: &Nothing) -> Result<(), Failure> {
        Ok(())
    }

    fn report(&self, _cx: &mut Cx<'_>, seen: &Seen, _plan: &Nothing, _outcome: Outcome<()>) -> Result<Output, Failure> {
        Ok(report(self.snapname.as_deref(), &seen.list))
    }
}

/// 1.6's result: the whole list, or the one snapshot asked for (`Snapshot 'x' not found`
/// with an empty list when there is none).
pub(crate) fn report(snapname: Option<&str>, list: &Value) -> Output {
    let items = list.as_array().cloned().unwrap_or_default();
    let Some(name) = snapname else {
        return Output::unchanged("").with("snapshots", items);
    };
    match items.into_iter().find(|s| s["name"] == name) {
        Some(s) => Output::unchanged("").with("snapshot", s),
        None => Output::unchanged(format!("Snapshot '{name}' not found")).with("snapshots", Vec::<Value>::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_list_or_the_one_snapshot_as_one_point_six_returns_them() {
        let list = json!([
            {"name": "before-upgrade", "snaptime": 1, "vmstate": 0, "description": ""},
            {"name": "current", "description": "You are here!", "parent": "before-upgrade", "running": 0}
        ]);
        let all = report(None, &list);
        assert_eq!(all.get("snapshots").unwrap().as_array().unwrap().len(), 2);
        let one = report(Some("before-upgrade"), &list);
        assert_eq!(one.get("snapshot").unwrap()["name"], "before-upgrade");
        assert!(one.get("snapshots").is_none());
        let none = report(Some("non-existent"), &list);
        assert_eq!(none.get("msg").unwrap(), "Snapshot 'non-existent' not found");
        assert_eq!(none.get("snapshots").unwrap(), &json!([]));
        assert_eq!(none.get("changed").unwrap(), false);
    }
}
