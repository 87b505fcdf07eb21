//! What running a plan found out, for the result.

use ferrox_ansible::protocol::Output;
use ferrox_cluster::vm;
use serde_json::{Map, Value};

use crate::api::Vm;

/// What running the plan found out, for the result.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Changes left pending on a running VM (key -> pending value).
    pub pending: Map<String, Value>,
    /// The VM's effective config after an update (pending applied), when read.
    pub config: Option<Map<String, Value>>,
    /// Config keys written.
    pub written: Vec<String>,
    /// Whether the pending changes were applied by a reboot.
    pub rebooted_for_pending: bool,
    pub warnings: Vec<String>,
    /// What was done so far, so a failure half-way says what already changed.
    pub done: Vec<String>,
    /// The listing that showed the new VM (`WaitListed`): what the check for a racer of
    /// the same name reads, instead of listing again.
    pub listing: Option<vm::Cluster>,
    /// The VM another run created meanwhile under the vmid this task derived from the
    /// name, carrying that name: the rest of the plan was not run, the task converges
    /// onto that VM instead.
    pub adopted: Option<Vm>,
}

impl Outcome {
    /// Adds `pending` to a result when the run left changes pending (left out otherwise,
    /// as the result of a VM that takes every change at once).
    pub fn with_pending(&self, out: Output) -> Output {
        if self.pending.is_empty() {
            out
        } else {
            out.with("pending", self.pending.clone())
        }
    }
}
