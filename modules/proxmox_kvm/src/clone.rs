//! `clone`: make the clone unless it exists, then apply the rest of the task to it in
//! the same run. Without `newid`, a VM named `name` (other than the source) is the clone.
//! A clone that exists converges exactly as `update: true` would
//! ([`crate::update::converge_existing`]); a new one is decided by
//! [`crate::decide::clone`]; a clone to another node takes the route of
//! [`crate::clone_move`].

use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::cluster::vm::Guest;
use serde_json::{Map, Value};

use crate::checks::{check_bridges, check_drives, check_pool};
use crate::clone_move;
use crate::context::{vm_of, Ctx};
use crate::converge::{self, Changes};
use crate::decide;
use crate::plan::Allocation;
use crate::present::choose_vmid;
use crate::update::converge_existing;

/// `clone`: make the clone unless it exists, then apply the rest of the task to it.
pub fn clone(ctx: &mut Ctx) -> Result<Output, Failure> {
    if ctx.task.ha_managed {
        ctx.warnings.push("ha_managed applies when a VM is created or restored; PVE's clone has no such parameter, so the clone is not HA-managed. Add it to HA with ha-manager add vm:<vmid> (or POST /cluster/ha/resources)".to_string());
    }
    let source = source(ctx)?;
    match existing_clone(ctx, &source)? {
        Some(clone) => rerun(ctx, &clone, &source),
        None => make(ctx, &source),
    }
}

/// The node the clone is to be made on: it picks among same-named templates.
fn clone_node<'c>(ctx: &'c Ctx) -> Option<&'c str> {
    ctx.task.clone.target.as_deref().or(ctx.task.node.as_deref())
}

/// The VM to clone: `vmid`, else the VM named `clone`.
fn source(ctx: &Ctx) -> Result<Guest, Failure> {
    let source_name = &ctx.task.clone.source;
    match ctx.task.vmid {
        Some(id) => crate::observe::locate::qemu_by_vmid(ctx, id)?,
        None => crate::observe::locate::qemu_named(ctx, Some(source_name), clone_node(ctx))?,
    }
    .ok_or_else(|| Failure::new(format!("VM with name = {source_name} does not exist in cluster")))
}

/// The clone, when it exists: `newid`, else a VM named `name` other than the source.
fn existing_clone(ctx: &Ctx, source: &Guest) -> Result<Option<Guest>, Failure> {
    match ctx.task.clone.newid {
        Some(id) => crate::observe::locate::qemu_by_vmid(ctx, id),
        None => Ok(
            crate::observe::locate::qemu_named(ctx, ctx.task.name.as_deref(), clone_node(ctx))?
                .filter(|g| g.vmid != source.vmid),
        ),
    }
}

/// The clone exists: a move a run left undone goes first; then it converges like an update.
fn rerun(ctx: &mut Ctx, clone: &Guest, source: &Guest) -> Result<Output, Failure> {
    let vm = vm_of(clone);
    let current = ctx.read_config(&vm)?;
    let name = ctx.name_of(None);
    if let Some(out) = clone_move::continue_move(ctx, clone, source, &current, &name)? {
        return Ok(out);
    }
    // Exactly as `update: true` would; 1.6 words the up-to-date message its own way.
    let up_to_date = format!("vmid {} with VM name {name} already exists", vm.vmid);
    converge_existing(ctx, clone, name, current, ctx.task.config.clone(), up_to_date)
}

/// A new clone: checked, planned (clone, listed, moved, configured) and made.
fn make(ctx: &mut Ctx, source: &Guest) -> Result<Output, Failure> {
    let task = ctx.task;
    decide::clone::refuse_linked_of_non_template(task, source)?;
    let source_vm = vm_of(source);
    let node = task.clone.target.clone().unwrap_or_else(|| source.node.to_string());
    // The source's config: the clone's start (check mode), what the rest of the task is
    // compared with, and where its disks are (a clone to another node).
    let source_config = if decide::clone::reads_source_config(task, ctx.check_mode, &node, &source.node) {
        Some(ctx.read_config(&source_vm)?)
    } else {
        None
    };
    let route = match &source_config {
        Some(c) => clone_move::route(ctx, source.vmid, &source.node, &node, c)?,
        None => None,
    };
    let (newid, allocation) = choose_vmid(ctx, task.clone.newid)?;
    let may_race = allocation == Allocation::NextId;
    check_bridges(ctx, &node, task.config.iter())?;
    check_drives(ctx, &node, task.config.iter())?;
    check_pool(ctx)?;
    // The plan's clone starts as a copy of the source's config (what a check run predicts).
    let clone_source = source_config.clone().filter(|_| ctx.check_mode);
    let changes = rest_of_task(ctx, source, newid, source_config)?;
    let (mut plan, diff) = decide::clone::plan(task, source, newid, allocation, route.as_ref(), changes);
    plan.known.clone_source = clone_source;
    let name = ctx.name_of(None);
    let mut outcome = crate::execute::execute(ctx, &mut plan, name.clone())?;
    if let Some(found) = outcome.adopted {
        // Another run made this clone at the same moment: that VM is the clone.
        ctx.learn_name(&found, &name);
        return clone(ctx);
    }
    let vm = plan.vm.clone();
    crate::present::warn_of_twins(ctx, may_race, &vm, outcome.listing.take());
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
    crate::report::devices::with_mac_and_devices(ctx, out, &vm, outcome.config.as_ref())
}

/// The rest of the task ([`decide::clone::wanted`]) compared with the source's config,
/// the clone's copy (`None`: nothing else to apply).
fn rest_of_task(
    ctx: &Ctx,
    source: &Guest,
    newid: u32,
    source_config: Option<Map<String, Value>>,
) -> Result<Option<Changes>, Failure> {
    let wanted = decide::clone::wanted(ctx.task);
    if wanted.is_empty() {
        return Ok(None);
    }
    let source_config = match source_config {
        Some(c) => c,
        None => ctx.read_config(&vm_of(source))?,
    };
    converge::changes(&source_config, &wanted, newid, &ctx.tag_case)
        .map(Some)
        .map_err(|e| Failure::new(e).with("vmid", newid))
}
