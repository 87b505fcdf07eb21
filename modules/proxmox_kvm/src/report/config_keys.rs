//! The result of `delete` and `revert`.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Output;
use serde_json::{Map, Value};

/// None of the keys was set (or pending).
pub(crate) fn unchanged(msg: String, vmid: u32) -> Output {
    Output::unchanged(msg)
        .with("vmid", vmid)
        .with("actions", Vec::<String>::new())
}

/// The keys were dropped; `pending`: what still waits for a restart (left out when
/// nothing does).
pub(crate) fn changed(msg: String, vmid: u32, actions: Vec<String>, diff: Diff, pending: Map<String, Value>) -> Output {
    let out = Output::changed(msg)
        .with("vmid", vmid)
        .with("actions", actions)
        .with_diff(diff);
    if pending.is_empty() {
        out
    } else {
        out.with("pending", pending)
    }
}
