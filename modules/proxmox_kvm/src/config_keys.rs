//! `delete` and `revert`, one flow: observe the VM's config or pending changes
//! ([`crate::observe::config_keys`]), decide ([`crate::decide::config_keys`], pure),
//! execute, read back what stays pending, report ([`crate::report::config_keys`]).

use ferrox_common::ansible::protocol::{Failure, Output};
use serde_json::{Map, Value};

use crate::api;
use crate::context::Ctx;
use crate::decide::config_keys::{self, Decision, KeyEdit, KeysWrite};
use crate::observe::{self, KeysObserved};
use crate::plan::Plan;
use crate::report;

/// Drops the keys `wanted` of the VM the task names: deleted from its config, or their
/// pending changes reverted.
pub fn edit(ctx: &mut Ctx, edit: KeyEdit, wanted: &[String]) -> Result<Output, Failure> {
    let observed = observe::config_keys(ctx, edit)?;
    let id = observed.vm.vmid;
    let write = match config_keys::decide(edit, wanted, ctx.task.skiplock, &observed)? {
        Decision::Unchanged(msg) => return Ok(report::config_keys::unchanged(msg, id)),
        Decision::Act(write) => *write,
    };
    let KeysWrite {
        action,
        msg,
        diff,
        keys,
        predicted,
    } = write;
    let mut plan = Plan::new(observed.vm.clone());
    plan.push(action);
    if edit == KeyEdit::Delete {
        plan.known.current = Some(observed.found.clone());
        plan.known.pending_deletes = predicted.keys().cloned().collect();
    }
    crate::execute::execute(ctx, &mut plan, observed.name.clone())?;
    let read_back = if config_keys::reads_back(edit, observed.running, ctx.check_mode) {
        Some(read_pending(ctx, edit, &observed)?)
    } else {
        None
    };
    let pending = config_keys::pending_after(edit, &keys, predicted, &observed, read_back, ctx.check_mode);
    Ok(report::config_keys::changed(msg, id, plan.describe(), diff, pending))
}

/// The changes a running VM keeps pending, read back after the write.
fn read_pending(ctx: &Ctx, edit: KeyEdit, observed: &KeysObserved) -> Result<Map<String, Value>, Failure> {
    let (vm, name) = (&observed.vm, &observed.name);
    api::pending(ctx.client, vm).map(|p| p.waiting).map_err(|e| {
        Failure::new(format!(
            "{} {name} with vmid {}: the change was made, but reading it back failed: {e}",
            edit.unable(),
            vm.vmid
        ))
        .with("vmid", vm.vmid)
    })
}
