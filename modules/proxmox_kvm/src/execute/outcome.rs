//! What running a plan found out, for the result.

use ferrox_ansible::protocol::Output;
use ferrox_cluster::vm;
use serde_json::{Map, Value};

use crate::api::Vm;

/// What running the plan found out, for the result.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Changes left pending on a running VM (key -> pending value).
    pub(crate) pending: Map<String, Value>,
    /// The VM's effective config after an update (pending applied), when read.
    pub(crate) config: Option<Map<String, Value>>,
    /// Config keys written.
    pub(crate) written: Vec<String>,
    /// Whether the pending changes were applied by a reboot.
    pub(crate) rebooted_for_pending: bool,
    pub(crate) warnings: Vec<String>,
    /// What was done so far, so a failure half-way says what already changed.
    pub(crate) done: Vec<String>,
    /// The listing that showed the new VM (`WaitListed`): what the check for a racer of
    /// the same name reads, instead of listing again.
    pub(crate) listing: Option<vm::Cluster>,
    /// The VM another run created meanwhile under the vmid this task derived from the
    /// name, carrying that name: the rest of the plan was not run, the task converges
    /// onto that VM instead.
    pub(crate) adopted: Option<Vm>,
}

impl Outcome {
    /// Adds `pending` to a result when the run left changes pending (left out otherwise,
    /// as the result of a VM that takes every change at once).
    pub(crate) fn with_pending(&self, out: Output) -> Output {
        if self.pending.is_empty() {
            out
        } else {
            out.with("pending", self.pending.clone())
        }
    }
}
