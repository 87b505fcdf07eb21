//! A clone to another node when the source's disks are on storage local to its node.
//! PVE refuses `target` then (`can't clone VM to node ... (VM uses local storage)`, or
//! `can't clone to non-shared storage ...` with a local `storage`), so the clone is made
//! on the source's node and migrated offline to the target, its disks onto `storage`
//! there (`targetstorage`), before the rest of the task is applied.
//!
//! Everything of that route is here: whether a clone needs it ([`route`]), the clone
//! call's form for it ([`form`]), and a rerun continuing a move a run left undone
//! ([`continue_move`]). The executor's `MoveClone` action makes the migration call.

use ferrox_common::ansible::diff::Diff;
use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::cluster::vm::Guest;
use ferrox_common::run::vm_task::{self, LockWording};
use serde_json::{Map, Value};

use ferrox_common::pve::tags::TagCase;
use ferrox_common::run::vm_task::Effects;

use crate::converge::{disk::is_disk_key, text_of};
use crate::observe::listing::Listing;
use crate::observe::{self, vm_of};
use crate::plan::{Action, Plan};
use crate::{converge_existing, Existing, Run};

/// How a clone reaches a node its source's disks cannot be cloned to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The node the clone is made on (the source's).
    pub via: String,
    /// Where it ends.
    pub to: String,
    /// `storage` for the clone itself, when that storage is on the source's node too.
    pub clone_storage: Option<String>,
    /// `targetstorage` of the migration (the task's `storage`; else each disk keeps its storage id).
    pub targetstorage: Option<String>,
    /// The local storages that force the detour (for messages).
    pub local: Vec<String>,
}

/// The storages of a config's volumes (disks and cloud-init drives, not other CD-ROMs).
fn volume_storages(config: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = config
        .iter()
        .filter(|(k, _)| is_disk_key(k))
        .filter_map(|(_, v)| {
            let text = text_of(v);
            let volid = text.split(',').next()?.to_string();
            let cdrom = text.split(',').any(|p| p == "media=cdrom");
            let (storage, _) = volid.split_once(':')?;
            (!cdrom || volid.contains("-cloudinit")).then(|| storage.to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether the cluster listing shows `storage` as local to its nodes (`None`: not listed,
/// so PVE decides).
fn is_local(listing: &Listing, storage: &str) -> Option<bool> {
    let mut listed = listing.storages.iter().filter(|s| s.storage == storage).peekable();
    listed.peek()?;
    Some(!listed.any(|s| s.shared))
}

/// The detour a clone of `source_config` (on `source_node`) to `target` needs, if PVE
/// would refuse to clone it there directly; a linked clone cannot take it.
pub fn route(
    run: &Run,
    listing: &Listing,
    source_vmid: u32,
    source_node: &str,
    target: &str,
    source_config: &Map<String, Value>,
) -> Result<Option<Route>, Failure> {
    if target == source_node {
        return Ok(None);
    }
    let storage = run.task.storage.as_deref();
    let local: Vec<String> = match storage {
        Some(s) if is_local(listing, s) == Some(true) => vec![s.to_string()],
        Some(_) => Vec::new(),
        None => volume_storages(source_config)
            .into_iter()
            .filter(|s| is_local(listing, s) == Some(true))
            .collect(),
    };
    if local.is_empty() {
        return Ok(None);
    }
    if !run.task.clone.full {
        return Err(Failure::new(format!(
            "Unable to clone vm {} from vmid {source_vmid}: a linked clone (full: false) cannot be made on node {target}: it stays on the storage of its template's disks ({}), local to {source_node}, and a linked clone cannot be moved. Make a full clone (full: true), or clone on {source_node} (target: {source_node})",
            run.task.name.as_deref().unwrap_or_default(),
            local.join(", ")
        ))
        .with("vmid", source_vmid));
    }
    let on_source = |s: &str| {
        listing
            .storages
            .iter()
            .any(|x| x.storage == s && x.node == source_node && x.holds_images())
    };
    Ok(Some(Route {
        via: source_node.to_string(),
        to: target.to_string(),
        clone_storage: storage.filter(|s| on_source(s)).map(str::to_string),
        targetstorage: storage.map(str::to_string),
        local,
    }))
}

/// The clone call's form for the detour: made on the source's node (no `target`), onto
/// the route's clone storage.
pub fn form(mut form: Vec<(String, String)>, route: &Route) -> Vec<(String, String)> {
    form.retain(|(k, _)| k != "target" && k != "storage");
    if let Some(s) = &route.clone_storage {
        form.push(("storage".into(), s.clone()));
    }
    form
}

/// A clone that exists, found by a rerun of its clone task.
pub struct Left<'a> {
    pub clone: &'a Guest,
    pub source: &'a Guest,
    /// The clone's config, read once.
    pub current: &'a Map<String, Value>,
    /// The name for messages.
    pub name: &'a str,
}

/// A clone a run left on the source's node before its move: stopped, while the task
/// wants it on `target` and its disks cannot be cloned there. The rerun moves it, then
/// converges it as `update: true` would; `None` when no move is left to do.
pub fn continue_move(
    run: &Run,
    listing: &Listing,
    tag_case: &TagCase,
    effects: &mut Effects,
    warnings: &mut Vec<String>,
    left: Left,
) -> Result<Option<Output>, Failure> {
    let Left {
        clone,
        source,
        current,
        name,
    } = left;
    let Some(target) = run.task.clone.target.clone().filter(|t| *t != *clone.node) else {
        return Ok(None);
    };
    if clone.node != source.node || clone.status.as_deref() != Some("stopped") {
        return Ok(None);
    }
    let Some(route) = route(run, listing, clone.vmid, &clone.node, &target, current)? else {
        return Ok(None);
    };
    let vm = vm_of(clone);
    vm_task::refuse_locked(
        vm.vmid,
        current.get("lock").and_then(Value::as_str),
        run.task.skiplock,
        LockWording::Action {
            prefix: &format!(
                "Unable to clone vm {name}: the clone VM {} was made on {}, its move to {target} failed: ",
                vm.vmid, vm.node
            ),
        },
    )?;
    let mut plan = Plan::new(vm.clone());
    plan.push(Action::MoveClone {
        from: route.via,
        to: route.to,
        targetstorage: route.targetstorage,
    });
    plan.known.current = Some(current.clone());
    crate::execute::execute(run, listing, tag_case, effects, warnings, &mut plan, name.to_string())?;
    let moved = Guest {
        node: target.as_str().into(),
        ..clone.clone()
    };
    // The migration rewrote the config (its volumes, its digest); a dry run has only the old.
    let current = if run.task.check_mode {
        current.clone()
    } else {
        observe::config(run.client, &vm_of(&moved))?
    };
    let mut wanted = run.task.config.clone();
    wanted.remove("name");
    let to = Existing {
        guest: &moved,
        name: name.to_string(),
        current,
        wanted,
        up_to_date: String::new(),
    };
    let mut converged = converge_existing(run, listing, tag_case, effects, warnings, to)?;
    // One result for both steps: the move's message first, then what the update added.
    let mut diff = Diff::new(format!("VM {}", vm.vmid));
    diff.change(
        "node",
        Some(Value::from(vm.node.clone())),
        Some(Value::from(target.clone())),
    );
    if let Some(update) = converged.take_diff() {
        diff.before.extend(update.before);
        diff.after.extend(update.after);
    }
    let updated = format!("VM {name} with vmid {} updated", vm.vmid);
    let after_update = converged
        .get("msg")
        .and_then(Value::as_str)
        .and_then(|m| m.strip_prefix(&updated))
        .unwrap_or_default()
        .to_string();
    let mut actions = plan.describe();
    actions.extend(
        converged
            .get("actions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string),
    );
    converged.set("changed", true);
    converged.set(
        "msg",
        format!(
            "VM {name} with vmid {} moved from {} to {target}, where the clone is to be{after_update}",
            vm.vmid, vm.node
        ),
    );
    converged.set("actions", actions);
    Ok(Some(converged.with_diff(diff)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn volumes_count_disks_and_cloud_init_but_not_isos() {
        let config = json!({
            "scsi0": "local-lvm:base-9000-disk-0,size=3G",
            "ide2": "local-lvm:vm-9000-cloudinit,media=cdrom",
            "ide0": "isos:iso/debian.iso,media=cdrom",
            "virtio1": "vmdata:9000/base-9000-disk-1.qcow2,size=1G",
            "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0",
        });
        assert_eq!(
            volume_storages(config.as_object().unwrap()),
            vec!["local-lvm", "vmdata"]
        );
    }
}
