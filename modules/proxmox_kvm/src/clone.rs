//! `clone`: make the clone unless it exists, then apply the rest of the task to it in
//! the same run. Without `newid`, a VM named `name` (other than the source) is the clone.

use ferrox_common::diff::Diff;
use ferrox_common::protocol::{Failure, Output};
use serde_json::Value;

use crate::api::Vm;
use crate::clone_move;
use crate::context::{vm_of, Ctx};
use crate::converge;
use crate::plan::{Action, Plan};
use crate::present::{changes_diff, check_bridges, check_drives, check_pool, choose_vmid, converge_existing, read_config};
use crate::wanted;

/// `clone`: make the clone unless it exists, then apply the rest of the task to it.
pub fn clone(ctx: &mut Ctx) -> Result<Output, Failure> {
    let p = ctx.p;
    if p.flag("ha_managed") {
        ctx.warnings.push("ha_managed applies when a VM is created or restored; PVE's clone has no such parameter, so the clone is not HA-managed. Add it to HA with ha-manager add vm:<vmid> (or POST /cluster/ha/resources)".to_string());
    }
    let clone_name = p.str("clone").unwrap_or_default().to_string();
    // The node the clone is to be made on picks among same-named templates.
    let clone_node = p.non_empty("target").or(p.non_empty("node"));
    let source = match p.int("vmid").filter(|id| *id != 0) {
        Some(id) => ctx.qemu_by_vmid(id)?,
        None => ctx.qemu_named(Some(&clone_name), clone_node)?,
    }
    .ok_or_else(|| {
        Failure::new(format!(
            "VM with name = {clone_name} does not exist in cluster"
        ))
    })?;
    let source_vm = vm_of(&source);
    let existing = match p.int("newid") {
        Some(id) => ctx.qemu_by_vmid(id)?,
        None => ctx
            .qemu_named(p.str("name"), clone_node)?
            .filter(|g| g.vmid != source.vmid),
    };
    let mut wanted = wanted::config(p)?;
    let name = ctx.name_of(None);
    if let Some(clone) = existing {
        // The clone exists: converge it like an update.
        let vm = vm_of(&clone);
        let current = read_config(ctx, &vm)?;
        if let Some(out) = continue_move(ctx, &clone, &source, &current, &wanted, &name)? {
            return Ok(out);
        }
        // Exactly as `update: true` would; 1.6 words the up-to-date message its own way.
        let up_to_date = format!("vmid {} with VM name {name} already exists", vm.vmid);
        return converge_existing(ctx, &clone, name, current, wanted, up_to_date);
    }
    if !p.bool("full").unwrap_or(true) && !source.template {
        // PVE makes linked clones of templates only; found out before anything is written.
        return Err(Failure::new(format!(
            "Unable to clone vm {} from vmid {}: VM {} is not a template, and a linked clone (full: false) needs one. Convert it first (state: template), or make a full clone (full: true)",
            p.str("name").unwrap_or_default(),
            source.vmid,
            source.vmid
        ))
        .with("vmid", source.vmid));
    }
    let node = p.non_empty("target").unwrap_or(&source.node).to_string();
    // The source's config: the clone's start (check mode), what the rest of the task is
    // compared with, and where its disks are (a clone to another node).
    let source_config = if ctx.check_mode || *node != *source.node || wanted.keys().any(|k| k != "name") {
        Some(read_config(ctx, &source_vm)?)
    } else {
        None
    };
    let route = match &source_config {
        Some(c) => clone_move::route(ctx, source.vmid, &source.node, &node, c)?,
        None => None,
    };
    let (newid, allocation) = choose_vmid(ctx, p.int("newid"))?;
    let may_race = allocation == crate::plan::Allocation::NextId;
    let form = match &route {
        Some(r) => clone_move::form(clone_form(ctx), r),
        None => clone_form(ctx),
    };
    check_bridges(ctx, &node, wanted.iter())?;
    check_drives(ctx, &node, wanted.iter())?;
    check_pool(ctx)?;
    let made_on = route.as_ref().map_or(node.clone(), |r| r.via.clone());
    let mut plan = Plan::new(Vm { node: made_on, vmid: newid });
    let mut diff = Diff::new(format!("VM {newid}"));
    diff.change("clone of", None, Some(Value::from(source.vmid)));
    plan.push(Action::Clone {
        source: source_vm.clone(),
        form,
        allocation,
    });
    plan.push(Action::WaitListed {
        name: p.str("name").map(str::to_string),
    });
    if let Some(r) = &route {
        diff.change("node", None, Some(Value::from(r.to.clone())));
        plan.push(Action::MoveClone {
            from: r.via.clone(),
            to: r.to.clone(),
            targetstorage: r.targetstorage.clone(),
        });
    }
    wanted.remove("name");
    if ctx.check_mode {
        // The plan's clone starts as a copy of the source's config.
        ctx.known.clone_source = source_config.clone();
    }
    if !wanted.is_empty() {
        // Planned against the source's config (the clone's copy); compared again once
        // the clone exists, since its MACs and volumes are its own.
        let source_config = match source_config {
            Some(c) => c,
            None => read_config(ctx, &source_vm)?,
        };
        let changes = converge::changes(&source_config, &wanted, newid, &ctx.tag_case)
            .map_err(|e| Failure::new(e).with("vmid", newid))?;
        for (k, v) in &changes.set {
            diff.change(
                k,
                changes.before[k].clone().map(Value::String),
                Some(Value::String(v.clone())),
            );
        }
        plan.push(Action::Converge {
            wanted,
            changes,
            digest: None,
            recompute: true,
        });
    }
    let outcome = ctx.execute(&mut plan, name.clone())?;
    if let Some(found) = outcome.adopted {
        // Another run made this clone at the same moment: that VM is the clone.
        ctx.learn_name(&found, &name);
        return clone(ctx);
    }
    let vm = plan.vm.clone();
    crate::present::warn_of_twins(ctx, may_race, &vm);
    let out = Output::changed(format!(
        "VM {name} with newid {} cloned from vm with vmid {}",
        vm.vmid, source.vmid
    ))
    .with("vmid", vm.vmid)
    .with("actions", plan.describe())
    .with_diff(diff);
    let out = outcome.with_pending(out);
    // In check mode the clone does not exist: its MACs and volumes are not known yet
    // (PVE gives a clone new ones), so none are reported rather than the source's.
    ctx.with_mac_and_devices(out, &vm, outcome.config.as_ref())
}

/// The clone call's own parameters (besides `newid`).
fn clone_form(ctx: &Ctx) -> Vec<(String, String)> {
    let p = ctx.p;
    let full = p.bool("full").unwrap_or(true);
    let mut form = vec![("full".to_string(), u8::from(full).to_string())];
    if let Some(n) = p.non_empty("name") {
        form.push(("name".into(), n.into()));
    }
    for option in ["pool", "snapname", "target"] {
        if let Some(v) = p.non_empty(option) {
            form.push((option.into(), v.into()));
        }
    }
    // PVE refuses storage and format for linked clones, with a message that says so.
    if let Some(st) = p.non_empty("storage") {
        form.push(("storage".into(), st.into()));
    }
    if let Some(f) = p.non_empty("format").filter(|f| *f != "unspecified") {
        form.push(("format".into(), f.into()));
    }
    if let Some(limit) = p.int("bwlimit") {
        form.push(("bwlimit".into(), limit.to_string()));
    }
    form
}

/// A clone that a run interrupted before its move: still on the source's node, stopped,
/// while the task wants it on `target` and its disks cannot be cloned there. The rerun
/// continues from there: the move, then the rest of the task.
fn continue_move(
    ctx: &mut Ctx,
    clone: &ferrox_common::vm::Guest,
    source: &ferrox_common::vm::Guest,
    current: &serde_json::Map<String, Value>,
    wanted: &wanted::Config,
    name: &str,
) -> Result<Option<Output>, Failure> {
    let Some(target) = ctx.p.non_empty("target").filter(|t| *t != &*clone.node) else {
        return Ok(None);
    };
    if clone.node != source.node || clone.status.as_deref() != Some("stopped") {
        return Ok(None);
    }
    let Some(route) = clone_move::route(ctx, clone.vmid, &clone.node, target, current)? else {
        return Ok(None);
    };
    let vm = vm_of(clone);
    ctx.refuse_locked(
        vm.vmid,
        current.get("lock").and_then(Value::as_str),
        &format!("Unable to clone vm {name}: the clone VM {} was made on {}, its move to {target} failed: ", vm.vmid, vm.node),
    )?;
    let mut wanted = wanted.clone();
    wanted.remove("name");
    let changes = converge::changes(current, &wanted, vm.vmid, &ctx.tag_case).map_err(|e| Failure::new(e).with("vmid", vm.vmid))?;
    let mut diff = changes_diff(&vm, &changes);
    diff.change("node", Some(Value::from(vm.node.clone())), Some(Value::from(target.to_string())));
    let mut plan = Plan::new(vm.clone());
    plan.push(Action::MoveClone {
        from: route.via,
        to: route.to,
        targetstorage: route.targetstorage,
    });
    if !changes.is_empty() {
        plan.push(Action::Converge {
            wanted,
            changes,
            digest: None,
            recompute: true,
        });
    }
    ctx.known.current = Some(current.clone());
    let outcome = ctx.execute(&mut plan, name.to_string())?;
    let moved = plan.vm.clone();
    let out = Output::changed(format!(
        "VM {name} with vmid {} moved from {} to {target}, where the clone is to be",
        vm.vmid, vm.node
    ))
    .with("vmid", vm.vmid)
    .with("actions", plan.describe())
    .with_diff(diff);
    let out = outcome.with_pending(out);
    ctx.with_mac_and_devices(out, &moved, outcome.config.as_ref()).map(Some)
}
