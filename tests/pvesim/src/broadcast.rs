//! What pmxcfs's status broadcast (its rrd dump) holds for a node and its guests, which is
//! where `/cluster/resources` and `GET /nodes` take a node's `maxmem`, `maxcpu`, `level` and
//! a guest's status from (pve-manager `PVE/API2Tools.pm` `extract_node_stats`,
//! `extract_vm_stats`).
//!
//! Each node's pvestatd sends its own and its guests' figures every 10 s; pmxcfs drops an
//! entry older than 5 minutes on every dump (pve-cluster `src/pmxcfs/status.c`,
//! `rrd_entry_is_old`: `diff > 60 * 5`). So a node that has just gone offline is still
//! listed with its last `maxmem`/`maxcpu`/`level` and its guests with their last status,
//! for up to 300 s; an online node whose status daemon sends nothing is `unknown`.

use crate::sim::SimInner;
use crate::state::Cluster;
use crate::util::now_ms;

/// How long pmxcfs keeps an rrd entry after its last update.
pub const RRD_EXPIRE_MS: u64 = 300 * 1000;

/// The state of one node's broadcast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broadcast {
    /// Sent and current: the node is a cluster member and its daemon reports.
    Live,
    /// The node stopped sending less than 300 s ago: its last figures are still listed.
    Kept,
    /// No entry (never sent, or expired).
    Gone,
}

impl Broadcast {
    /// Whether pmxcfs still has the node's (and its guests') entries.
    pub fn has_data(self) -> bool {
        self != Broadcast::Gone
    }
}

/// The broadcast of `node` now. A scenario node with `online: false` has been offline
/// for longer than the expiry; a node fault (`unreachable` or `no_status`) stopped the
/// broadcast when it was added, or `since_secs` before.
pub fn of(sim: &SimInner, c: &Cluster, node: &str) -> Broadcast {
    if !c.node(node).is_some_and(|n| n.online) {
        return Broadcast::Gone;
    }
    match sim.faults().node_silent_since_ms(node) {
        None => Broadcast::Live,
        Some(at) if now_ms().saturating_sub(at) <= RRD_EXPIRE_MS => Broadcast::Kept,
        Some(_) => Broadcast::Gone,
    }
}

/// A node entry's `status` as `extract_node_stats` sets it: `offline` for a member that
/// is not online, `online` for an online one with data, else `unknown`.
pub fn node_status(online: bool, b: Broadcast) -> &'static str {
    match (online, b) {
        (false, _) => "offline",
        (true, Broadcast::Gone) => "unknown",
        (true, _) => "online",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_entry_is_offline_unknown_or_online_as_extract_node_stats_sets_it() {
        assert_eq!(node_status(false, Broadcast::Kept), "offline");
        assert_eq!(node_status(false, Broadcast::Gone), "offline");
        assert_eq!(node_status(true, Broadcast::Gone), "unknown");
        assert_eq!(node_status(true, Broadcast::Live), "online");
        assert_eq!(node_status(true, Broadcast::Kept), "online");
    }
}
