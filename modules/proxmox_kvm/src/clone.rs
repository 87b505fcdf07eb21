//! The driver of `clone`: make the clone unless it exists, then apply the rest of the
//! task to it in the same run. Without `newid`, a VM named `name` (other than the source)
//! is the clone.
//! A clone that exists converges exactly as `update: true` would: the update task
//! ([`crate::update::UpdateExisting`]) run with `driver::steps`, after a move to its node
//! that a run left undone ([`continue_move`]), whose message the update's result starts with; a new one is decided by [`crate::decide::clone`], a clone to
//! another node's local storage taking the route of [`crate::decide::clone_route`].

use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::tags::TagCase;
use ferrox_cluster::vm::Guest;
use ferrox_run::driver::{self, Cx};
use ferrox_run::vm_task::{self, LockWording};
use serde_json::{Map, Value};

use crate::checks::{check_bridges, check_drives, check_pool};
use crate::converge::{self, Changes};
use crate::decide::clone_route;
use crate::observe::listing::Listing;
use crate::observe::{self, name_of, vm_of};
use crate::plan::{Action, Allocation, Plan};
use crate::report::update::{with_mac_and_devices, Moved};
use crate::step::{Learned, Run};
use crate::task::KvmTask;
use crate::update::{Existing, To, UpdateExisting};
use crate::{decide, name_race};

/// `clone`: make the clone unless it exists, then apply the rest of the task to it.
pub(crate) fn clone<'a>(
    cx: &mut Cx<'_>,
    task: &'a KvmTask,
    tag_case: &TagCase<'a>,
    listing: &mut Listing,
    learned: &mut Learned,
) -> Result<Output, Failure> {
    if task.ha_managed {
        learned.warnings.push("ha_managed applies when a VM is created or restored; PVE's clone has no such parameter, so the clone is not HA-managed. Add it to HA with ha-manager add vm:<vmid> (or POST /cluster/ha/resources)".to_string());
    }
    let run = Run::on(cx, task, tag_case);
    let source = observe::clone_source(&run, listing)?;
    match observe::existing_clone(&run, listing, &source)? {
        Some(clone) => rerun(cx, task, tag_case, listing, learned, &clone, &source),
        None => make(cx, task, tag_case, listing, learned, &source),
    }
}

/// The clone exists: a move a run left undone goes first; then it converges like an
/// update, a task of the driver ([`UpdateExisting`]).
fn rerun<'a>(
    cx: &mut Cx<'_>,
    task: &'a KvmTask,
    tag_case: &TagCase<'a>,
    listing: &Listing,
    learned: &mut Learned,
    clone: &Guest,
    source: &Guest,
) -> Result<Output, Failure> {
    let vm = vm_of(clone);
    let current = observe::config(cx.client, &vm)?;
    let name = name_of(task, None);
    let run = Run::on(cx, task, tag_case);
    if let Some((moved, guest)) = continue_move(&run, listing, learned, clone, source, &current, &name)? {
        // The migration rewrote the config (its volumes, its digest); a dry run has only the old.
        let current = if task.check_mode {
            current
        } else {
            observe::config(cx.client, &vm_of(&guest))?
        };
        let mut wanted = task.config.clone();
        wanted.remove("name");
        let existing = Existing {
            guest: &guest,
            name,
            current,
            wanted,
            up_to_date: String::new(),
        };
        let to = To::Clone {
            existing: Box::new(existing),
            moved: Some(moved),
        };
        return driver::steps(cx, &UpdateExisting::new(task, listing, tag_case.clone(), to));
    }
    // Exactly as `update: true` would; 1.6 words the up-to-date message its own way.
    let existing = Existing {
        guest: clone,
        up_to_date: format!("vmid {} with VM name {name} already exists", vm.vmid),
        name,
        current,
        wanted: task.config.clone(),
    };
    let to = To::Clone {
        existing: Box::new(existing),
        moved: None,
    };
    driver::steps(cx, &UpdateExisting::new(task, listing, tag_case.clone(), to))
}

/// A new clone: checked, planned (clone, listed, moved, configured) and made.
fn make<'a>(
    cx: &mut Cx<'_>,
    task: &'a KvmTask,
    tag_case: &TagCase<'a>,
    listing: &mut Listing,
    learned: &mut Learned,
    source: &Guest,
) -> Result<Output, Failure> {
    let run = Run::on(cx, task, tag_case);
    let run = &run;
    decide::clone::refuse_linked_of_non_template(task, source)?;
    let source_vm = vm_of(source);
    let node = task.clone.target.clone().unwrap_or_else(|| source.node.to_string());
    // The source's config: the clone's start (check mode), what the rest of the task is
    // compared with, and where its disks are (a clone to another node).
    let source_config = if decide::clone::reads_source_config(task, task.check_mode, &node, &source.node) {
        Some(observe::config(run.client, &source_vm)?)
    } else {
        None
    };
    let route = match &source_config {
        Some(c) => clone_route::route(task, &listing.storages, source.vmid, &source.node, &node, c)?,
        None => None,
    };
    let (newid, allocation) = observe::vmid::choose(run, listing, task.clone.newid)?;
    let may_race = allocation == Allocation::NextId;
    check_bridges(run, &node, task.config.iter())?;
    check_drives(run, listing, &node, task.config.iter())?;
    check_pool(run)?;
    // The plan's clone starts as a copy of the source's config (what a check run predicts).
    let clone_source = source_config.clone().filter(|_| task.check_mode);
    let changes = rest_of_task(run, source, newid, source_config)?;
    let (mut plan, diff) = decide::clone::plan(task, source, newid, allocation, route.as_ref(), changes);
    plan.known.clone_source = clone_source;
    let name = name_of(task, None);
    let mut outcome = crate::execute::execute(run, listing, learned, &mut plan, name.clone())?;
    if let Some(found) = outcome.adopted {
        // Another run made this clone at the same moment: that VM is the clone.
        listing.learn_name(&found, &name, task.pool.as_ref());
        return clone(cx, task, tag_case, listing, learned);
    }
    let vm = plan.vm.clone();
    name_race::after_create(run, may_race, &vm, outcome.listing.take(), learned);
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
    let config = observe::made_config(run, listing, &vm, outcome.config.take())?;
    Ok(with_mac_and_devices(
        out,
        learned.effects.as_slice(),
        task.check_mode,
        vm.vmid,
        config.as_ref(),
    ))
}

/// The rest of the task ([`decide::clone::wanted`]) compared with the source's config,
/// the clone's copy (`None`: nothing else to apply).
fn rest_of_task(
    run: &Run,
    source: &Guest,
    newid: u32,
    source_config: Option<Map<String, Value>>,
) -> Result<Option<Changes>, Failure> {
    let wanted = decide::clone::wanted(run.task);
    if wanted.is_empty() {
        return Ok(None);
    }
    let source_config = match source_config {
        Some(c) => c,
        None => observe::config(run.client, &vm_of(source))?,
    };
    converge::changes(&source_config, &wanted, newid, &run.tag_case)
        .map(Some)
        .map_err(|e| Failure::new(e).with("vmid", newid))
}

/// A clone a run left on the source's node before its move: stopped, while the task
/// wants it on `target` and its disks cannot be cloned there. The rerun moves it (then
/// converges it as `update: true` would): what the move did and the clone where it is
/// now; `None` when no move is left to do. `current`: the clone's config, read once;
/// `name`: the name for messages.
fn continue_move(
    run: &Run,
    listing: &Listing,
    learned: &mut Learned,
    clone: &Guest,
    source: &Guest,
    current: &Map<String, Value>,
    name: &str,
) -> Result<Option<(Moved, Guest)>, Failure> {
    let Some(target) = run.task.clone.target.clone().filter(|t| *t != *clone.node) else {
        return Ok(None);
    };
    if clone.node != source.node || clone.status.as_deref() != Some("stopped") {
        return Ok(None);
    }
    let Some(route) = clone_route::route(run.task, &listing.storages, clone.vmid, &clone.node, &target, current)?
    else {
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
    crate::execute::execute(run, listing, learned, &mut plan, name.to_string())?;
    let moved = Guest {
        node: target.as_str().into(),
        ..clone.clone()
    };
    let done = Moved {
        name: name.to_string(),
        vmid: vm.vmid,
        from: vm.node.clone(),
        to: target,
        actions: plan.describe(),
    };
    Ok(Some((done, moved)))
}
