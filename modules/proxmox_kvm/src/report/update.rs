//! The results of `present` on an existing VM: left alone, up to date, cloud-init
//! changes still to reach the guest, rebooted for them, or updated (1.6's message
//! with what a reboot applied or what stays pending). `mac` and `devices` are added by
//! [`crate::report::devices`].

use ferrox_common::ansible::diff::Diff;
use ferrox_common::ansible::protocol::Output;
use serde_json::{Map, Value};

use crate::decide::update::not_in_guest_clause;

/// Unchanged with no `changes` key: `update: false`.
pub fn left_alone(msg: String, vmid: u32) -> Output {
    Output::unchanged(msg)
        .with("vmid", vmid)
        .with("actions", Vec::<String>::new())
}

/// Nothing differs.
pub fn up_to_date(msg: String, vmid: u32) -> Output {
    Output::unchanged(msg)
        .with("vmid", vmid)
        .with("changes", Vec::<String>::new())
        .with("actions", Vec::<String>::new())
}

/// Nothing to write, the cloud-init changes the drive lacks listed as pending.
pub fn not_in_guest(msg: String, vmid: u32, waiting: Map<String, Value>) -> Output {
    Output::unchanged(msg)
        .with("vmid", vmid)
        .with("changes", Vec::<String>::new())
        .with("pending", waiting)
        .with("actions", Vec::<String>::new())
}

/// Rebooted to bring the cloud-init changes to the guest.
pub fn rebooted_for_guest(msg: String, vmid: u32, actions: Vec<String>, diff: Diff) -> Output {
    Output::changed(msg)
        .with("vmid", vmid)
        .with("changes", Vec::<String>::new())
        .with("pending", Map::new())
        .with("actions", actions)
        .with_diff(diff)
}

/// What an update wrote (or would write).
pub struct Updated {
    pub name: String,
    pub vmid: u32,
    /// The `changes` result.
    pub keys: Vec<String>,
    pub actions: Vec<String>,
    pub diff: Diff,
    /// A reboot applied what was pending (`apply_pending: reboot`).
    pub rebooted_for_pending: bool,
    /// What PVE keeps pending until the VM restarts (read back, or predicted).
    pub pending: Map<String, Value>,
    /// Cloud-init keys the drive lacks after the write.
    pub not_in_guest: Map<String, Value>,
}

/// The result of an update: 1.6's message, then what a reboot applied, or what stays
/// pending and what the cloud-init drive lacks.
pub fn updated(u: Updated) -> Output {
    let mut msg = format!("VM {} with vmid {} updated", u.name, u.vmid);
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
    Output::changed(msg)
        .with("vmid", u.vmid)
        .with("changes", u.keys)
        .with("pending", sorted(pending))
        .with("actions", u.actions)
        .with_diff(u.diff)
}

fn sorted(map: Map<String, Value>) -> Map<String, Value> {
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}
