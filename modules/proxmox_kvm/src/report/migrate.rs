//! The result of `migrate: true`.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Output;

/// The VM is on the target node already.
pub(crate) fn unchanged(msg: String, vmid: u32) -> Output {
    Output::unchanged(msg)
        .with("vmid", vmid)
        .with("actions", Vec::<String>::new())
}

/// The VM was migrated (or would be, in check mode).
pub(crate) fn changed(msg: String, vmid: u32, actions: Vec<String>, diff: Diff) -> Output {
    Output::changed(msg)
        .with("vmid", vmid)
        .with("actions", actions)
        .with_diff(diff)
}
