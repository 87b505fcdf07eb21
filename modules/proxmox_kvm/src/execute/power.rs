//! Power calls, done once the VM is in the state asked for: after an HA request or a
//! reboot, that is later than the call's task ends.

use std::time::Duration;

use ferrox_ansible::protocol::Failure;

use super::{api_fail, Executor};
use crate::api::{self, Vm};
use crate::plan::PowerCall;

impl Executor<'_> {
    /// Reboots a running VM when the update left changes pending, or when its
    /// cloud-init drive lacks changes only a start brings to it.
    pub(super) fn reboot_if_pending(&mut self, vm: &Vm, cloud_init: bool) -> Result<(), Failure> {
        if self.outcome.pending.is_empty() && !cloud_init {
            return Ok(());
        }
        let power = api::power(self.client, vm).map_err(|e| Failure::new(e.to_string()))?;
        if power.status != "running" {
            return Ok(());
        }
        self.power(vm, &PowerCall::Reboot)?;
        self.outcome.rebooted_for_pending = true;
        self.outcome
            .done
            .push(format!("rebooted VM {} to apply pending changes", vm.vmid));
        Ok(())
    }

    pub(super) fn power(&mut self, vm: &Vm, call: &PowerCall) -> Result<(), Failure> {
        let id = vm.vmid;
        let (doing, op) = match call {
            PowerCall::Start | PowerCall::Resume => ("starting", "starting"),
            PowerCall::Shutdown { .. } => ("stopping", "stopping"),
            PowerCall::Reboot | PowerCall::Reset => ("restarting", "rebooting"),
            PowerCall::Suspend { .. } => ("suspending", "suspending"),
        };
        let prefix = format!("{doing} of VM {id} failed with exception: ");
        let mut body: Vec<(&str, String)> = Vec::new();
        let mut budget = self.timeout;
        match call {
            PowerCall::Shutdown { force, timeout } => {
                body.push(("forceStop", u8::from(*force).to_string()));
                body.push(("timeout", timeout.to_string()));
                budget = Duration::from_secs(timeout + 10).max(self.timeout);
            }
            PowerCall::Suspend { to_disk: true } => body.push(("todisk", "1".into())),
            _ => {}
        }
        if self.skiplock && !matches!(call, PowerCall::Reboot) {
            body.push(("skiplock", "1".into()));
        }
        let started = std::time::Instant::now();
        let answer = self
            .client
            .post(&vm.path(&format!("/status/{}", call.endpoint())), &body)
            .map_err(|e| api_fail(&prefix, e, id))?;
        self.wait_answer(&answer, budget, op, &prefix, id)?;
        // An HA-managed VM: the task only handed the request to the HA manager, which
        // starts or stops the VM later in its own task. Done means the state is reached.
        if let Some(want) = answer.as_str().and_then(ha_request_target) {
            let left = budget.saturating_sub(started.elapsed());
            self.wait_power_state(vm, want, left, op, &prefix, Waited::HaManager)?;
        } else if matches!(call, PowerCall::Reboot) {
            // PVE's reboot task ends when the guest has shut down; the host starts it
            // again in a task of its own. Restarted means running again.
            let left = budget.saturating_sub(started.elapsed());
            self.wait_power_state(vm, "running", left, op, &prefix, Waited::HostRestart)?;
        }
        Ok(())
    }

    /// Polls `status/current` until the VM is `want` (after an HA request, or a reboot).
    fn wait_power_state(
        &mut self,
        vm: &Vm,
        want: &str,
        budget: Duration,
        op: &str,
        prefix: &str,
        waited: Waited,
    ) -> Result<(), Failure> {
        let t0 = std::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let power = api::power(self.client, vm).map_err(|e| api_fail(prefix, e, vm.vmid))?;
            if power.status == want {
                return Ok(());
            }
            if t0.elapsed() >= budget {
                let (id, status, secs) = (vm.vmid, &power.status, t0.elapsed().as_secs());
                let msg = match waited {
                    Waited::HaManager => format!("Reached timeout while waiting for {op} VM. VM {id} is HA-managed: the HA manager accepted the request, but the VM was still {status} after {secs} s (check `ha-manager status` on the cluster, or raise timeout)"),
                    Waited::HostRestart => format!("Reached timeout while waiting for {op} VM. VM {id} shut down for its reboot, but the host had not started it again after {secs} s (status {status}; see the node's task list for its qmstart, or raise timeout)"),
                };
                return Err(Failure::new(msg).with("vmid", id));
            }
            std::thread::sleep(pause.min(budget.saturating_sub(t0.elapsed())));
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }
}

/// The power state an HA request's task (`hastart`/`hastop` in the UPID's type field)
/// leads to once the HA manager has acted.
pub(crate) fn ha_request_target(upid: &str) -> Option<&'static str> {
    match upid.split(':').nth(5)? {
        "hastart" => Some("running"),
        "hastop" => Some("stopped"),
        _ => None,
    }
}

/// Who changes the power state after the task the module waited for.
#[derive(Debug, Clone, Copy)]
enum Waited {
    /// The HA manager, after a `hastart`/`hastop` request.
    HaManager,
    /// The host (qmeventd), starting a VM again after its `qmreboot`.
    HostRestart,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ha_requests_are_recognised_by_their_task_type() {
        assert_eq!(
            ha_request_target("UPID:pve1:00100001:01000000:6570A1B2:hastart:100:root@pam:"),
            Some("running")
        );
        assert_eq!(
            ha_request_target("UPID:pve1:00100001:01000000:6570A1B2:hastop:100:root@pam:"),
            Some("stopped")
        );
        assert_eq!(
            ha_request_target("UPID:pve1:00100001:01000000:6570A1B2:qmstart:100:root@pam:"),
            None
        );
        assert_eq!(ha_request_target("not a upid"), None);
    }
}
