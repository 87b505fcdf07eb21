//! The `mac` and `devices` results: read from the config the task already has (the one
//! observed, or the one an update read back), and in check mode from the config the
//! run's own effects predict; values only PVE decides are null and listed as unknown.

use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::plan::{overlay, unknown, RunPlan};
use serde_json::{Map, Value};

use crate::api::{self, Vm};
use crate::context::Ctx;

/// Adds `mac` and `devices` read from `config`; without one (a VM just made), from the
/// config the run predicts (check mode) or the VM's live config.
pub fn with_mac_and_devices(
    ctx: &Ctx,
    out: Output,
    vm: &Vm,
    config: Option<&Map<String, Value>>,
) -> Result<Output, Failure> {
    let fetched;
    let config = match config {
        Some(c) => c,
        None if ctx.check_mode && ctx.listing.listed_name(vm.vmid).is_none() => {
            match predicted_config(ctx, vm.vmid, None) {
                Some(c) => {
                    fetched = c;
                    &fetched
                }
                None => return Ok(out.with("mac", Map::new()).with("devices", Map::new())),
            }
        }
        None => {
            fetched = ctx.read_config(vm)?;
            &fetched
        }
    };
    let predicted = ctx
        .check_mode
        .then(|| predicted_config(ctx, vm.vmid, Some(config)))
        .flatten();
    let (mut mac, mut devices) = api::mac_and_devices(predicted.as_ref().unwrap_or(config));
    // A dry run does not know what PVE will decide: null, and listed as such.
    let mut later = unknown::null_unknowns(&mut mac, "mac");
    later.extend(unknown::null_unknowns(&mut devices, "devices"));
    let out = out.with("mac", mac).with("devices", devices);
    Ok(if later.is_empty() {
        out
    } else {
        out.with(unknown::RESULT_KEY, later)
    })
}

/// The config a check-mode run predicts for the VM once its effects are applied
/// (`real`: the config read; `None` for a VM the run creates).
fn predicted_config(ctx: &Ctx, vmid: u32, real: Option<&Map<String, Value>>) -> Option<Map<String, Value>> {
    let plan = RunPlan {
        effects: ctx.effects.as_slice().to_vec(),
    };
    let vm = plan.vms().remove(&vmid)?;
    let real = real.filter(|_| !vm.created).cloned().map(Value::Object);
    Some(overlay::config(&vm, real, false))
}
