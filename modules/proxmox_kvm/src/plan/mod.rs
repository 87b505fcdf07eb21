//! The plan: the list of actions a run takes, computed from the live cluster before
//! anything is written. Check mode reports it; otherwise
//! [`crate::execute`](mod@crate::execute) runs it.

pub(crate) mod effects;
pub(crate) mod privileges;

use crate::api::Vm;
use crate::converge::Changes;
use crate::plan::effects::Known;
use crate::task::Config;

/// Where a new vmid comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Allocation {
    /// The task named it: a collision is an error.
    Given,
    /// PVE's `/cluster/nextid`: on a collision, ask again.
    NextId,
    /// From `vmid_range`, in the order [`crate::vmid_range`] derives from the new VM's
    /// name: on a collision, the VM holding the id decides (ours: converge onto it;
    /// another name's: the next id).
    Range {
        first: u32,
        last: u32,
        name: Option<String>,
    },
}

/// A power-state call (`POST .../status/<call>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PowerCall {
    Start,
    Resume,
    /// Graceful ACPI shutdown; `force` powers off once `timeout` passed.
    Shutdown {
        force: bool,
        timeout: u64,
    },
    Reboot,
    Reset,
    Suspend {
        to_disk: bool,
    },
}

impl PowerCall {
    pub(crate) fn endpoint(&self) -> &'static str {
        match self {
            PowerCall::Start => "start",
            PowerCall::Resume => "resume",
            PowerCall::Shutdown { .. } => "shutdown",
            PowerCall::Reboot => "reboot",
            PowerCall::Reset => "reset",
            PowerCall::Suspend { .. } => "suspend",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// `POST /nodes/{node}/qemu` (a restore when `form` holds `archive`).
    Create {
        form: Vec<(String, String)>,
        allocation: Allocation,
    },
    /// `POST .../clone` from `source` to the plan's VM.
    Clone {
        source: Vm,
        form: Vec<(String, String)>,
        allocation: Allocation,
    },
    /// Poll `/cluster/resources` until the VM is listed (its name comes later: lookups
    /// by name read it from the config meanwhile, `cluster::vm::name_unbroadcast`).
    WaitListed,
    /// Write the config keys that differ. With `recompute`, the VM was just made
    /// (clone, restore): the changes are computed again from its real config.
    Converge {
        wanted: Config,
        changes: Changes,
        digest: Option<String>,
        recompute: bool,
    },
    Power(PowerCall),
    /// Reboot when the update left changes pending (`apply_pending: reboot`); with
    /// `cloud_init`, the cloud-init drive lacks changes only a start brings to it.
    RebootIfPending {
        cloud_init: bool,
    },
    Template,
    Destroy {
        purge: bool,
        unreferenced_disks: bool,
    },
    Migrate {
        target: String,
        online: bool,
        with_local_disks: bool,
        /// The task's optional migration parameters (`targetstorage`, `bwlimit`, ...).
        options: Vec<(String, String)>,
    },
    /// Offline migration of a VM just cloned on `from` (its disks on storage local to
    /// that node) to `to`, its disks onto `targetstorage` there (else the same storage ids).
    MoveClone {
        from: String,
        to: String,
        targetstorage: Option<String>,
    },
    DeleteKeys(Vec<String>),
    RevertKeys(Vec<String>),
    /// Put an existing VM into pool `to`, out of `from` (the pool it is listed in).
    PoolMove {
        from: Option<String>,
        to: String,
    },
}

impl Action {
    /// One line for the `actions` result.
    pub(crate) fn describe(&self, vm: &Vm) -> String {
        let id = vm.vmid;
        match self {
            Action::Create { form, .. } if form.iter().any(|(k, _)| k == "archive") => {
                format!("restore VM {id} on {}", vm.node)
            }
            Action::Create { .. } => format!("create VM {id} on {}", vm.node),
            Action::Clone { source, .. } => {
                format!("clone VM {} on {} to VM {id}", source.vmid, source.node)
            }
            Action::WaitListed => format!("wait until VM {id} is listed cluster-wide"),
            Action::Converge { changes, recompute, .. } => {
                let mut parts = Vec::new();
                if !changes.set.is_empty() {
                    parts.push(format!(
                        "set {}",
                        changes.set.keys().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
                for g in &changes.grow {
                    parts.push(format!("grow {} from {} to {}", g.key, g.from, g.to));
                }
                let what = if parts.is_empty() {
                    "apply the task's config".to_string()
                } else {
                    parts.join("; ")
                };
                let then = if *recompute {
                    " (compared again once it exists)"
                } else {
                    ""
                };
                format!("update VM {id}: {what}{then}")
            }
            Action::Power(call) => match call {
                PowerCall::Shutdown { force: true, timeout } => {
                    format!("shut down VM {id} (power off after {timeout} s)")
                }
                PowerCall::Suspend { to_disk: true } => format!("hibernate VM {id}"),
                other => format!("{} VM {id}", other.endpoint()),
            },
            Action::RebootIfPending { .. } => format!("reboot VM {id} if changes are pending"),
            Action::Template => format!("convert VM {id} to a template"),
            Action::Destroy { .. } => format!("remove VM {id}"),
            Action::Migrate { target, .. } => {
                format!("migrate VM {id} from {} to {target}", vm.node)
            }
            Action::MoveClone {
                from,
                to,
                targetstorage,
            } => format!(
                "migrate VM {id} offline from {from} to {to}{}",
                targetstorage
                    .as_ref()
                    .map(|s| format!(", its disks onto {s}"))
                    .unwrap_or_default()
            ),
            Action::DeleteKeys(keys) => format!("delete {} from VM {id}", keys.join(", ")),
            Action::RevertKeys(keys) => format!("revert pending {} of VM {id}", keys.join(", ")),
            Action::PoolMove { from: Some(from), to } => format!("move VM {id} from pool {from} to pool {to}"),
            Action::PoolMove { from: None, to } => format!("add VM {id} to pool {to}"),
        }
    }
}

/// The actions of one run, against one VM, and what the driver knew of the VM when it
/// planned them (the config the privilege check and a check run's effects read).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) vm: Vm,
    pub(crate) actions: Vec<Action>,
    pub(crate) known: Known,
}

impl Plan {
    pub(crate) fn new(vm: Vm) -> Plan {
        Plan::of(vm, Vec::new())
    }
    /// The plan of `actions` on `vm`, knowing nothing more of it.
    pub(crate) fn of(vm: Vm, actions: Vec<Action>) -> Plan {
        Plan {
            vm,
            actions,
            known: Known::default(),
        }
    }
    pub(crate) fn push(&mut self, a: Action) {
        self.actions.push(a);
    }
    pub(crate) fn describe(&self) -> Vec<String> {
        self.actions.iter().map(|a| a.describe(&self.vm)).collect()
    }
}
