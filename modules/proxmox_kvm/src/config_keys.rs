//! `delete` and `revert`: config keys removed, pending changes dropped. Each converges:
//! keys that are not set (or not pending) are skipped.

use ferrox_common::ansible::diff::Diff;
use ferrox_common::ansible::protocol::{Failure, Output};
use serde_json::Value;

use crate::api;
use crate::context::{vm_of, Ctx};
use crate::converge::text_of;
use crate::plan::{Action, Plan};
use ferrox_common::pve::hotplug;
use ferrox_common::run::vm_task::{self, LockWording};
use serde_json::Map;

pub fn delete(ctx: &mut Ctx, wanted: &[String]) -> Result<Output, Failure> {
    let guest = ctx.existing_target()?;
    let vm = vm_of(&guest);
    let name = ctx.name_of(Some(&guest));
    let config = api::config(ctx.client, &vm).map_err(|e| {
        Failure::new(format!(
            "Unable to delete settings on VM {name} with vmid {}: {e}",
            vm.vmid
        ))
        .with("vmid", vm.vmid)
    })?;
    let present: Vec<String> = wanted
        .iter()
        .filter(|k| config.contains_key(k.as_str()))
        .cloned()
        .collect();
    if present.is_empty() {
        return Ok(Output::unchanged(format!(
            "Settings {} are not set on VM {name} with vmid {}",
            wanted.join(", "),
            vm.vmid
        ))
        .with("vmid", vm.vmid)
        .with("actions", Vec::<String>::new()));
    }
    vm_task::refuse_locked(
        vm.vmid,
        guest.lock.as_deref(),
        ctx.task.skiplock,
        LockWording::Action {
            prefix: &format!("Unable to delete settings on VM {name} with vmid {}: ", vm.vmid),
        },
    )?;
    let mut diff = Diff::new(format!("VM {}", vm.vmid));
    for k in &present {
        diff.change(k, config.get(k).map(|v| Value::String(text_of(v))), None);
    }
    let running = guest.status.as_deref() == Some("running");
    let features = hotplug::features(config.get("hotplug").map(text_of).as_deref());
    let predicted: Map<String, Value> = present
        .iter()
        .filter(|k| {
            running && hotplug::stays_pending(k, config.get(k.as_str()).map(text_of).as_deref(), None, &features)
        })
        .map(|k| (k.clone(), Value::String("(delete)".into())))
        .collect();
    let mut plan = Plan::new(vm.clone());
    plan.push(Action::DeleteKeys(present.clone()));
    ctx.known.current = Some(config.clone());
    ctx.known.pending_deletes = predicted.keys().cloned().collect();
    ctx.execute(&mut plan, name.clone())?;
    // What waits for a restart: predicted in check mode, read back otherwise.
    let pending = if !running {
        predicted
    } else if ctx.check_mode {
        // A real run reads back what was already pending too.
        let mut all = read_pending(ctx, &vm, "Unable to delete settings on VM", &name)?;
        all.extend(predicted);
        all.retain(|k, v| !(present.contains(k) && v != "(delete)"));
        all.sort_keys();
        all
    } else {
        read_pending(ctx, &vm, "Unable to delete settings on VM", &name)?
    };
    let out = Output::changed(format!("Settings has deleted on VM {name} with vmid {}", vm.vmid))
        .with("vmid", vm.vmid)
        .with("actions", plan.describe())
        .with_diff(diff);
    Ok(if pending.is_empty() {
        out
    } else {
        out.with("pending", pending)
    })
}

/// The changes a running VM keeps pending, read back after a write.
fn read_pending(ctx: &Ctx, vm: &crate::api::Vm, what: &str, name: &str) -> Result<Map<String, Value>, Failure> {
    api::pending(ctx.client, vm).map(|p| p.waiting).map_err(|e| {
        Failure::new(format!(
            "{what} {name} with vmid {}: the change was made, but reading it back failed: {e}",
            vm.vmid
        ))
        .with("vmid", vm.vmid)
    })
}

pub fn revert(ctx: &mut Ctx, wanted: &[String]) -> Result<Output, Failure> {
    let guest = ctx.existing_target()?;
    let vm = vm_of(&guest);
    let name = ctx.name_of(Some(&guest));
    let pending = api::pending(ctx.client, &vm)
        .map_err(|e| {
            Failure::new(format!(
                "Unable to revert settings on VM {name} with vmid {}: Maybe is not a pending task...   {e}",
                vm.vmid
            ))
            .with("vmid", vm.vmid)
        })?
        .waiting;
    let pending_keys: Vec<String> = wanted
        .iter()
        .filter(|k| pending.contains_key(k.as_str()))
        .cloned()
        .collect();
    if pending_keys.is_empty() {
        return Ok(Output::unchanged(format!(
            "No pending changes of {} on VM {name} with vmid {}",
            wanted.join(", "),
            vm.vmid
        ))
        .with("vmid", vm.vmid)
        .with("actions", Vec::<String>::new()));
    }
    vm_task::refuse_locked(
        vm.vmid,
        guest.lock.as_deref(),
        ctx.task.skiplock,
        LockWording::Action {
            prefix: &format!("Unable to revert settings on VM {name} with vmid {}: ", vm.vmid),
        },
    )?;
    let mut diff = Diff::new(format!("VM {} pending", vm.vmid));
    for k in &pending_keys {
        diff.change(k, pending.get(k).cloned(), None);
    }
    let mut plan = Plan::new(vm.clone());
    plan.push(Action::RevertKeys(pending_keys.clone()));
    ctx.execute(&mut plan, name.clone())?;
    // The pending changes the task leaves alone stay pending.
    let left = if ctx.check_mode {
        pending.into_iter().filter(|(k, _)| !pending_keys.contains(k)).collect()
    } else {
        read_pending(ctx, &vm, "Unable to revert settings on VM", &name)?
    };
    let out = Output::changed(format!("Settings has reverted on VM {name} with vmid {}", vm.vmid))
        .with("vmid", vm.vmid)
        .with("actions", plan.describe())
        .with_diff(diff);
    Ok(if left.is_empty() {
        out
    } else {
        out.with("pending", left)
    })
}
