//! The power states, `current`, `template` and `absent`: read the VM's status, plan
//! at most a couple of calls, report the status found before acting (as 1.6 did).

use ferrox_common::ansible::diff::Diff;
use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::run::vm_task::{self, LockWording};
use serde_json::Value;

use crate::api::{self, Power};
use crate::context::{vm_of, Ctx};
use crate::guest_wait;
use crate::plan::{Action, Plan, PowerCall};
use crate::task::{GuestWait, State};

pub fn handle(ctx: &mut Ctx, state: State) -> Result<Output, Failure> {
    if state == State::Present {
        return crate::present::present(ctx);
    }
    let Some(guest) = ctx.target()? else {
        return not_found(ctx, state);
    };
    let vm = vm_of(&guest);
    let id = vm.vmid;
    let name = ctx.name_of(Some(&guest));
    let power = api::power(ctx.client, &vm)
        .map_err(|e| Failure::new(format!("Unable to read the status of VM {id}: {e}")).with("vmid", id))?;
    let now = Now::of(&power, guest.template);
    let waiting = prepare_wait(ctx, state, &vm, &now)?;
    let mut plan = Plan::new(vm.clone());
    let status_out = |o: Output| o.with("vmid", id).with("status", power.status.clone());
    let (msg, after) = match step(ctx, state, &now, &name, &mut plan)? {
        Step::Report(msg) => return Ok(status_out(Output::unchanged(msg)).with("actions", Vec::<String>::new())),
        Step::Unchanged(msg) => return until_reachable(ctx, waiting.as_ref(), noop(status_out, msg), false, false),
        Step::Other(out) => return Ok(out),
        Step::Act { msg, after } => (msg, after),
    };
    // A hibernated VM's `suspended` lock is handled by `step` (resume, or force to remove).
    if !now.hibernated {
        vm_task::refuse_locked(
            id,
            power.lock.as_deref(),
            ctx.task.skiplock,
            LockWording::Action {
                prefix: &format!("Unable to {} VM {id}: ", state.verb()),
            },
        )?;
    }
    let mut diff = Diff::new(format!("VM {id}"));
    diff.change("state", Some(Value::from(now.describe())), Some(Value::from(after)));
    ctx.execute(&mut plan, name)?;
    let out = Output::changed(msg)
        .with("vmid", id)
        .with("actions", plan.describe())
        .with_diff(diff);
    let out = match state {
        State::Template | State::Absent => out,
        _ => out.with("status", power.status.clone()),
    };
    until_reachable(ctx, waiting.as_ref(), out, true, state == State::Restarted)
}

/// The VM the task names is not there: `absent` is reached, anything else fails.
fn not_found(ctx: &Ctx, state: State) -> Result<Output, Failure> {
    let name = ctx.task.name.as_deref().unwrap_or_default();
    match (state, ctx.task.vmid) {
        (State::Absent, Some(id)) => Ok(Output::unchanged(format!("VM {id} is already absent")).with("vmid", id)),
        (State::Absent, None) => Ok(Output::unchanged(format!("VM with name = {name} is already absent"))),
        (_, Some(id)) => Err(Failure::new(format!("VM with vmid {id} does not exist in cluster")).with("vmid", id)),
        _ => Err(Failure::new(format!("VM with name = {name} does not exist in cluster"))),
    }
}

/// The VM's power state as the states see it.
struct Now {
    status: String,
    running: bool,
    paused: bool,
    /// Suspended to disk: stopped, locked `suspended`; PVE's resume starts it from its saved state.
    hibernated: bool,
    template: bool,
    ha_managed: bool,
}

impl Now {
    fn of(power: &Power, template: bool) -> Now {
        let running = power.status == "running";
        Now {
            status: power.status.clone(),
            running,
            paused: running && power.qmpstatus.as_deref() == Some("paused"),
            hibernated: !running && power.lock.as_deref() == Some("suspended"),
            template,
            ha_managed: power.ha_managed,
        }
    }

    /// The state before, for the diff.
    fn describe(&self) -> &str {
        if self.paused {
            "paused"
        } else if self.hibernated {
            "hibernated"
        } else {
            &self.status
        }
    }
}

/// What a state asks of the VM as it is.
enum Step {
    /// `current`: the status, nothing else.
    Report(String),
    /// Already there (started: the guest may still be waited for).
    Unchanged(String),
    /// Nothing to do, with an answer of its own.
    Other(Output),
    /// The plan holds the calls; the message and the state after them.
    Act { msg: String, after: &'static str },
}

/// `wait_for_agent`/`wait_for_ip`: the checks that need no waiting, made before any write.
fn prepare_wait(
    ctx: &mut Ctx,
    state: State,
    vm: &crate::api::Vm,
    now: &Now,
) -> Result<Option<(GuestWait, guest_wait::Guest)>, Failure> {
    let Some(wait) = ctx
        .task
        .wait
        .clone()
        .filter(|_| matches!(state, State::Started | State::Restarted))
    else {
        return Ok(None);
    };
    if state == State::Restarted && !now.running {
        return Err(Failure::new(format!(
            "{}: VM {} is not running, so it is not restarted and no guest can answer; use state: started to start it and wait",
            wait.option, vm.vmid
        ))
        .with("vmid", vm.vmid));
    }
    // The config the guest runs with afterwards: a start or reboot applies what is pending.
    let running_config = if state == State::Restarted {
        ctx.task.force
    } else {
        now.running
    };
    let guest = guest_wait::prepare(ctx, &wait, vm, running_config)?;
    Ok(Some((wait, guest)))
}

/// The calls `state` needs from `now`, pushed onto `plan`.
fn step(ctx: &Ctx, state: State, now: &Now, name: &str, plan: &mut Plan) -> Result<Step, Failure> {
    let id = plan.vm.vmid;
    let force = ctx.task.force;
    let timeout = ctx.timeout();
    let act = |plan: &mut Plan, call: PowerCall, msg: String, after: &'static str| {
        plan.push(Action::Power(call));
        Step::Act { msg, after }
    };
    Ok(match state {
        State::Current => {
            let shown = if name.is_empty() { "(unnamed)" } else { name };
            Step::Report(format!("VM {shown} with vmid = {id} is {}", now.status))
        }
        State::Started if now.running && !now.paused => Step::Unchanged(format!("VM {id} is already running")),
        State::Started => {
            let call = if now.paused || now.hibernated {
                PowerCall::Resume
            } else {
                PowerCall::Start
            };
            act(plan, call, format!("VM {id} started"), "running")
        }
        State::Stopped if !now.running => Step::Unchanged(format!("VM {id} is already stopped")),
        State::Stopped => act(
            plan,
            PowerCall::Shutdown { force, timeout },
            format!("VM {id} is shutting down"),
            "stopped",
        ),
        State::Restarted if !now.running => Step::Unchanged(format!("VM {id} is not running")),
        State::Restarted => {
            let call = if force { PowerCall::Reset } else { PowerCall::Reboot };
            act(plan, call, format!("VM {id} is restarted"), "running")
        }
        State::Paused | State::Hibernated if !now.running => Step::Unchanged(format!("VM {id} is not running")),
        State::Paused if now.paused => Step::Unchanged(format!("VM {id} is already paused")),
        State::Paused => act(
            plan,
            PowerCall::Suspend { to_disk: false },
            format!("VM {id} is suspending"),
            "paused",
        ),
        State::Hibernated => act(
            plan,
            PowerCall::Suspend { to_disk: true },
            format!("VM {id} is suspending"),
            "hibernated",
        ),
        State::Template if now.template => Step::Other(
            Output::unchanged(format!("VM {id} is already a template"))
                .with("vmid", id)
                .with("actions", Vec::<String>::new()),
        ),
        State::Template => {
            stop_first(plan, now, force, timeout, || {
                format!("conversion of VM {id} to template failed with exception: you can't convert a VM to template if VM is running; stop it first (state: stopped) or use force: true")
            })?;
            plan.push(Action::Template);
            Step::Act {
                msg: format!("VM {id} is converting to template"),
                after: "template",
            }
        }
        State::Absent => removal(ctx, now, plan)?,
        State::Present => unreachable!("handle sends present to crate::present"),
    })
}

/// `absent`: what removing the VM takes from `now`, refused before any write where PVE
/// would refuse it half-way.
fn removal(ctx: &Ctx, now: &Now, plan: &mut Plan) -> Result<Step, Failure> {
    let id = plan.vm.vmid;
    let (force, timeout, removal) = (ctx.task.force, ctx.timeout(), ctx.task.removal);
    // PVE refuses to remove an HA resource without purge only after a running VM was
    // stopped; found out before anything is written.
    if now.ha_managed && !removal.purge {
        return Err(Failure::new(format!(
            "deletion of VM {id} failed with exception: VM {id} is HA-managed, and PVE removes an HA resource only with purge: true (which also drops it from backup jobs and replication). Nothing was changed"
        ))
        .with("vmid", id));
    }
    if now.running && !force {
        return Ok(Step::Other(
            Output::unchanged(format!(
                "VM {id} is running. Stop it before deletion or use force=true."
            ))
            .with("vmid", id),
        ));
    }
    if now.hibernated {
        // PVE refuses to remove a VM locked `suspended`; waking it up and powering it
        // off clears the lock.
        if !force {
            return Err(Failure::new(format!(
                "deletion of VM {id} failed with exception: VM {id} is hibernated (locked 'suspended'); use force: true to wake it up and power it off first, or start it (state: started)"
            ))
            .with("vmid", id));
        }
        plan.push(Action::Power(PowerCall::Resume));
        plan.push(Action::Power(PowerCall::Shutdown { force: true, timeout }));
    }
    stop_first(plan, now, force, timeout, String::new)?;
    plan.push(Action::Destroy {
        purge: removal.purge,
        unreferenced_disks: removal.destroy_unreferenced_disks,
    });
    Ok(Step::Act {
        msg: format!("VM {id} removed"),
        after: "absent",
    })
}

/// With `wait_for_agent`/`wait_for_ip`: the guest's addresses once it can be reached
/// (check mode: known after apply unless it answers already). A wait that fails after
/// the VM was started or restarted keeps `changed: true`.
fn until_reachable(
    ctx: &Ctx,
    waiting: Option<&(GuestWait, guest_wait::Guest)>,
    out: Output,
    acted: bool,
    restarted: bool,
) -> Result<Output, Failure> {
    let Some((wait, guest)) = waiting else { return Ok(out) };
    if ctx.check_mode {
        return Ok(guest_wait::predict(ctx, wait, guest, acted, out));
    }
    guest_wait::wait(ctx, wait, guest, restarted, out).map_err(|f| if acted { f.with("changed", true) } else { f })
}

fn noop(status_out: impl Fn(Output) -> Output, msg: String) -> Output {
    status_out(Output::unchanged(msg)).with("actions", Vec::<String>::new())
}

/// A running VM is shut down first (powered off after `timeout`) when `force` allows it.
fn stop_first(
    plan: &mut Plan,
    now: &Now,
    force: bool,
    timeout: u64,
    refuse: impl Fn() -> String,
) -> Result<(), Failure> {
    if !now.running {
        return Ok(());
    }
    if !force {
        return Err(Failure::new(refuse()).with("vmid", plan.vm.vmid));
    }
    plan.push(Action::Power(PowerCall::Shutdown { force: true, timeout }));
    Ok(())
}
