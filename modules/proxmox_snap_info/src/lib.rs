//! The `ferrox.proxmox.proxmox_snap_info` module: the snapshots of a QEMU VM or an LXC
//! container, or one of them.
//!
//! A [`driver::Read`] task: observe finds the guest (one `GET /cluster/resources`, or the
//! run's name index) and reads its snapshot list (`/nodes/{node}/qemu/{vmid}/snapshot` or
//! `/lxc/...`: PVE's API is the same for both); the report words it.
//! In a check-mode run the list is the one the run's plan leaves (snapshots earlier
//! tasks would take or remove).

mod docs;

use serde_json::Value;

use ferrox_ansible::options::{ModuleSpec, Opt, Params, Reader, Rules, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::vm::GuestType;
use ferrox_run::connection;
use ferrox_run::driver::{self, Cx, Read};
use ferrox_run::vm_task::{self, Lookup};

/// The module's options, declared once.
fn options() -> Vec<Opt> {
    let mut options = connection::options();
    options.extend([
        Opt::str("hostname")
            .desc("The name of the guest. Used only when O(vmid) is not given; must match exactly one QEMU VM."),
        Opt::vmid("vmid").desc("The VMID of the QEMU VM or LXC container. Takes precedence over O(hostname)."),
        Opt::str("snapname").desc("Return only this snapshot, as RV(snapshot)."),
    ]);
    options
}

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_snap_info",
        short_description: "List the snapshots of a QEMU VM or LXC container in Proxmox VE",
        description: docs::description(),
        version_added: "0.2.0",
        options: options(),
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
#[derive(Debug)]
pub(crate) struct SnapInfoTask {
    vmid: Option<u32>,
    hostname: Option<String>,
    snapname: Option<String>,
}

impl SnapInfoTask {
    /// The task's options, read once through [`Reader`].
    pub(crate) fn from_params(params: &Params) -> Result<SnapInfoTask, String> {
        let opts = options();
        Self::read(&Reader::new(params.clone(), &opts))
    }

    fn read(r: &Reader<'_>) -> Result<SnapInfoTask, String> {
        Ok(SnapInfoTask {
            vmid: r.vmid("vmid")?,
            hostname: r.non_empty("hostname"),
            snapname: r.non_empty("snapname"),
        })
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = SnapInfoTask::from_params(&m.params)?;
    driver::read(m, task)
}

impl Read for SnapInfoTask {
    /// The guest's snapshot list as PVE returns it (`current` last).
    type Seen = Value;

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Value, Failure> {
        let lookup = Lookup {
            vmid: self.vmid,
            name: self.hostname.as_deref(),
            prefer_node: None,
        };
        let guests = vm_task::listed_guests(cx.m, cx.client, cx.conn, &lookup)?;
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
        cx.client
            .get(&format!("/nodes/{node}/{kind}/{vmid}/snapshot"), &[])
            .map_err(|e| Failure::new(format!("Failed to list snapshots: {e}")).with("vmid", vmid))
    }

    fn report(&self, list: Value) -> Output {
        report(self.snapname.as_deref(), &list)
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

    fn read(args: Value) -> (Result<SnapInfoTask, String>, Vec<&'static str>) {
        let opts = options();
        let r = Reader::new(Params::with_defaults(&opts, &args), &opts);
        let task = SnapInfoTask::read(&r);
        (task, r.unread())
    }

    #[test]
    fn every_declared_option_of_the_module_is_read() {
        let (task, unread) = read(json!({"vmid": 100}));
        assert!(task.is_ok());
        let unread = connection::task_options_unread(unread);
        assert!(unread.is_empty(), "options without a reader: {unread:?}");
    }

    #[test]
    fn the_guest_and_the_snapshot_as_given() {
        let (task, _) = read(json!({"vmid": 0, "hostname": "web", "snapname": ""}));
        let task = task.unwrap();
        assert_eq!(
            (task.vmid, task.hostname.as_deref(), task.snapname),
            (None, Some("web"), None)
        );
        let (task, _) = read(json!({"vmid": 99}));
        assert_eq!(
            task.unwrap_err(),
            "vmid must be a VMID between 100 and 999999999, got: 99"
        );
    }

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
