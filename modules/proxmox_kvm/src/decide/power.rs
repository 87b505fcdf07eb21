//! The power states, `current`, `template` and `absent`, decided: what the state asks of
//! the VM as it was observed (at most a couple of calls), or why it is refused before
//! any write. Pure: the table of every state from every power state is `power_tests.rs`.

use ferrox_ansible::protocol::Failure;
use ferrox_run::vm_task::{self, LockWording};

use crate::observe::{Now, PowerObserved};
use crate::plan::{Action, PowerCall};
use crate::task::{KvmTask, State};

/// What a state asks of the VM as it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// `current`: the status is the answer.
    Report(String),
    /// Already in the state (reported with the status; a started VM's guest may still be
    /// waited for).
    AlreadyThere(String),
    /// Already a template: reported without the status.
    AlreadyTemplate(String),
    /// `absent` of a running VM without `force`: left running, unchanged (1.6's answer).
    LeftRunning(String),
    /// The calls to make, the message, and the state after them (for the diff).
    Act {
        actions: Vec<Action>,
        msg: String,
        after: &'static str,
    },
}

/// The VM the task names is not in the cluster, and the task is `absent`: reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AlreadyAbsent {
    pub(crate) msg: String,
    /// The task's `vmid`, when it named one.
    pub(crate) vmid: Option<u32>,
}

/// The decision for a power state, `current`, `template` or `absent` (`present` is
/// its own driver's) on the VM observed.
pub(crate) fn decide(task: &KvmTask, state: State, observed: &PowerObserved) -> Result<Decision, Failure> {
    let id = observed.vm.vmid;
    let now = &observed.now;
    let decision = step(task, state, id, &observed.name, now)?;
    // A hibernated VM's `suspended` lock is handled by `step` (resume, or force to remove).
    if matches!(decision, Decision::Act { .. }) && !now.hibernated {
        vm_task::refuse_locked(
            id,
            now.lock.as_deref(),
            task.skiplock,
            LockWording::Action {
                prefix: &format!("Unable to {} VM {id}: ", state.verb()),
            },
        )?;
    }
    Ok(decision)
}

/// The VM the task names is not there: `absent` is reached, anything else fails.
pub(crate) fn not_found(task: &KvmTask, state: State) -> Result<AlreadyAbsent, Failure> {
    let name = task.name.as_deref().unwrap_or_default();
    match (state, task.vmid) {
        (State::Absent, Some(id)) => Ok(AlreadyAbsent {
            msg: format!("VM {id} is already absent"),
            vmid: Some(id),
        }),
        (State::Absent, None) => Ok(AlreadyAbsent {
            msg: format!("VM with name = {name} is already absent"),
            vmid: None,
        }),
        (_, Some(id)) => Err(Failure::new(format!("VM with vmid {id} does not exist in cluster")).with("vmid", id)),
        _ => Err(Failure::new(format!("VM with name = {name} does not exist in cluster"))),
    }
}

/// The calls `state` needs from `now`.
fn step(task: &KvmTask, state: State, id: u32, name: &str, now: &Now) -> Result<Decision, Failure> {
    let (force, timeout) = (task.force, task.timeout.as_secs());
    let act = |call: PowerCall, msg: String, after: &'static str| Decision::Act {
        actions: vec![Action::Power(call)],
        msg,
        after,
    };
    Ok(match state {
        State::Current => {
            let shown = if name.is_empty() { "(unnamed)" } else { name };
            Decision::Report(format!("VM {shown} with vmid = {id} is {}", now.status))
        }
        State::Started if now.running && !now.paused => Decision::AlreadyThere(format!("VM {id} is already running")),
        State::Started => {
            let call = if now.paused || now.hibernated {
                PowerCall::Resume
            } else {
                PowerCall::Start
            };
            act(call, format!("VM {id} started"), "running")
        }
        State::Stopped if !now.running => Decision::AlreadyThere(format!("VM {id} is already stopped")),
        State::Stopped => act(
            PowerCall::Shutdown { force, timeout },
            format!("VM {id} is shutting down"),
            "stopped",
        ),
        State::Restarted if !now.running => Decision::AlreadyThere(format!("VM {id} is not running")),
        State::Restarted => {
            let call = if force { PowerCall::Reset } else { PowerCall::Reboot };
            act(call, format!("VM {id} is restarted"), "running")
        }
        State::Paused | State::Hibernated if !now.running => Decision::AlreadyThere(format!("VM {id} is not running")),
        State::Paused if now.paused => Decision::AlreadyThere(format!("VM {id} is already paused")),
        State::Paused => act(
            PowerCall::Suspend { to_disk: false },
            format!("VM {id} is suspending"),
            "paused",
        ),
        State::Hibernated => act(
            PowerCall::Suspend { to_disk: true },
            format!("VM {id} is suspending"),
            "hibernated",
        ),
        State::Template if now.template => Decision::AlreadyTemplate(format!("VM {id} is already a template")),
        State::Template => {
            let mut actions = stop_first(id, now, force, timeout, || {
                format!("conversion of VM {id} to template failed with exception: you can't convert a VM to template if VM is running; stop it first (state: stopped) or use force: true")
            })?;
            actions.push(Action::Template);
            Decision::Act {
                actions,
                msg: format!("VM {id} is converting to template"),
                after: "template",
            }
        }
        State::Absent => removal(task, id, now)?,
        State::Present => unreachable!("the run drives present itself (crate::run)"),
    })
}

/// `absent`: what removing the VM takes from `now`, refused before any write where PVE
/// would refuse it half-way.
fn removal(task: &KvmTask, id: u32, now: &Now) -> Result<Decision, Failure> {
    let (force, timeout, removal) = (task.force, task.timeout.as_secs(), task.removal);
    // PVE refuses to remove a VM with any HA resource entry without purge, managed or
    // not (`ignored`, or the cluster disarmed). The removal would meet that refusal
    // only after `force` had stopped a running VM: found out before anything is written.
    if now.has_ha_resource() && !removal.purge {
        return Err(ha_removal_refusal(id, now));
    }
    if now.running && !force {
        return Ok(Decision::LeftRunning(format!(
            "VM {id} is running. Stop it before deletion or use force=true."
        )));
    }
    let mut actions = Vec::new();
    if now.hibernated {
        // PVE refuses to remove a VM locked `suspended`; waking it up and powering it
        // off clears the lock.
        if !force {
            return Err(Failure::new(format!(
                "deletion of VM {id} failed with exception: VM {id} is hibernated (locked 'suspended'); use force: true to wake it up and power it off first, or start it (state: started)"
            ))
            .with("vmid", id));
        }
        actions.push(Action::Power(PowerCall::Resume));
        actions.push(Action::Power(PowerCall::Shutdown { force: true, timeout }));
    }
    actions.extend(stop_first(id, now, force, timeout, String::new)?);
    actions.push(Action::Destroy {
        purge: removal.purge,
        unreferenced_disks: removal.destroy_unreferenced_disks,
    });
    Ok(Decision::Act {
        actions,
        msg: format!("VM {id} removed"),
        after: "absent",
    })
}

/// The refusal of `absent` without `purge` for a VM with an HA resource entry, in
/// PVE's terms and with the fix.
fn ha_removal_refusal(id: u32, now: &Now) -> Failure {
    let what = match now.ha_resource.as_deref() {
        Some(state) if !now.ha_managed => {
            format!("VM {id} has an HA resource (state {state}); PVE does not manage it through HA now, but")
        }
        _ => format!("VM {id} is HA-managed, and PVE"),
    };
    Failure::new(format!(
        "deletion of VM {id} failed with exception: {what} removes a VM with an HA resource only with purge: true (which also drops it from backup jobs and replication). Set purge: true, or remove the HA resource first (ha-manager remove vm:{id}). Nothing was changed"
    ))
    .with("vmid", id)
}

/// A running VM is shut down first (powered off after `timeout`) when `force` allows it.
fn stop_first(
    id: u32,
    now: &Now,
    force: bool,
    timeout: u64,
    refuse: impl Fn() -> String,
) -> Result<Vec<Action>, Failure> {
    if !now.running {
        return Ok(Vec::new());
    }
    if !force {
        return Err(Failure::new(refuse()).with("vmid", id));
    }
    Ok(vec![Action::Power(PowerCall::Shutdown { force: true, timeout })])
}
