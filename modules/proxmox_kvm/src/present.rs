//! `state: present`: create (or restore) the VM, or converge the existing one with
//! `update: true` ([`crate::update`]), or report how it differs.

use ferrox_common::ansible::diff::Diff;
use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::cluster::vm::Guest;
use ferrox_common::plan::PlanView;
use serde_json::{Map, Value};

use crate::api::{self, Vm};
use crate::checks::{check_bridges, check_drives, check_efi_bios, check_pool};
use crate::context::Ctx;
use crate::converge;
use crate::decide::{existing, update};
use crate::observe;
use crate::plan::{Action, Allocation, Plan};
use crate::report;
use crate::update::converge_existing;
use crate::vmid_range;

pub fn present(ctx: &mut Ctx) -> Result<Output, Failure> {
    match ctx.target()? {
        Some(guest) => existing(ctx, &guest),
        None => create(ctx),
    }
}

/// An existing VM: converge it with `update`, else leave it and say what differs.
fn existing(ctx: &mut Ctx, guest: &Guest) -> Result<Output, Failure> {
    let task = ctx.task;
    let observed = observe::existing(ctx, guest)?;
    let vm = &observed.vm;
    ctx.warnings.extend(existing::node_warning(task, vm));
    ctx.warnings.extend(existing::ha_warning(task, vm, observed.ha_managed));
    if !task.update {
        let differ = converge::changes(&observed.config, &task.config, vm.vmid, &ctx.tag_case).map(|c| c.keys());
        let (msg, warnings) = existing::left_alone(task, vm, guest.pool.as_ref(), differ);
        ctx.warnings.extend(warnings);
        let out = report::update::left_alone(msg, vm.vmid);
        return ctx.with_mac_and_devices(out, vm, Some(&observed.config));
    }
    let up_to_date = format!("VM {} with vmid {} is up to date", observed.name, vm.vmid);
    converge_existing(
        ctx,
        guest,
        observed.name,
        observed.config,
        task.config.clone(),
        up_to_date,
    )
}

/// A new VM (or a restore from `archive`).
fn create(ctx: &mut Ctx) -> Result<Output, Failure> {
    let task = ctx.task;
    let node = task.node.clone().ok_or("node is mandatory for creating/updating VM")?;
    if !ctx.nodes.contains(&node) {
        return Err(Failure::new(format!(
            "node '{node}' does not exist in cluster (nodes: {})",
            ctx.nodes.join(", ")
        )));
    }
    let wanted = task.config.clone();
    if task.restore.archive.is_none() {
        let who = task
            .name
            .as_ref()
            .map_or("The new VM".to_string(), |n| format!("The new VM {n}"));
        ctx.warnings
            .extend(update::without_drive_warning(&who, &wanted, &Map::new()));
    }
    check_bridges(ctx, &node, wanted.iter())?;
    check_drives(ctx, &node, wanted.iter())?;
    check_pool(ctx)?;
    let (vmid, allocation) = choose_vmid(ctx, task.vmid)?;
    let may_race = allocation == Allocation::NextId;
    let vm = Vm { node, vmid };
    let name = ctx.name_of(None);
    let mut plan = Plan::new(vm.clone());
    let mut diff = Diff::new(format!("VM {vmid}"));
    let archive = task.restore.archive.as_deref();
    let mut form: Vec<(String, String)> = Vec::new();
    for (param, value) in [
        ("pool", &task.pool),
        ("storage", &task.storage),
        ("archive", &task.restore.archive),
    ] {
        if let Some(v) = value {
            form.push((param.to_string(), v.clone()));
        }
    }
    if task.ha_managed {
        form.push(("ha-managed".into(), "1".into()));
    }
    if archive.is_some() {
        // PVE restores the archive's config and takes no config keys with it: the rest
        // of the task is applied once the restore is done.
        if task.force {
            form.push(("force".into(), "1".into()));
        }
        if let Some(limit) = task.bwlimit {
            form.push(("bwlimit".into(), limit.to_string()));
        }
        for (param, value) in [
            ("unique", task.restore.unique),
            ("live-restore", task.restore.live_restore),
        ] {
            if let Some(on) = value {
                form.push((param.into(), u8::from(on).to_string()));
            }
        }
        plan.push(Action::Create { form, allocation });
        plan.push(Action::WaitListed);
        if !wanted.is_empty() {
            let changes = converge::changes(&Map::new(), &wanted, vmid, &ctx.tag_case).unwrap_or_default();
            plan.push(Action::Converge {
                wanted: wanted.clone(),
                changes,
                digest: None,
                recompute: true,
            });
        }
    } else {
        check_efi_bios(ctx, &wanted, None)?;
        if let Some(st) = &task.restore.import_working_storage {
            form.push(("import-working-storage".into(), st.clone()));
        }
        form.extend(wanted.iter().map(|(k, v)| (k.clone(), v.clone())));
        plan.push(Action::Create { form, allocation });
        plan.push(Action::WaitListed);
    }
    for (k, v) in &wanted {
        diff.change(k, None, Some(Value::String(v.clone())));
    }
    let mut outcome = ctx.execute(&mut plan, name.clone())?;
    if let Some(found) = outcome.adopted {
        // Another run created this name at the same moment: that VM is the one.
        ctx.learn_name(&found, &name);
        return present(ctx);
    }
    let vm = plan.vm.clone();
    warn_of_twins(ctx, may_race, &vm, outcome.listing.take());
    let out = Output::changed(format!("VM {name} with vmid {} deployed", vm.vmid))
        .with("vmid", vm.vmid)
        .with("actions", plan.describe())
        .with_diff(diff);
    let out = outcome.with_pending(out);
    ctx.with_mac_and_devices(out, &vm, outcome.config.as_ref())
}

/// After a create or clone with PVE's next free id: another VM of the task's name, made
/// by a run at the same moment, is warned of ([`crate::name_race`]).
/// The listing that showed the new VM also feeds the run's name index.
pub(crate) fn warn_of_twins(
    ctx: &mut Ctx,
    may_race: bool,
    vm: &Vm,
    listing: Option<ferrox_common::cluster::vm::Cluster>,
) {
    if let Some(listing) = &listing {
        let name = ctx.task.given_name().map(str::to_string);
        ctx.index_listing(listing, vm.vmid, name.as_deref());
    }
    let Some(name) = ctx.task.given_name().filter(|_| may_race && !ctx.check_mode) else {
        return;
    };
    let others = crate::name_race::others_named(ctx.client, listing, name, vm.vmid);
    if !others.is_empty() {
        ctx.warnings.push(crate::name_race::warning(name, vm.vmid, &others));
    }
}

/// The vmid for a new VM or clone and how it was chosen.
pub(crate) fn choose_vmid(ctx: &Ctx, given: Option<u32>) -> Result<(u32, Allocation), Failure> {
    if let Some(id) = given {
        return Ok((id, Allocation::Given));
    }
    if let Some((first, last)) = ctx.task.vmid_range {
        let name = ctx.task.name.as_deref();
        let reserved = PlanView::of(ctx.client)
            .map(|plan| plan.reserved().clone())
            .unwrap_or_default();
        let id = vmid_range::first_candidate(name, first, last, |id| {
            let listed = ctx.listed_name(id);
            // In check mode, an id the run's plan took earlier stays taken (as for nextid).
            vmid_range::held_by_other(listed, name) || (listed.is_none() && reserved.contains(&id))
        })
        .ok_or_else(|| Failure::new(vmid_range::range_full(first, last)))?;
        let name = name.map(str::to_string);
        return Ok((id, Allocation::Range { first, last, name }));
    }
    let id = api::next_id(ctx.client).map_err(|e| Failure::new(format!("Unable to retrieve next free vmid: {e}")))?;
    Ok((id, Allocation::NextId))
}
