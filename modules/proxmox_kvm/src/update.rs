//! Converging an existing VM: the one update path, of `update: true` and of a clone
//! task whose clone exists ([`converge_existing`]): compare, observe the cloud-init
//! drive where it matters ([`crate::observe::for_update`]), decide
//! ([`crate::decide::update`], pure), check what the writes name, execute, report
//! ([`crate::report::update`]).

use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::cluster::vm::Guest;
use ferrox_common::run::vm_task::{self, InfoWording};
use serde_json::{Map, Value};

use crate::api;
use crate::checks::{check_bridges, check_drives, check_efi_bios, check_pool, newly_referenced};
use crate::context::{vm_of, Ctx};
use crate::converge;
use crate::decide::update::{self, Decision, Update};
use crate::observe::{self, UpdateObserved};
use crate::plan::Plan;
use crate::report;
use crate::report::update::Updated;
use crate::task::Config;

/// Brings an existing VM to what the task asks. `current`: its config, read once;
/// `wanted`: the config keys asked for (a clone moved to its node leaves out `name`);
/// `up_to_date`: the message when nothing differs (1.6 words it per path).
pub(crate) fn converge_existing(
    ctx: &mut Ctx,
    guest: &Guest,
    name: String,
    current: Map<String, Value>,
    wanted: Config,
    up_to_date: String,
) -> Result<Output, Failure> {
    let vm = vm_of(guest);
    check_efi_bios(ctx.task, &wanted, Some(&current))?;
    let changes = converge::changes(&current, &wanted, vm.vmid, &ctx.tag_case)
        .map_err(|e| Failure::new(e).with("vmid", vm.vmid))?;
    let vm_named = format!("VM {}", vm.vmid);
    ctx.warnings
        .extend(update::without_drive_warning(&vm_named, &wanted, &current));
    let observed = observe::for_update(ctx, guest, name, current, &wanted)?;
    let id = vm.vmid;
    match update::decide(ctx.task, &observed, wanted, changes, up_to_date)? {
        Decision::UpToDate(msg) => finish(ctx, report::update::up_to_date(msg, id), &observed, None),
        Decision::NotInGuest { msg, waiting } => {
            finish(ctx, report::update::not_in_guest(msg, id, waiting), &observed, None)
        }
        Decision::RebootForGuest { msg, diff, actions } => {
            let mut plan = Plan::of(vm, actions);
            crate::execute::execute(ctx, &mut plan, observed.name.clone())?;
            let out = report::update::rebooted_for_guest(msg, id, plan.describe(), diff);
            finish(ctx, out, &observed, None)
        }
        Decision::Update(u) => apply(ctx, &observed, u),
    }
}

/// The update's writes: what they name checked, pending changes predicted (check mode),
/// executed, reported.
fn apply(ctx: &mut Ctx, observed: &UpdateObserved, u: Update) -> Result<Output, Failure> {
    let (vm, current) = (&observed.vm, &observed.config);
    check_bridges(ctx, &vm.node, u.changes.set.iter())?;
    check_drives(ctx, &vm.node, newly_referenced(&u.changes, current))?;
    if u.moves_pool {
        check_pool(ctx)?;
    }
    let predicted = if observed.running && ctx.check_mode {
        let already = api::pending(ctx.client, vm)
            .map_err(|e| vm_task::info_failure(vm.vmid, InfoWording::WithVmidEquals, e))?
            .waiting;
        update::predicted_pending(&u.changes, current, already)
    } else {
        Map::new()
    };
    let mut plan = Plan::of(vm.clone(), u.actions);
    plan.known.current = Some(current.clone());
    plan.known.pending = predicted.clone();
    let mut outcome = crate::execute::execute(ctx, &mut plan, observed.name.clone())?;
    if ctx.check_mode {
        // Nothing was written: report what PVE's hotplug rules would leave pending.
        outcome.rebooted_for_pending = u.reboot && !(predicted.is_empty() && u.not_in_guest.is_empty());
        outcome.pending = predicted;
    }
    let out = report::update::updated(Updated {
        name: observed.name.clone(),
        vmid: vm.vmid,
        keys: u.keys,
        actions: plan.describe(),
        diff: u.diff,
        rebooted_for_pending: outcome.rebooted_for_pending,
        pending: outcome.pending,
        not_in_guest: u.not_in_guest,
    });
    finish(ctx, out, observed, outcome.config.as_ref())
}

/// `mac` and `devices`, from the config an update read back, else the one observed.
fn finish(
    ctx: &Ctx,
    out: Output,
    observed: &UpdateObserved,
    read_back: Option<&Map<String, Value>>,
) -> Result<Output, Failure> {
    crate::report::devices::with_mac_and_devices(ctx, out, &observed.vm, Some(read_back.unwrap_or(&observed.config)))
}
