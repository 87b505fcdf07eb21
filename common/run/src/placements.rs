//! The run's placements: the nodes earlier tasks of this `ansible-playbook` run chose for
//! the VMs they created (proxmox_kvm's `placement`), kept by the action plugin
//! (`plugins/plugin_utils/placements.py`) in the run's temp dir. A task that places gets
//! them in [`PLACEMENTS_ARG`] (the plugin holds the run's placement lock meanwhile, so
//! forks choosing at once see each other's choices) and returns its own in
//! [`PLACEMENT_KEY`], which the plugin appends and removes from the result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The argument carrying the run's placements so far.
pub const PLACEMENTS_ARG: &str = "_ferrox_placements";
/// The result key carrying the placement a task made.
pub const PLACEMENT_KEY: &str = "_ferrox_placement";

/// One VM placed by the run: where, and what it takes there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reservation {
    /// The new VM's vmid.
    pub vmid: u32,
    /// The node chosen for it.
    pub node: String,
    /// Its name, when the task gave one.
    #[serde(default)]
    pub name: Option<String>,
    /// The placement group it counts towards (anti-affinity).
    #[serde(default)]
    pub group: Option<String>,
    /// Configured memory, bytes.
    pub memory: u64,
    /// Configured CPUs (cores × sockets).
    pub cpus: u64,
}

/// The placements a task was handed; entries it cannot read are skipped (they only
/// make the choice less informed, never wrong about what exists).
pub fn from_value(value: &Value) -> Vec<Reservation> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unreadable_entries_are_skipped() {
        let given = json!([
            {"vmid": 101, "node": "pve1", "group": "web", "memory": 1024, "cpus": 2},
            {"vmid": "x"},
        ]);
        let got = from_value(&given);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].node.as_str(), got[0].name.as_deref()), ("pve1", None));
        assert!(from_value(&json!(3)).is_empty());
    }
}
