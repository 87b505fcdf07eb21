//! The cluster as a check-mode task sees it when the run has a plan: the client's
//! reads pass through here, and the answers about VMs the plan touches are the
//! [`overlay`](super::overlay)'s. Nothing here writes; real runs have no view.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use serde_json::Value;

use super::overlay;
use super::pools;
use super::state::{PlannedVm, PlannedVolume, Restored, RunPlan};
use super::Effect;
use ferrox_pve_client::client::{ApiError, Client, Fields, ReadThrough};

/// A plan ready to answer reads.
#[derive(Debug)]
pub struct PlanView {
    vms: BTreeMap<u32, PlannedVm>,
    reserved: BTreeSet<u32>,
    volumes: Vec<PlannedVolume>,
    /// ACL entries set or removed, pools made or removed and storages added to pools or
    /// taken out, in the order planned.
    user_cfg: Vec<Effect>,
    /// vmids PVE listed (for predicting the next free one); `None` until listed.
    used: Mutex<Option<BTreeSet<u32>>>,
}

pub use ferrox_pve_client::client::Fetch;

impl ReadThrough for PlanView {
    fn get(&self, path: &str, query: Fields, fetch: Fetch) -> Result<Value, ApiError> {
        PlanView::get(self, path, query, fetch)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl PlanView {
    /// The view of the cluster with `plan` applied (its VMs folded, vmids reserved, files placed).
    pub fn new(plan: &RunPlan) -> PlanView {
        PlanView {
            vms: plan.vms(),
            reserved: plan.reserved(),
            volumes: plan.volumes(),
            user_cfg: plan.user_cfg(),
            used: Mutex::new(None),
        }
    }

    /// The plan `client` reads through, if any (check mode with a plan).
    pub fn of(client: &Client) -> Option<&PlanView> {
        client.read_through()?.as_any().downcast_ref()
    }

    /// The VM as the plan leaves it, when the plan touches it.
    pub fn vm(&self, vmid: u32) -> Option<&PlannedVm> {
        self.vms.get(&vmid)
    }

    /// The vmids earlier tasks of the run took for new VMs (kept even when a later task
    /// removes the VM again), so a prediction does not hand them out twice.
    pub fn reserved(&self) -> &BTreeSet<u32> {
        &self.reserved
    }

    /// Whether the plan changes nothing (the cluster reads as it is).
    pub fn is_empty(&self) -> bool {
        self.vms.is_empty() && self.reserved.is_empty() && self.volumes.is_empty() && self.user_cfg.is_empty()
    }

    /// Whether the plan creates this VM (it does not exist in PVE yet).
    pub fn is_planned(&self, vmid: u32) -> bool {
        self.vms.get(&vmid).is_some_and(|v| v.created && !v.removed)
    }

    /// `GET path` with the plan applied.
    pub fn get(&self, path: &str, query: Fields, fetch: Fetch) -> Result<Value, ApiError> {
        let vms: Vec<&PlannedVm> = self.vms.values().collect();
        let param = |name: &str| query.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str());
        match path.trim_end_matches('/') {
            "/cluster/resources" => {
                let real = fetch(path, query)?;
                self.remember_used(&real);
                Ok(overlay::resources(real, &vms, param("type").is_none_or(|t| t == "vm")))
            }
            "/cluster/nextid" => self.next_id(path, query, param("vmid"), fetch),
            "/access/acl" => Ok(acl_listing(fetch(path, query)?, &self.user_cfg)),
            "/pools" => match param("poolid") {
                Some(poolid) => pools::read(fetch(path, query), &self.user_cfg, &vms, poolid, true, param("type")),
                None => Ok(pools::listing(fetch(path, query)?, &self.user_cfg)),
            },
            p if p.starts_with("/pools/") => {
                let poolid = &p["/pools/".len()..];
                pools::read(fetch(path, query), &self.user_cfg, &vms, poolid, false, param("type"))
            }
            p if content_path(p).is_some() => {
                let (node, storage) = content_path(p).unwrap_or_default();
                Ok(self.content_listing(fetch(path, query)?, node, storage, param("content")))
            }
            p => match parse_vm_path(p) {
                Some(VmPath::Listing { node }) => Ok(overlay::node_listing(fetch(path, query)?, node, &vms)),
                Some(VmPath::Vm { vmid, rest, .. }) if self.vms.contains_key(&vmid) => {
                    self.vm_read(&self.vms[&vmid], rest, query, fetch)
                }
                _ => fetch(path, query),
            },
        }
    }

    /// `GET config?snapshot=<name>` (AbstractConfig's `load_snapshot_config`): a snapshot
    /// the plan takes is the config of that moment ([`overlay::snapshot_section`]), one it
    /// removes does not exist; one the plan does not touch is as PVE keeps it (the plan's
    /// later config changes are not in it).
    fn snapshot_section(&self, vm: &PlannedVm, name: &str, query: Fields, fetch: Fetch) -> Result<Value, ApiError> {
        let path = format!("/nodes/{}/qemu/{}/config", vm.real_node, vm.vmid);
        let absent = || ApiError::http(500, format!("snapshot '{name}' does not exist"), None);
        match vm.snapshots.iter().find(|s| s.name == name) {
            Some(s) if s.removed => Err(absent()),
            Some(s) => {
                let real = match vm.created {
                    true => None,
                    false => Some(fetch(&path, &[("current", "1".to_string())])?),
                };
                Ok(Value::Object(overlay::snapshot_section(vm, s, real)))
            }
            None if vm.created => Err(absent()),
            None => fetch(&path, query),
        }
    }

    /// The config a planned rollback left an existing VM with, before the plan's later
    /// changes: PVE's config in effect (its pending changes are gone), or a snapshot's
    /// section PVE has, with the VM's notes and unused disks kept.
    fn restored_config(&self, vm: &PlannedVm, restored: &Restored, fetch: Fetch) -> Result<Value, ApiError> {
        let path = format!("/nodes/{}/qemu/{}/config", vm.real_node, vm.vmid);
        let in_effect = fetch(&path, &[("current", "1".to_string())])?;
        match restored {
            Restored::Planned => Ok(in_effect),
            Restored::Pve(name) => {
                let section = fetch(&path, &[("snapshot", name.clone())])?;
                Ok(Value::Object(overlay::rolled_back(section, in_effect)))
            }
        }
    }

    fn vm_read(&self, vm: &PlannedVm, rest: &str, query: Fields, fetch: Fetch) -> Result<Value, ApiError> {
        if vm.removed {
            return Err(ApiError::http(
                500,
                format!(
                    "Configuration file 'nodes/{}/qemu-server/{}.conf' does not exist",
                    vm.node, vm.vmid
                ),
                None,
            ));
        }
        let current = query.iter().any(|(k, v)| *k == "current" && v == "1");
        let real = |rest: &str| -> Result<Option<Value>, ApiError> {
            if vm.created {
                return Ok(None);
            }
            fetch(&format!("/nodes/{}/qemu/{}{rest}", vm.real_node, vm.vmid), query).map(Some)
        };
        let snapshot_section = query.iter().find(|(k, _)| *k == "snapshot").map(|(_, v)| v.as_str());
        match rest {
            "/config" if snapshot_section.is_some() => {
                self.snapshot_section(vm, snapshot_section.unwrap_or_default(), query, fetch)
            }
            "/config" => {
                let base = match &vm.restored {
                    None => real(rest)?,
                    Some(restored) => Some(self.restored_config(vm, restored, fetch)?),
                };
                let mut config = overlay::config(vm, base, current);
                if !vm.snapshots.is_empty() || vm.snapshot_parent.is_some() {
                    let real_list = match vm.created {
                        true => None,
                        false => Some(fetch(
                            &format!("/nodes/{}/qemu/{}/snapshot", vm.real_node, vm.vmid),
                            &[],
                        )?),
                    };
                    overlay::set_parent(&mut config, &crate::snapshots::list(vm, real_list));
                }
                Ok(Value::Object(config))
            }
            "/pending" => Ok(overlay::pending(vm, real(rest)?)),
            "/status/current" => Ok(overlay::status(vm, real(rest)?)),
            "/snapshot" => Ok(crate::snapshots::list(vm, real(rest)?)),
            _ if vm.created => Err(ApiError::http(
                500,
                format!(
                    "VM {} exists only in the plan of this check-mode run: {rest} cannot be read before it is created",
                    vm.vmid
                ),
                None,
            )),
            _ => fetch(&format!("/nodes/{}/qemu/{}{rest}", vm.real_node, vm.vmid), query),
        }
    }

    fn next_id(&self, path: &str, query: Fields, asked: Option<&str>, fetch: Fetch) -> Result<Value, ApiError> {
        if let Some(id) = asked
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|id| self.reserved.contains(id))
        {
            let mut errors = serde_json::Map::new();
            errors.insert(
                "vmid".into(),
                Value::String(format!(
                    "VM {id} already exists (planned by an earlier task of this check-mode run)"
                )),
            );
            return Err(ApiError::http(400, "Parameter verification failed.", Some(errors)));
        }
        let real = fetch(path, query)?;
        if asked.is_some() {
            return Ok(real);
        }
        let Some(id) = real
            .as_str()
            .and_then(|s| s.parse::<u32>().ok())
            .or_else(|| real.as_u64().and_then(|n| u32::try_from(n).ok()))
        else {
            return Ok(real);
        };
        if self.used.lock().map(|u| u.is_none()).unwrap_or(true) {
            let listed = fetch("/cluster/resources", &[("type", "vm".to_string())])?;
            self.remember_used(&listed);
        }
        let used = self.used.lock().ok().and_then(|u| u.clone()).unwrap_or_default();
        Ok(Value::String(overlay::next_id(id, &used, &self.reserved).to_string()))
    }

    fn remember_used(&self, resources: &Value) {
        let ids: BTreeSet<u32> = resources
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| matches!(r.get("type").and_then(Value::as_str), Some("qemu" | "lxc")))
            .filter_map(|r| {
                r.get("vmid")
                    .and_then(|v| v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok())))
            })
            .filter_map(|n| u32::try_from(n).ok())
            .collect();
        if let Ok(mut used) = self.used.lock() {
            used.get_or_insert_with(BTreeSet::new).extend(ids);
        }
    }
}

enum VmPath<'a> {
    Listing { node: &'a str },
    Vm { vmid: u32, rest: &'a str },
}

/// `/nodes/{node}/qemu` and `/nodes/{node}/qemu/{vmid}{rest}`.
/// `/nodes/{node}/storage/{storage}/content`: the node and storage.
fn content_path(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix("/nodes/")?;
    let (node, rest) = rest.split_once('/')?;
    let storage = rest.strip_prefix("storage/")?.strip_suffix("/content")?;
    (!storage.contains('/')).then_some((node, storage))
}

impl PlanView {
    /// A storage's content listing with the planned files added and removed ones gone
    /// (a planned file has the listing's fields PVE gives every file: volid, content,
    /// format, size).
    fn content_listing(&self, real: Value, node: &str, storage: &str, content: Option<&str>) -> Value {
        let mine: Vec<&PlannedVolume> = self.volumes.iter().filter(|v| v.seen_from(node, storage)).collect();
        if mine.is_empty() {
            return real;
        }
        let mut items: Vec<Value> = real.as_array().cloned().unwrap_or_default();
        items.retain(|item| !mine.iter().any(|v| item["volid"] == v.volid.as_str()));
        for v in mine
            .iter()
            .filter(|v| !v.removed && content.is_none_or(|c| c == v.content))
        {
            let format = match v.content.as_str() {
                "iso" => "iso".to_string(),
                "vztmpl" => "tgz".to_string(),
                _ => v.volid.rsplit('.').next().unwrap_or("raw").to_string(),
            };
            let mut item = serde_json::json!({"volid": v.volid, "content": v.content, "format": format});
            if let Some(size) = v.size {
                item["size"] = size.into();
            }
            items.push(item);
        }
        Value::Array(items)
    }
}

fn parse_vm_path(path: &str) -> Option<VmPath<'_>> {
    let rest = path.strip_prefix("/nodes/")?;
    let (node, rest) = rest.split_once('/')?;
    let rest = rest.strip_prefix("qemu")?;
    if rest.is_empty() {
        return Some(VmPath::Listing { node });
    }
    let rest = rest.strip_prefix('/')?;
    let (id, tail) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    Some(VmPath::Vm {
        vmid: id.parse().ok()?,
        rest: tail,
    })
}

/// `GET /access/acl` with the planned entries: an entry set replaces the one of the
/// same path, subject and role (PVE keeps one flag per role), a removed one goes, and a
/// removed pool takes its entries along (pve-access-control's `delete_pool_acl`: the
/// tree node `/pool/<id>` with all below it; a nested id `a/b` is no node of that tree,
/// so its entries stay).
fn acl_listing(real: Value, planned: &[Effect]) -> Value {
    let mut entries: Vec<Value> = match real {
        Value::Array(entries) => entries,
        other => return other,
    };
    for e in planned {
        if let Effect::PoolConfig {
            poolid, removed: true, ..
        } = e
        {
            if !poolid.contains('/') {
                let node = format!("/pool/{poolid}");
                let below = format!("{node}/");
                entries.retain(|x| x["path"].as_str().is_none_or(|p| p != node && !p.starts_with(&below)));
            }
            continue;
        }
        let Effect::Acl {
            path,
            kind,
            ugid,
            roleid,
            propagate,
        } = e
        else {
            continue;
        };
        entries.retain(|x| !(x["path"] == *path && x["type"] == *kind && x["ugid"] == *ugid && x["roleid"] == *roleid));
        if let Some(p) = propagate {
            entries.push(serde_json::json!({"path": path, "type": kind, "ugid": ugid, "roleid": roleid, "propagate": u8::from(*p)}));
        }
    }
    Value::Array(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::cell::RefCell;

    fn view() -> PlanView {
        PlanView::new(
            &RunPlan::from_value(&json!({"effects": [
                {"kind": "create", "vmid": 101, "node": "pve1", "name": "web1", "config": {"memory": "2048"}},
                {"kind": "config", "vmid": 100, "node": "pve1", "set": {"cores": 4}},
                {"kind": "remove", "vmid": 102, "node": "pve2"},
            ]}))
            .unwrap(),
        )
    }

    #[test]
    fn planned_acl_entries_show_in_the_listing() {
        let real = serde_json::json!([
            {"path": "/vms/100", "type": "user", "ugid": "a@pve", "roleid": "PVEVMUser", "propagate": 1},
            {"path": "/", "type": "user", "ugid": "b@pve", "roleid": "PVEAuditor", "propagate": 1}
        ]);
        let acl = |ugid: &str, propagate: Option<bool>| Effect::Acl {
            path: "/vms/100".into(),
            kind: "user".into(),
            ugid: ugid.into(),
            roleid: "PVEVMUser".into(),
            propagate,
        };
        let listed = super::acl_listing(
            real,
            &[acl("a@pve", Some(false)), acl("c@ad", Some(true)), acl("c@ad", None)],
        );
        assert_eq!(
            listed,
            serde_json::json!([
                {"path": "/", "type": "user", "ugid": "b@pve", "roleid": "PVEAuditor", "propagate": 1},
                {"path": "/vms/100", "type": "user", "ugid": "a@pve", "roleid": "PVEVMUser", "propagate": 0}
            ])
        );
    }

    #[test]
    fn a_removed_pool_takes_its_acl_subtree_along_but_a_nested_one_none() {
        let entry =
            |path: &str| json!({"path": path, "type": "user", "ugid": "a@pve", "roleid": "PVEAuditor", "propagate": 1});
        let real = json!([entry("/pool/team"), entry("/pool/team/web"), entry("/pool/teamwork")]);
        let removed = |poolid: &str| Effect::PoolConfig {
            poolid: poolid.into(),
            comment: None,
            removed: true,
        };
        assert_eq!(
            super::acl_listing(real.clone(), &[removed("team/web")]),
            real,
            "a nested id names no ACL node"
        );
        let set_after = Effect::Acl {
            path: "/pool/team".into(),
            kind: "user".into(),
            ugid: "b@pve".into(),
            roleid: "PVEAuditor".into(),
            propagate: Some(true),
        };
        assert_eq!(
            super::acl_listing(real, &[removed("team"), set_after]),
            json!([entry("/pool/teamwork"),
                {"path": "/pool/team", "type": "user", "ugid": "b@pve", "roleid": "PVEAuditor", "propagate": 1}])
        );
    }

    #[test]
    fn a_rollback_restores_the_snapshot_s_config_and_keeps_the_notes() {
        let v = PlanView::new(
            &RunPlan::from_value(&json!({"effects": [
                {"kind": "config", "vmid": 100, "node": "pve1", "set": {"cores": "6", "description": "edited"}},
                {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "kept", "action": "rollback"},
                {"kind": "config", "vmid": 100, "node": "pve1", "set": {"memory": "4096"}},
            ]}))
            .unwrap(),
        );
        let fetch = |p: &str, q: Fields| -> Result<Value, ApiError> {
            Ok(match (p, q.first().map(|(k, v)| (*k, v.as_str()))) {
                (_, Some(("snapshot", "kept"))) => {
                    json!({"cores": 1, "memory": "1024", "ide2": "none,media=cdrom", "description": "the snapshot's comment", "snaptime": 1, "parent": "older", "digest": "d"})
                }
                (p, _) if p.ends_with("/snapshot") => json!([
                    {"name": "older"}, {"name": "kept", "parent": "older"}, {"name": "current", "parent": "kept", "running": 0}
                ]),
                _ => {
                    json!({"cores": 2, "memory": "2048", "description": "notes", "unused0": "local-lvm:vm-100-disk-9", "parent": "older"})
                }
            })
        };
        assert_eq!(
            v.get("/nodes/pve1/qemu/100/config", &[], &fetch).unwrap(),
            json!({
                "cores": 1, "memory": "4096", "ide2": "none,media=cdrom",
                "description": "edited", "unused0": "local-lvm:vm-100-disk-9", "parent": "kept"
            }),
            "the snapshot's config, the change after the rollback, the VM's notes (as the plan left them) and unused disk"
        );
    }

    #[test]
    fn a_snapshot_taken_after_a_rollback_restores_onto_that_rollback() {
        let v = PlanView::new(
            &RunPlan::from_value(&json!({"effects": [
                {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "kept", "action": "rollback"},
                {"kind": "config", "vmid": 100, "node": "pve1", "set": {"cores": "6"}},
                {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "planned", "action": "take"},
                {"kind": "config", "vmid": 100, "node": "pve1", "set": {"cores": "8"}},
                {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "planned", "action": "rollback"},
            ]}))
            .unwrap(),
        );
        let fetch = |p: &str, q: Fields| -> Result<Value, ApiError> {
            Ok(match (p, q.first().map(|(k, v)| (*k, v.as_str()))) {
                (_, Some(("snapshot", "kept"))) => json!({"cores": 1, "memory": "1024"}),
                (p, _) if p.ends_with("/snapshot") => json!([{"name": "kept"}, {"name": "current", "parent": "kept"}]),
                _ => json!({"cores": 2, "memory": "2048"}),
            })
        };
        assert_eq!(
            v.get("/nodes/pve1/qemu/100/config", &[], &fetch).unwrap(),
            json!({"cores": 6, "memory": "1024", "parent": "planned"}),
            "PVE's snapshot, then the change made before the planned one was taken"
        );
    }

    #[test]
    fn a_snapshot_the_plan_takes_is_the_config_of_that_moment() {
        let v = PlanView::new(
            &RunPlan::from_value(&json!({"effects": [
                {"kind": "config", "vmid": 100, "node": "pve1", "set": {"cores": "4"}, "delete": ["ide2"]},
                {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "planned", "action": "take", "description": "before the upgrade"},
                {"kind": "config", "vmid": 100, "node": "pve1", "set": {"memory": "8192"}},
                {"kind": "snapshot", "vmid": 100, "node": "pve1", "name": "old", "action": "remove"},
            ]}))
            .unwrap(),
        );
        let asked = RefCell::new(Vec::<String>::new());
        let fetch = |p: &str, q: Fields| -> Result<Value, ApiError> {
            asked.borrow_mut().push(format!("{p}?{q:?}"));
            Ok(
                json!({"cores": 2, "memory": "2048", "ide2": "none,media=cdrom", "description": "notes", "unused0": "local-lvm:vm-100-disk-9", "digest": "d"}),
            )
        };
        let section = |name: &str| v.get("/nodes/pve1/qemu/100/config", &[("snapshot", name.to_string())], &fetch);
        assert_eq!(
            section("planned").unwrap(),
            json!({"cores": 4, "memory": "2048", "description": "before the upgrade"}),
            "the change before it, not the one after; its own description, not the VM's notes"
        );
        assert_eq!(
            *asked.borrow(),
            [r#"/nodes/pve1/qemu/100/config?[("current", "1")]"#],
            "the config in effect, read from PVE"
        );
        assert_eq!(section("old").unwrap_err().message, "snapshot 'old' does not exist");
        section("untouched").unwrap();
        assert_eq!(
            asked.borrow().last().unwrap(),
            r#"/nodes/pve1/qemu/100/config?[("snapshot", "untouched")]"#,
            "a snapshot the plan does not touch is PVE's"
        );
    }

    #[test]
    fn planned_vms_are_answered_without_asking_pve() {
        let v = view();
        let asked = RefCell::new(Vec::<String>::new());
        let fetch = |p: &str, _: Fields| -> Result<Value, ApiError> {
            asked.borrow_mut().push(p.to_string());
            Ok(json!({"cores": 2, "name": "web01"}))
        };
        assert_eq!(
            v.get("/nodes/pve1/qemu/101/config", &[], &fetch).unwrap(),
            json!({"memory": "2048", "name": "web1"})
        );
        assert!(asked.borrow().is_empty());
        assert_eq!(
            v.get("/nodes/pve1/qemu/100/config", &[], &fetch).unwrap(),
            json!({"cores": 4, "name": "web01"})
        );
        assert_eq!(*asked.borrow(), ["/nodes/pve1/qemu/100/config"]);
        let gone = v.get("/nodes/pve2/qemu/102/config", &[], &fetch).unwrap_err();
        assert_eq!(
            gone.message,
            "Configuration file 'nodes/pve2/qemu-server/102.conf' does not exist"
        );
        assert!(v.get("/nodes/pve1/qemu/101/rrddata", &[], &fetch).is_err());
        // A snapshot's section is as PVE keeps it: the plan's config change is not in it.
        let query = [("snapshot", "s1".to_string())];
        assert_eq!(
            v.get("/nodes/pve1/qemu/100/config", &query, &fetch).unwrap(),
            json!({"cores": 2, "name": "web01"})
        );
    }

    #[test]
    fn planned_files_show_in_their_storages_content_listing() {
        let v = PlanView::new(
            &RunPlan::from_value(&json!({"effects": [
                {"kind": "volume", "node": "pve1", "storage": "local", "volid": "local:import/noble.qcow2", "content": "import", "size": 600},
                {"kind": "volume", "node": "pve1", "storage": "local", "volid": "local:iso/old.iso", "content": "iso", "removed": true},
                {"kind": "volume", "node": "pve2", "storage": "isos", "volid": "isos:iso/new.iso", "content": "iso", "shared": true},
            ]}))
            .unwrap(),
        );
        let fetch = |_: &str, _: Fields| -> Result<Value, ApiError> {
            Ok(json!([{"volid": "local:iso/old.iso", "content": "iso", "size": 9}]))
        };
        assert_eq!(
            v.get("/nodes/pve1/storage/local/content", &[], &fetch).unwrap(),
            json!([{"volid": "local:import/noble.qcow2", "content": "import", "format": "qcow2", "size": 600}])
        );
        assert_eq!(
            v.get(
                "/nodes/pve1/storage/local/content",
                &[("content", "iso".into())],
                &fetch
            )
            .unwrap(),
            json!([])
        );
        assert_eq!(
            v.get("/nodes/pve2/storage/local/content", &[], &fetch).unwrap(),
            json!([{"volid": "local:iso/old.iso", "content": "iso", "size": 9}]),
            "another node's local storage"
        );
        let shared = v
            .get("/nodes/pve1/storage/isos/content", &[], &|_: &str, _: Fields| {
                Ok(json!([]))
            })
            .unwrap();
        assert_eq!(
            shared,
            json!([{"volid": "isos:iso/new.iso", "content": "iso", "format": "iso"}]),
            "a shared storage's file is seen from every node"
        );
        assert!(!v.is_empty());
    }

    #[test]
    fn next_id_skips_reserved_ids_after_listing_the_cluster() {
        let v = view();
        let fetch = |p: &str, _: Fields| -> Result<Value, ApiError> {
            Ok(match p {
                "/cluster/nextid" => json!("101"),
                _ => {
                    json!([{"type": "qemu", "vmid": 100}, {"type": "qemu", "vmid": 102}, {"type": "lxc", "vmid": "103"}])
                }
            })
        };
        assert_eq!(v.get("/cluster/nextid", &[], &fetch).unwrap(), json!("104"));
        let taken = v.get("/cluster/nextid", &[("vmid", "101".into())], &fetch).unwrap_err();
        assert_eq!(
            taken.param_error("vmid"),
            Some("VM 101 already exists (planned by an earlier task of this check-mode run)")
        );
    }

    #[test]
    fn paths_are_recognised() {
        assert!(matches!(
            parse_vm_path("/nodes/pve1/qemu"),
            Some(VmPath::Listing { node: "pve1" })
        ));
        assert!(matches!(
            parse_vm_path("/nodes/pve1/qemu/101/status/current"),
            Some(VmPath::Vm {
                vmid: 101,
                rest: "/status/current"
            })
        ));
        assert!(parse_vm_path("/nodes/pve1/lxc/200/config").is_none());
        assert!(parse_vm_path("/nodes/pve1/qemu/abc").is_none());
    }
}
