//! The one update path of a VM that exists: `present` with `update: true` (else the VM
//! left alone, what differs named), and a clone task whose clone exists
//! ([`crate::clone`]). Compared, the cloud-init drive observed where it matters, decided,
//! checked, written, reported.

use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::vm::Guest;
use serde_json::{Map, Value};

use crate::checks::{check_bridges, check_drives, check_pool, newly_referenced};
use crate::decide::update::{Decision, Update};
use crate::execute::execute;
use crate::observe::listing::Listing;
use crate::observe::UpdateObserved;
use crate::plan::Plan;
use crate::report::update::{with_mac_and_devices, Updated};
use crate::step::{Learned, Run};
use crate::task::Config;
use crate::{converge, decide, observe, report};

/// An existing VM: converged with `update`, else left alone and what differs said.
pub(crate) fn existing(run: &Run, listing: &Listing, learned: &mut Learned, guest: &Guest) -> Result<Output, Failure> {
    let task = run.task;
    let observed = observe::existing(run, guest)?;
    let vm = &observed.vm;
    learned.warnings.extend(decide::update::node_warning(task, vm));
    learned.warnings.extend(decide::update::ha_warning(
        task,
        vm,
        observed.ha_managed,
        guest.hastate.as_deref(),
    ));
    if !task.update {
        let differ = converge::changes(&observed.config, &task.config, vm.vmid, &run.tag_case).map(|c| c.keys());
        let (msg, left) = decide::update::left_alone(task, vm, guest.pool.as_ref(), differ);
        learned.warnings.extend(left);
        let out = report::update::left_alone(msg, vm.vmid);
        return Ok(with_mac_and_devices(
            out,
            &learned.effects,
            task.check_mode,
            vm.vmid,
            Some(&observed.config),
        ));
    }
    let to = Existing {
        guest,
        up_to_date: format!("VM {} with vmid {} is up to date", observed.name, vm.vmid),
        name: observed.name,
        current: observed.config,
        wanted: task.config.clone(),
    };
    converge_existing(run, listing, learned, to).map(|c| c.out)
}

/// An existing VM to bring to the task.
pub(crate) struct Existing<'g> {
    pub(crate) guest: &'g Guest,
    /// The name for messages.
    pub(crate) name: String,
    /// Its config, read once.
    pub(crate) current: Map<String, Value>,
    /// The config keys asked for (a clone moved to its node leaves out `name`).
    pub(crate) wanted: Config,
    /// The message when nothing differs (1.6 words it per path).
    pub(crate) up_to_date: String,
}

/// The result of the update path, and what its message says after `updated` when it
/// wrote (what a reboot applied, what stays pending; empty otherwise).
pub(crate) struct Converged {
    pub(crate) out: Output,
    pub(crate) after_update: String,
}

/// The one update path, of `update: true` and of a clone task whose clone exists:
/// compared, the cloud-init drive observed where it matters, decided, checked, written,
/// reported.
pub(crate) fn converge_existing(
    run: &Run,
    listing: &Listing,
    learned: &mut Learned,
    to: Existing,
) -> Result<Converged, Failure> {
    let id = to.guest.vmid;
    let (changes, warning) = decide::update::compare(run.task, id, &to.current, &to.wanted, &run.tag_case)?;
    learned.warnings.extend(warning);
    let observed = observe::for_update(run, to.guest, to.name, to.current, &to.wanted)?;
    let out = match decide::update::decide(run.task, &observed, to.wanted, changes, to.up_to_date)? {
        Decision::UpToDate(msg) => report::update::up_to_date(msg, id),
        Decision::NotInGuest { msg, waiting } => report::update::not_in_guest(msg, id, waiting),
        Decision::RebootForGuest { msg, diff, actions } => {
            let mut plan = Plan::of(observed.vm.clone(), actions);
            execute(run, listing, learned, &mut plan, observed.name.clone())?;
            report::update::rebooted_for_guest(msg, id, plan.describe(), diff)
        }
        Decision::Update(u) => return apply(run, listing, learned, &observed, u),
    };
    let out = with_mac_and_devices(out, &learned.effects, run.task.check_mode, id, Some(&observed.config));
    Ok(Converged {
        out,
        after_update: String::new(),
    })
}

/// The update's writes: what they name checked, pending changes predicted (check mode),
/// executed, reported with `mac` and `devices` of the config read back.
fn apply(
    run: &Run,
    listing: &Listing,
    learned: &mut Learned,
    observed: &UpdateObserved,
    u: Update,
) -> Result<Converged, Failure> {
    let (vm, current) = (&observed.vm, &observed.config);
    check_bridges(run, &vm.node, u.changes.set.iter())?;
    check_drives(run, listing, &vm.node, newly_referenced(&u.changes, current))?;
    if u.moves_pool {
        check_pool(run)?;
    }
    let predicted = observe::pending_before_update(run, observed)?
        .map(|already| decide::update::predicted_pending(&u.changes, current, already))
        .unwrap_or_default();
    let mut plan = Plan::of(vm.clone(), u.actions);
    plan.known.current = Some(current.clone());
    plan.known.pending = predicted.clone();
    let mut outcome = execute(run, listing, learned, &mut plan, observed.name.clone())?;
    if run.task.check_mode {
        // Nothing was written: report what PVE's hotplug rules would leave pending.
        outcome.rebooted_for_pending = u.reboot && !(predicted.is_empty() && u.not_in_guest.is_empty());
        outcome.pending = predicted;
    }
    let (out, after_update) = report::update::updated(Updated {
        name: observed.name.clone(),
        vmid: vm.vmid,
        keys: u.keys,
        actions: plan.describe(),
        diff: u.diff,
        rebooted_for_pending: outcome.rebooted_for_pending,
        pending: outcome.pending,
        not_in_guest: u.not_in_guest,
    });
    let config = outcome.config.as_ref().unwrap_or(current);
    let out = with_mac_and_devices(out, &learned.effects, run.task.check_mode, vm.vmid, Some(config));
    Ok(Converged { out, after_update })
}
