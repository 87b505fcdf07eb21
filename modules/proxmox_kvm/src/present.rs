//! `state: present`: create (or restore) the VM ([`crate::decide::create`]), or
//! converge the existing one with `update: true` ([`crate::update`]), or report how it
//! differs ([`crate::decide::existing`]).

use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::cluster::vm::Guest;
use ferrox_common::plan::PlanView;

use crate::api::{self, Vm};
use crate::checks::{check_bridges, check_drives, check_pool};
use crate::context::Ctx;
use crate::converge;
use crate::decide::{create, existing};
use crate::observe;
use crate::plan::Allocation;
use crate::report;
use crate::update::converge_existing;
use crate::vmid_range;

pub fn present(ctx: &mut Ctx) -> Result<Output, Failure> {
    match crate::observe::locate::target(ctx)? {
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
        return crate::report::devices::with_mac_and_devices(ctx, out, vm, Some(&observed.config));
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
    let node = create::node(task, &ctx.listing.nodes)?;
    ctx.warnings.extend(create::warning(task));
    check_bridges(ctx, &node, task.config.iter())?;
    check_drives(ctx, &node, task.config.iter())?;
    check_pool(ctx)?;
    let (vmid, allocation) = choose_vmid(ctx, task.vmid)?;
    let may_race = allocation == Allocation::NextId;
    let (mut plan, diff) = create::plan(task, Vm { node, vmid }, allocation)?;
    let name = ctx.name_of(None);
    let mut outcome = crate::execute::execute(ctx, &mut plan, name.clone())?;
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
    crate::report::devices::with_mac_and_devices(ctx, out, &vm, outcome.config.as_ref())
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
            let listed = ctx.listing.listed_name(id);
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
