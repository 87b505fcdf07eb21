//! `state: present`: create (or restore) the VM, or converge the existing one with
//! `update: true` ([`crate::update`]), or report how it differs.

use ferrox_common::ansible::diff::Diff;
use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::cluster::vm::Guest;
use ferrox_common::plan::PlanView;
use serde_json::{Map, Value};

use crate::api::{self, Vm};
use crate::checks::{check_bridges, check_drives, check_efi_bios, check_pool};
use crate::context::{vm_of, Ctx};
use crate::converge;
use crate::plan::{Action, Allocation, Plan};
use crate::update::{converge_existing, pool_move, warn_without_drive};
use crate::vmid_range;

pub fn present(ctx: &mut Ctx) -> Result<Output, Failure> {
    match ctx.target()? {
        Some(guest) => existing(ctx, &guest),
        None => create(ctx),
    }
}

/// An existing VM: converge it with `update`, else leave it and say what differs.
fn existing(ctx: &mut Ctx, guest: &Guest) -> Result<Output, Failure> {
    let vm = vm_of(guest);
    let name = ctx.name_of(Some(guest));
    let current = ctx.read_config(&vm)?;
    let wanted = ctx.task.config.clone();
    if let Some(node) = ctx.task.node.as_deref().filter(|n| *n != vm.node) {
        ctx.warnings.push(format!(
            "VM {} is on node {}, not {node}: node only says where to create a VM (use migrate: true to move it)",
            vm.vmid, vm.node
        ));
    }
    if ctx.task.ha_managed && !api::power(ctx.client, &vm).is_ok_and(|p| p.ha_managed) {
        ctx.warnings.push(format!(
            "VM {} exists and is not HA-managed: ha_managed applies when a VM is created. Add it to HA with ha-manager add vm:{} (or POST /cluster/ha/resources)",
            vm.vmid, vm.vmid
        ));
    }
    if !ctx.task.update {
        let pool_move = pool_move(ctx, guest);
        let out = Output::unchanged(format!("VM with vmid <{}> already exists", vm.vmid)).with("vmid", vm.vmid);
        let mut differ = match converge::changes(&current, &wanted, vm.vmid, &ctx.tag_case) {
            Ok(c) => c.keys(),
            Err(e) => {
                ctx.warnings.push(format!("VM {} differs from the task: {e}", vm.vmid));
                Vec::new()
            }
        };
        if pool_move.is_some() {
            differ.push("pool".to_string());
        }
        if !differ.is_empty() {
            ctx.warnings.push(format!(
                "VM {} differs from the task in: {}. Nothing was changed: add update: true to converge it.",
                vm.vmid,
                differ.join(", ")
            ));
        }
        return ctx.with_mac_and_devices(out.with("actions", Vec::<String>::new()), &vm, Some(&current));
    }
    let up_to_date = format!("VM {name} with vmid {} is up to date", vm.vmid);
    converge_existing(ctx, guest, name, current, wanted, up_to_date)
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
        warn_without_drive(ctx, &who, &wanted, &Map::new());
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
