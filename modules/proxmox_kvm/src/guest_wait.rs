//! `wait_for_agent` / `wait_for_ip` of `state: started` and `restarted`: after the power
//! action (or none, for a VM already running), poll the guest agent until it answers
//! and, when asked, until the guest has a usable address; report its addresses per
//! `netN`.
//!
//! What can never succeed fails before any write: `restarted` of a VM that is not running
//! ([`wait_refusal`]), no agent enabled in the config, the caller lacking the privilege to
//! read the agent. Which wait a state makes ([`of_state`]) and which config the guest runs
//! with ([`waits_on_running_config`]) are the wait's own conditions, which
//! [`crate::observe`] asks when it observes a power state. Polling starts only once the start
//! or reboot task has finished, so the agent read is the new boot's: the old guest has
//! shut down (reboot) or been reset by then. Backoff from 100 ms up to 2 s; no fixed pause.

use std::time::{Duration, Instant};

use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::guest_net::{Addresses, Family};
use ferrox_pve_client::client::{ApiError, Client};
use ferrox_pve_rules::privileges::{Check, Need};
use ferrox_pve_rules::propstring;
use ferrox_pve_rules::unknown;
use serde_json::{Map, Value};

use crate::api::Vm;
use crate::step::Run;
use crate::task::{KvmTask, State};

/// The result keys this adds.
pub(crate) const ADDRESSES_KEY: &str = "ip_addresses";
pub(crate) const PRIMARY_KEY: &str = "ip_address";

/// After a reboot, PVE's task ends when the old QEMU has exited; the host starts the
/// new one a moment later. This long, "not running" means "not yet started again".
const RESTART_GAP: Duration = Duration::from_secs(15);

/// What the task waits for (read with the task: [`crate::task::GuestWait`]).
pub(crate) use crate::task::GuestWait as Wait;

/// `ip_family` for the primary address (also when only the agent is waited for).
fn family(run: &Run, wait: &Wait) -> Family {
    wait.address.unwrap_or(run.task.ip_family)
}

/// The guest wait `state` makes (`wait_for_agent`/`wait_for_ip` of `started` and
/// `restarted` only).
pub(crate) fn of_state(task: &KvmTask, state: State) -> Option<&Wait> {
    task.wait
        .as_ref()
        .filter(|_| matches!(state, State::Started | State::Restarted))
}

/// A guest wait that cannot succeed whatever is read next: `restarted` of a VM that is
/// not running restarts nothing, so no guest answers. Checked before the wait's reads.
pub(crate) fn wait_refusal(task: &KvmTask, state: State, vmid: u32, running: bool) -> Option<Failure> {
    let wait = of_state(task, state)?;
    (state == State::Restarted && !running).then(|| {
        Failure::new(format!(
            "{}: VM {vmid} is not running, so it is not restarted and no guest can answer; use state: started to start it and wait",
            wait.option
        ))
        .with("vmid", vmid)
    })
}

/// Whether the guest runs with the current config afterwards (a start or a forced
/// reset applies what is pending; a running VM left alone keeps what it runs with).
pub(crate) fn waits_on_running_config(task: &KvmTask, state: State, running: bool) -> bool {
    if state == State::Restarted {
        task.force
    } else {
        running
    }
}

/// What a wait may rely on, read before any write.
pub(crate) struct Guest {
    vm: Vm,
    /// The config in effect (its `netN` MACs).
    config: Map<String, Value>,
}

/// The checks that need no waiting: the agent is enabled in the config the VM runs
/// with (`restarted`: the config it restarts with) and the caller may read it.
pub(crate) fn prepare(
    run: &Run,
    warnings: &mut Vec<String>,
    wait: &Wait,
    vm: &Vm,
    running_config: bool,
) -> Result<Guest, Failure> {
    let id = vm.vmid;
    let current = if running_config { "1" } else { "0" };
    let config = run
        .client
        .get(&vm.path("/config"), &[("current", current.to_string())])
        .map_err(|e| Failure::new(format!("Unable to read the config of VM {id}: {e}")).with("vmid", id))?;
    let config = config.as_object().cloned().unwrap_or_default();
    let agent = config.get("agent").map(crate::converge::text_of);
    if !agent.as_deref().is_some_and(agent_enabled) {
        let has = match &agent {
            None => "has no agent key".to_string(),
            Some(v) => format!("has agent: {v}"),
        };
        return Err(Failure::new(format!(
            "{}: VM {id} has no QEMU guest agent enabled (its config {has}), so nothing in the guest can answer; set agent: true (it takes effect at the next start, state: restarted) and install qemu-guest-agent in the guest, or leave {} out",
            wait.option, wait.option
        ))
        .with("vmid", id));
    }
    let need = Need {
        what: "guest agent".into(),
        check: Check::Any {
            // PVE 9 splits the agent off VM.Monitor, which PVE 8 checks and 9 no longer has.
            privileges: vec!["VM.GuestAgent.Audit", "VM.GuestAgent.Unrestricted", "VM.Monitor"],
            path: format!("/vms/{id}"),
        },
    };
    let refused = run.gate.privileges().and_then(|p| {
        p.first_refused(run.gate.caller(), std::slice::from_ref(&need))
            .map(|r| r.reason(run.gate.caller()))
    });
    warnings.extend(run.gate.take_warnings());
    if let Some(reason) = refused {
        return Err(Failure::new(format!(
            "{}: reading the guest agent of VM {id} {reason} (Proxmox VE 9 checks VM.GuestAgent.Audit, Proxmox VE 8 VM.Monitor); grant it, or leave {} out",
            wait.option, wait.option
        ))
        .with("vmid", id));
    }
    Ok(Guest { vm: vm.clone(), config })
}

/// `1`, `enabled=1,…`, `1,fstrim_cloned_disks=1`: the `agent` property string's
/// `enabled`, read as PVE's format says (its default key, its booleans).
fn agent_enabled(value: &str) -> bool {
    propstring::parse_config_value("agent", value)
        .ok()
        .and_then(|(p, _)| {
            p.get("enabled")
                .map(|v| propstring::normalise(propstring::Kind::Bool, v))
        })
        .is_some_and(|v| v.as_deref() == Ok("1"))
}

/// After a power state (`acted`: it started or restarted the VM), with
/// `wait_for_agent`/`wait_for_ip`: the guest's addresses once it can be reached (check
/// mode: known after apply unless it answers already). A wait that fails after the VM
/// was started or restarted keeps `changed: true`.
pub(crate) fn after_power(
    run: &Run,
    waiting: Option<&(Wait, Guest)>,
    out: Output,
    acted: bool,
    restarted: bool,
) -> Result<Output, Failure> {
    let Some((wait, guest)) = waiting else {
        return Ok(out);
    };
    if run.task.check_mode {
        return Ok(predict(run, wait, guest, acted, out));
    }
    self::wait(run, wait, guest, restarted, out).map_err(|f| if acted { f.with("changed", true) } else { f })
}

/// Check mode: the addresses are known only after apply, unless the VM already runs
/// (nothing planned) and its agent answers now with what the task waits for.
pub(crate) fn predict(run: &Run, wait: &Wait, guest: &Guest, acts: bool, out: Output) -> Output {
    let family = family(run, wait);
    if !acts {
        if let Ok(a) = read(run.client, guest) {
            if wait.address.is_none() || a.primary(family).is_some() {
                return report(out, &a, family);
            }
        }
    }
    out.with(ADDRESSES_KEY, Value::Null)
        .with(PRIMARY_KEY, Value::Null)
        .with(unknown::RESULT_KEY, [ADDRESSES_KEY, PRIMARY_KEY])
}

/// Poll until the guest is what the task waits for; `restarted`: the VM was rebooted
/// just before.
pub(crate) fn wait(run: &Run, wait: &Wait, guest: &Guest, restarted: bool, out: Output) -> Result<Output, Failure> {
    let id = guest.vm.vmid;
    let family = family(run, wait);
    let began = Instant::now();
    let mut pause = Duration::from_millis(100);
    loop {
        let answer = match wait.address {
            Some(_) => read(run.client, guest),
            None => run
                .client
                .post(&guest.vm.path("/agent/ping"), &[])
                .and_then(|_| read(run.client, guest)),
        };
        let last = match answer {
            Ok(a) if wait.address.is_none() || a.primary(family).is_some() => {
                let elapsed = began.elapsed().as_secs_f64();
                let mut out = report(out, &a, family);
                let what = match a.primary(family) {
                    Some(ip) => format!("its guest has {ip}"),
                    None => "its guest agent answers (no usable address yet)".to_string(),
                };
                let msg = format!(
                    "{}; {what} (waited {elapsed:.1} s)",
                    out.get("msg").and_then(Value::as_str).unwrap_or_default()
                );
                out.set("msg", msg);
                return Ok(out);
            }
            Ok(a) => Seen::Addresses(a.seen),
            Err(e) => {
                if let Some(failure) = fatal(wait, id, &e, restarted && began.elapsed() < RESTART_GAP) {
                    return Err(failure);
                }
                Seen::Silent(e.message.trim().trim_end_matches('.').to_string())
            }
        };
        let left = wait.timeout.saturating_sub(began.elapsed());
        if left.is_zero() {
            return Err(timed_out(wait, id, family, &last));
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 3 / 2).min(Duration::from_secs(2));
    }
}

/// What the last poll saw, for the timeout's message.
enum Seen {
    /// The agent did not answer: PVE's words.
    Silent(String),
    /// The agent answered; these addresses (none usable of the family).
    Addresses(Vec<String>),
}

fn timed_out(wait: &Wait, id: u32, family: Family, last: &Seen) -> Failure {
    let secs = wait.timeout.as_secs();
    let msg = match last {
        Seen::Silent(why) => format!(
            "{}: the guest agent of VM {id} did not answer within {secs} s (wait_timeout); last answer: {why}. Is qemu-guest-agent installed and running in the guest?",
            wait.option
        ),
        Seen::Addresses(seen) if seen.is_empty() => format!(
            "{}: VM {id}'s guest had no IP address at all after {secs} s (wait_timeout); it waits for {}",
            wait.option,
            family.describe()
        ),
        Seen::Addresses(seen) => format!(
            "{}: VM {id}'s guest had only {} after {secs} s (wait_timeout), no {} (link-local fe80::/10, APIPA 169.254/16 and loopback do not count)",
            wait.option,
            seen.join(", "),
            family.describe().trim_start_matches("a ")
        ),
    };
    Failure::new(msg).with("vmid", id)
}

/// An answer waiting cannot change: fail at once. `None`: poll again.
fn fatal(wait: &Wait, id: u32, e: &ApiError, rebooting: bool) -> Option<Failure> {
    let fail = |why: String| Some(Failure::new(format!("{}: {why}", wait.option)).with("vmid", id));
    if e.status == Some(403) {
        return fail(format!(
            "Proxmox VE refused to read the guest agent of VM {id} ({}); it needs VM.GuestAgent.Audit on /vms/{id} (Proxmox VE 8: VM.Monitor)",
            e.message.trim()
        ));
    }
    let m = e.message.to_ascii_lowercase();
    if m.contains("no qemu guest agent configured") {
        return fail(format!(
            "VM {id}: {}; set agent: true and restart the VM",
            e.message.trim()
        ));
    }
    if m.contains(&format!("vm {id} is not running")) && !rebooting {
        return fail(format!(
            "VM {id} stopped while waiting for its guest ({}); start it again with state: started",
            e.message.trim()
        ));
    }
    if e.status.is_some_and(|s| s != 500) {
        return fail(format!("reading the guest agent of VM {id} failed: {e}"));
    }
    None
}

/// One read of the agent's interfaces.
fn read(client: &Client, guest: &Guest) -> Result<Addresses, ApiError> {
    let answer = client.get(&guest.vm.path("/agent/network-get-interfaces"), &[])?;
    Ok(Addresses::read(
        &guest.config,
        answer.get("result").unwrap_or(&Value::Null),
    ))
}

fn report(out: Output, a: &Addresses, family: Family) -> Output {
    out.with(ADDRESSES_KEY, a.to_value())
        .with(PRIMARY_KEY, a.primary(family))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_enabled_in_every_spelling() {
        for on in ["1", "enabled=1", "1,fstrim_cloned_disks=1", "enabled=1,type=virtio"] {
            assert!(agent_enabled(on), "{on}");
        }
        for off in ["0", "enabled=0", "enabled=0,fstrim_cloned_disks=1", ""] {
            assert!(!agent_enabled(off), "{off}");
        }
    }

    fn err(status: u16, msg: &str) -> ApiError {
        ApiError {
            kind: ferrox_pve_client::client::ApiErrorKind::Http,
            status: Some(status),
            message: msg.into(),
            errors: None,
        }
    }

    #[test]
    fn what_ends_the_wait_at_once() {
        let w = Wait {
            option: "wait_for_ip",
            address: Some(Family::Any),
            timeout: Duration::from_secs(300),
        };
        assert!(fatal(&w, 101, &err(500, "QEMU guest agent is not running"), false).is_none());
        assert!(fatal(
            &w,
            101,
            &err(500, "VM 101 qmp command 'guest-ping' failed - got timeout"),
            false
        )
        .is_none());
        assert!(
            fatal(&w, 101, &err(500, "VM 101 is not running"), true).is_none(),
            "a reboot's gap"
        );
        assert!(fatal(&w, 101, &err(500, "VM 101 is not running"), false).is_some());
        assert!(fatal(&w, 101, &err(500, "No QEMU guest agent configured"), false).is_some());
        let denied = fatal(
            &w,
            101,
            &err(
                403,
                "Permission check failed (/vms/101, VM.GuestAgent.Audit|VM.GuestAgent.Unrestricted)",
            ),
            false,
        )
        .unwrap();
        assert!(denied.msg.contains("VM.GuestAgent.Audit on /vms/101"), "{}", denied.msg);
    }

    #[test]
    fn a_timeout_names_what_was_seen() {
        let w = Wait {
            option: "wait_for_ip",
            address: Some(Family::Ipv4),
            timeout: Duration::from_secs(5),
        };
        let m = timed_out(
            &w,
            7,
            Family::Ipv4,
            &Seen::Addresses(vec!["fe80::1".into(), "169.254.3.4".into()]),
        )
        .msg;
        assert_eq!(m, "wait_for_ip: VM 7's guest had only fe80::1, 169.254.3.4 after 5 s (wait_timeout), no usable IPv4 address (link-local fe80::/10, APIPA 169.254/16 and loopback do not count)");
        let m = timed_out(
            &w,
            7,
            Family::Ipv4,
            &Seen::Silent("QEMU guest agent is not running".into()),
        )
        .msg;
        assert!(
            m.contains("did not answer within 5 s (wait_timeout); last answer: QEMU guest agent is not running"),
            "{m}"
        );
    }
}
