//! The results of `present` on an existing VM: left alone, up to date, cloud-init
//! changes still to reach the guest, rebooted for them, or updated (1.6's message
//! with what a reboot applied or what stays pending); and the `mac` and `devices` of
//! every result about a VM's config (also a create's and a clone's), from the config the
//! task has in hand, and in check mode from the config the run's own effects predict;
//! values only PVE decides are null and listed as unknown.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Output;
use ferrox_dryrun::{overlay, Effect, RunPlan};
use ferrox_pve_rules::unknown;
use serde_json::{Map, Value};

use crate::api;
use crate::decide::update::not_in_guest_clause;

/// Unchanged with no `changes` key: `update: false`.
pub(crate) fn left_alone(msg: String, vmid: u32) -> Output {
    Output::unchanged(msg)
        .with("vmid", vmid)
        .with("actions", Vec::<String>::new())
}

/// Nothing differs.
pub(crate) fn up_to_date(msg: String, vmid: u32) -> Output {
    Output::unchanged(msg)
        .with("vmid", vmid)
        .with("changes", Vec::<String>::new())
        .with("actions", Vec::<String>::new())
}

/// Nothing to write, the cloud-init changes the drive lacks listed as pending.
pub(crate) fn not_in_guest(msg: String, vmid: u32, waiting: Map<String, Value>) -> Output {
    Output::unchanged(msg)
        .with("vmid", vmid)
        .with("changes", Vec::<String>::new())
        .with("pending", waiting)
        .with("actions", Vec::<String>::new())
}

/// Rebooted to bring the cloud-init changes to the guest.
pub(crate) fn rebooted_for_guest(msg: String, vmid: u32, actions: Vec<String>, diff: Diff) -> Output {
    Output::changed(msg)
        .with("vmid", vmid)
        .with("changes", Vec::<String>::new())
        .with("pending", Map::new())
        .with("actions", actions)
        .with_diff(diff)
}

/// What an update wrote (or would write).
pub(crate) struct Updated {
    pub(crate) name: String,
    pub(crate) vmid: u32,
    /// The `changes` result.
    pub(crate) keys: Vec<String>,
    pub(crate) actions: Vec<String>,
    pub(crate) diff: Diff,
    /// A reboot applied what was pending (`apply_pending: reboot`).
    pub(crate) rebooted_for_pending: bool,
    /// What PVE keeps pending until the VM restarts (read back, or predicted).
    pub(crate) pending: Map<String, Value>,
    /// Cloud-init keys the drive lacks after the write.
    pub(crate) not_in_guest: Map<String, Value>,
}

/// The result of an update: 1.6's message, then what a reboot applied, or what stays
/// pending and what the cloud-init drive lacks; and those clauses alone, which a clone
/// moved to its node first words after its own message.
pub(crate) fn updated(u: Updated) -> (Output, String) {
    let mut msg = String::new();
    let key_list = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>().join(", ");
    let mut pending = Map::new();
    if u.rebooted_for_pending {
        let mut applied = u.pending.clone();
        applied.extend(u.not_in_guest);
        msg.push_str(&format!("; rebooted to apply {}", key_list(&sorted(applied))));
    } else {
        if !u.pending.is_empty() {
            msg.push_str(&format!(
                "; pending until the VM restarts: {} (restart it, or use apply_pending: reboot)",
                key_list(&u.pending)
            ));
        }
        if !u.not_in_guest.is_empty() {
            msg.push_str(&format!("; {}", not_in_guest_clause(&u.not_in_guest)));
        }
        pending.extend(u.pending);
        pending.extend(u.not_in_guest);
    }
    let out = Output::changed(format!("VM {} with vmid {} updated{msg}", u.name, u.vmid))
        .with("vmid", u.vmid)
        .with("changes", u.keys)
        .with("pending", sorted(pending))
        .with("actions", u.actions)
        .with_diff(u.diff);
    (out, msg)
}

/// A clone a run left on the source's node, moved to it first: what the move did
/// (for the result of both steps).
#[derive(Debug, Clone)]
pub(crate) struct Moved {
    /// The name for messages.
    pub(crate) name: String,
    pub(crate) vmid: u32,
    /// The node it was made on, and the one it moved to.
    pub(crate) from: String,
    pub(crate) to: String,
    /// The move's `actions`.
    pub(crate) actions: Vec<String>,
}

/// One result for a clone moved, then converged: the move's message first, then what
/// the update added (`after_update`, the update's clauses), the move's diff and actions
/// before the update's.
pub(crate) fn moved_then(mut converged: Output, after_update: &str, moved: &Moved) -> Output {
    let Moved {
        name,
        vmid,
        from,
        to,
        actions,
    } = moved;
    let mut diff = Diff::new(format!("VM {vmid}"));
    diff.change("node", Some(Value::from(from.clone())), Some(Value::from(to.clone())));
    if let Some(update) = converged.take_diff() {
        diff.before.extend(update.before);
        diff.after.extend(update.after);
    }
    let mut actions = actions.clone();
    actions.extend(
        converged
            .get("actions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string),
    );
    converged.set("changed", true);
    converged.set(
        "msg",
        format!("VM {name} with vmid {vmid} moved from {from} to {to}, where the clone is to be{after_update}"),
    );
    converged.set("actions", actions);
    converged.with_diff(diff)
}

fn sorted(map: Map<String, Value>) -> Map<String, Value> {
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

/// Adds `mac` and `devices` read from `config`: the one observed or read back, `None`
/// for a VM a check run makes (then from the config the run's effects predict).
pub(crate) fn with_mac_and_devices(
    out: Output,
    effects: &[Effect],
    check_mode: bool,
    vmid: u32,
    config: Option<&Map<String, Value>>,
) -> Output {
    let made;
    let config = match config {
        Some(c) => c,
        None => match predicted_config(effects, vmid, None) {
            Some(c) => {
                made = c;
                &made
            }
            None => return out.with("mac", Map::new()).with("devices", Map::new()),
        },
    };
    let predicted = check_mode
        .then(|| predicted_config(effects, vmid, Some(config)))
        .flatten();
    let (mut mac, mut devices) = api::mac_and_devices(predicted.as_ref().unwrap_or(config));
    // A dry run does not know what PVE will decide: null, and listed as such.
    let mut later = unknown::null_unknowns(&mut mac, "mac");
    later.extend(unknown::null_unknowns(&mut devices, "devices"));
    let out = out.with("mac", mac).with("devices", devices);
    if later.is_empty() {
        out
    } else {
        out.with(unknown::RESULT_KEY, later)
    }
}

/// The config a check-mode run predicts for the VM once its effects are applied
/// (`real`: the config read; `None` for a VM the run creates).
fn predicted_config(effects: &[Effect], vmid: u32, real: Option<&Map<String, Value>>) -> Option<Map<String, Value>> {
    let plan = RunPlan {
        effects: effects.to_vec(),
    };
    let vm = plan.vms().remove(&vmid)?;
    let real = real.filter(|_| !vm.created).cloned().map(Value::Object);
    Some(overlay::config(&vm, real, false))
}
