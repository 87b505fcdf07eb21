//! The power states, `current`, `template` and `absent`: read the VM's status, plan
//! at most a couple of calls, report the status found before acting (as 1.6 did).

use ferrox_common::diff::Diff;
use ferrox_common::protocol::{Failure, Output};
use serde_json::Value;

use crate::api::{self, Power};
use crate::context::{vm_of, Ctx};
use crate::guest_wait::{self, Wait};
use crate::plan::{Action, Plan, PowerCall};

pub fn handle(ctx: &mut Ctx, state: &str) -> Result<Output, Failure> {
    let Some(guest) = ctx.target()? else {
        let name = ctx.p.str("name").unwrap_or_default();
        return match (state, ctx.p.int("vmid")) {
            ("absent", Some(id)) => {
                Ok(Output::unchanged(format!("VM {id} is already absent")).with("vmid", id))
            }
            ("absent", None) => Ok(Output::unchanged(format!(
                "VM with name = {name} is already absent"
            ))),
            (_, Some(id)) => Err(Failure::new(format!(
                "VM with vmid {id} does not exist in cluster"
            ))
            .with("vmid", id)),
            _ => Err(Failure::new(format!(
                "VM with name = {name} does not exist in cluster"
            ))),
        };
    };
    let vm = vm_of(&guest);
    let id = vm.vmid;
    let name = ctx.name_of(Some(&guest));
    let power = api::power(ctx.client, &vm).map_err(|e| {
        Failure::new(format!("Unable to read the status of VM {id}: {e}")).with("vmid", id)
    })?;
    let running = power.status == "running";
    let paused = running && power.qmpstatus.as_deref() == Some("paused");
    // Suspended to disk: stopped, locked `suspended`; PVE's resume starts it from its saved state.
    let hibernated = !running && power.lock.as_deref() == Some("suspended");
    let force = ctx.p.flag("force");
    let timeout = ctx.timeout();
    let mut plan = Plan::new(vm.clone());
    let status_out = |o: Output| o.with("vmid", id).with("status", power.status.clone());
    let wait = match state {
        "started" | "restarted" => Wait::of(ctx),
        _ => None,
    };
    let waiting = match &wait {
        Some(w) if state == "restarted" && !running => {
            return Err(Failure::new(format!(
                "{}: VM {id} is not running, so it is not restarted and no guest can answer; use state: started to start it and wait",
                w.option()
            ))
            .with("vmid", id))
        }
        // The config the guest runs with afterwards: a start or reboot applies what is pending.
        Some(w) => Some((w.clone(), guest_wait::prepare(ctx, w, &vm, if state == "restarted" { force } else { running })?)),
        None => None,
    };

    let (msg, after) = match state {
        "current" => {
            let shown = if name.is_empty() {
                "(unnamed)".to_string()
            } else {
                name.clone()
            };
            return Ok(status_out(Output::unchanged(format!(
                "VM {shown} with vmid = {id} is {}",
                power.status
            )))
            .with("actions", Vec::<String>::new()));
        }
        "started" if running && !paused => {
            let out = noop(status_out, format!("VM {id} is already running"));
            return until_reachable(ctx, waiting.as_ref(), out, false, false);
        }
        "started" => {
            plan.push(Action::Power(if paused || hibernated {
                PowerCall::Resume
            } else {
                PowerCall::Start
            }));
            (format!("VM {id} started"), "running")
        }
        "stopped" if !running => {
            return Ok(noop(status_out, format!("VM {id} is already stopped")))
        }
        "stopped" => {
            plan.push(Action::Power(PowerCall::Shutdown { force, timeout }));
            (format!("VM {id} is shutting down"), "stopped")
        }
        "restarted" if !running => return Ok(noop(status_out, format!("VM {id} is not running"))),
        "restarted" => {
            plan.push(Action::Power(if force {
                PowerCall::Reset
            } else {
                PowerCall::Reboot
            }));
            (format!("VM {id} is restarted"), "running")
        }
        "paused" | "hibernated" if !running => {
            return Ok(noop(status_out, format!("VM {id} is not running")))
        }
        "paused" if paused => return Ok(noop(status_out, format!("VM {id} is already paused"))),
        "paused" | "hibernated" => {
            plan.push(Action::Power(PowerCall::Suspend {
                to_disk: state == "hibernated",
            }));
            (
                format!("VM {id} is suspending"),
                if state == "paused" {
                    "paused"
                } else {
                    "hibernated"
                },
            )
        }
        "template" if guest.template => {
            return Ok(Output::unchanged(format!("VM {id} is already a template"))
                .with("vmid", id)
                .with("actions", Vec::<String>::new()))
        }
        "template" => {
            stop_first(&mut plan, &power, force, timeout, || {
                format!("conversion of VM {id} to template failed with exception: you can't convert a VM to template if VM is running; stop it first (state: stopped) or use force: true")
            })?;
            plan.push(Action::Template);
            (format!("VM {id} is converting to template"), "template")
        }
        "absent" => {
            // PVE refuses to remove an HA resource without purge only after a running VM
            // was stopped; found out before anything is written.
            if power.ha_managed && !ctx.p.flag("purge") {
                return Err(Failure::new(format!(
                    "deletion of VM {id} failed with exception: VM {id} is HA-managed, and PVE removes an HA resource only with purge: true (which also drops it from backup jobs and replication). Nothing was changed"
                ))
                .with("vmid", id));
            }
            if running && !force {
                return Ok(Output::unchanged(format!(
                    "VM {id} is running. Stop it before deletion or use force=true."
                ))
                .with("vmid", id));
            }
            if hibernated {
                // PVE refuses to remove a VM locked `suspended`; waking it up and
                // powering it off clears the lock.
                if !force {
                    return Err(Failure::new(format!(
                        "deletion of VM {id} failed with exception: VM {id} is hibernated (locked 'suspended'); use force: true to wake it up and power it off first, or start it (state: started)"
                    ))
                    .with("vmid", id));
                }
                plan.push(Action::Power(PowerCall::Resume));
                plan.push(Action::Power(PowerCall::Shutdown {
                    force: true,
                    timeout,
                }));
            }
            stop_first(&mut plan, &power, force, timeout, String::new)?;
            plan.push(Action::Destroy {
                purge: ctx.p.flag("purge"),
                unreferenced_disks: ctx.p.flag("destroy_unreferenced_disks"),
            });
            (format!("VM {id} removed"), "absent")
        }
        other => return Err(Failure::new(format!("state {other} is not handled here"))),
    };
    // A hibernated VM's `suspended` lock is handled above (resume, or force to remove).
    if !hibernated {
        ctx.refuse_locked(id, power.lock.as_deref(), &format!("Unable to {} VM {id}: ", describe_state(state)))?;
    }
    let mut diff = Diff::new(format!("VM {id}"));
    let before = if paused {
        "paused"
    } else if hibernated {
        "hibernated"
    } else {
        power.status.as_str()
    };
    diff.change("state", Some(Value::from(before)), Some(Value::from(after)));
    ctx.execute(&mut plan, name)?;
    let out = Output::changed(msg)
        .with("vmid", id)
        .with("actions", plan.describe())
        .with_diff(diff);
    let out = match state {
        "template" | "absent" => out,
        _ => out.with("status", power.status.clone()),
    };
    until_reachable(ctx, waiting.as_ref(), out, true, state == "restarted")
}

/// With `wait_for_agent`/`wait_for_ip`: the guest's addresses once it can be reached
/// (check mode: known after apply unless it answers already). A wait that fails after
/// the VM was started or restarted keeps `changed: true`.
fn until_reachable(ctx: &Ctx, waiting: Option<&(Wait, guest_wait::Guest)>, out: Output, acted: bool, restarted: bool) -> Result<Output, Failure> {
    let Some((wait, guest)) = waiting else { return Ok(out) };
    if ctx.check_mode {
        return Ok(guest_wait::predict(ctx, wait, guest, acted, out));
    }
    guest_wait::wait(ctx, wait, guest, restarted, out).map_err(|f| if acted { f.with("changed", true) } else { f })
}

/// The state as a verb phrase for messages.
fn describe_state(state: &str) -> &str {
    match state {
        "started" => "start",
        "stopped" => "stop",
        "restarted" => "restart",
        "paused" => "pause",
        "hibernated" => "hibernate",
        "template" => "convert to template",
        "absent" => "remove",
        other => other,
    }
}

fn noop(status_out: impl Fn(Output) -> Output, msg: String) -> Output {
    status_out(Output::unchanged(msg)).with("actions", Vec::<String>::new())
}

/// A running VM is shut down first (powered off after `timeout`) when `force` allows it.
fn stop_first(
    plan: &mut Plan,
    power: &Power,
    force: bool,
    timeout: u64,
    refuse: impl Fn() -> String,
) -> Result<(), Failure> {
    if power.status != "running" {
        return Ok(());
    }
    if !force {
        return Err(Failure::new(refuse()).with("vmid", plan.vm.vmid));
    }
    plan.push(Action::Power(PowerCall::Shutdown {
        force: true,
        timeout,
    }));
    Ok(())
}
