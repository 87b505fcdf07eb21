//! Runs a [`Plan`]: each action is one PVE call (plus waiting on its task). In check
//! mode nothing is called; the plan is the report. [`execute`] is the one way a driver
//! writes: the plan held to the privilege gate (a plan PVE would refuse fails before any
//! write, and in check mode goes to the run's plan as refused), run by an [`Executor`],
//! and in check mode its effects buffered for the later tasks of the run.
//!
//! Errors carry community.proxmox 1.6's message for the operation, then PVE's answer;
//! a failed task is reported at once with its exit status and log tail.
//!
//! Each action is one method of [`Executor`], with what it does when PVE's answer was
//! lost; the methods live by kind of action: `new_vm` (create, clone), [`busy_lock`] (a
//! create or clone failed on a busy storage's or config's lock: what it left removed,
//! tried again), `config` (update, delete, revert), `pool_move`, `power`, `migrate`,
//! `remove`, `template`.

pub mod busy_lock;
mod config;
mod migrate;
mod new_vm;
mod pool_move;
mod power;
mod remove;
mod template;

use std::collections::BTreeMap;
use std::time::Duration;

use ferrox_common::ansible::protocol::Failure;
use ferrox_common::api::client::{ApiError, Client};
use ferrox_common::api::tasks::TaskError;
use ferrox_common::cluster::vm;
use ferrox_common::pve::privileges::Target;
use ferrox_common::pve::tags::TagCase;
use ferrox_common::run::vm_task::Effects;
use serde_json::{Map, Value};

use crate::api::Vm;
use crate::observe::listing::Listing;
use crate::plan::{effects, privileges, Action, Plan};
use crate::Run;
pub use migrate::is_ha_migration;
pub use power::ha_request_target;

/// The smallest wait for creating, cloning, restoring, converting and removing.
const LONG_TASK_SECS: u64 = 300;

/// Runs `plan` on the VM named `name` (for messages) unless in check mode, and returns
/// what it found out; the `actions` list goes on the result either way. `listing`: the
/// run's (which vmids are taken); `effects`: the run's check-mode effects so far.
pub fn execute(
    run: &Run,
    listing: &Listing,
    tag_case: &TagCase,
    effects: &mut Effects,
    warnings: &mut Vec<String>,
    plan: &mut Plan,
    name: String,
) -> Result<Outcome, Failure> {
    let check_mode = run.task.check_mode;
    // Whether PVE will allow all of it: a plan it would refuse fails before any write.
    let writes = privileges::of(plan, &plan.known);
    let target = Target {
        vmid: plan.vm.vmid,
        node: &plan.vm.node,
        planned: check_mode && listing.listed_name(plan.vm.vmid).is_none(),
    };
    let verdict = effects.hold(&run.gate, "proxmox_kvm", &target, &writes, check_mode);
    warnings.extend(run.gate.take_warnings());
    verdict?;
    let mut exec = Executor::of(run, listing, tag_case, name);
    let result = exec.run(plan);
    warnings.append(&mut exec.outcome.warnings);
    if result.is_ok() {
        let planned = effects::effects(plan, run.task.name.as_deref(), &plan.known, tag_case);
        effects.record_all(check_mode, planned);
    }
    result.map(|_| exec.outcome)
}

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
    pub fn with_pending(
        &self,
        out: ferrox_common::ansible::protocol::Output,
    ) -> ferrox_common::ansible::protocol::Output {
        if self.pending.is_empty() {
            out
        } else {
            out.with("pending", self.pending.clone())
        }
    }
}

pub struct Executor<'a> {
    pub client: &'a Client,
    pub check_mode: bool,
    /// `timeout`: budget for each task.
    pub timeout: Duration,
    /// Budget for creating, cloning and restoring.
    pub long_timeout: Duration,
    /// The VM's name for messages (`name` option, else the VM's name).
    pub name: String,
    pub skiplock: bool,
    /// vmids listed when the plan was made, with the name listed (`None` before the
    /// VM's name is broadcast), for the next candidate of a range.
    pub listed: BTreeMap<u32, Option<String>>,
    /// How the cluster compares tags, for a config compared again while running.
    pub tag_case: TagCase<'a>,
    pub outcome: Outcome,
}

impl<'a> Executor<'a> {
    /// The executor of the task: its budgets, `skiplock`, the vmids listed when the plan
    /// was made.
    fn of(run: &Run<'a>, listing: &Listing, tag_case: &TagCase<'a>, name: String) -> Executor<'a> {
        let timeout = run.task.timeout.as_secs();
        Executor {
            client: run.client,
            check_mode: run.task.check_mode,
            timeout: Duration::from_secs(timeout),
            long_timeout: Duration::from_secs(timeout.max(LONG_TASK_SECS)),
            name,
            skiplock: run.task.skiplock,
            listed: listing
                .listed()
                .map(|(vmid, name)| (vmid, name.map(str::to_string)))
                .collect(),
            tag_case: tag_case.clone(),
            outcome: Outcome::default(),
        }
    }
}

impl Executor<'_> {
    /// Runs every action in order; the plan's VM is updated when a new vmid had to be
    /// chosen because of a collision.
    pub fn run(&mut self, plan: &mut Plan) -> Result<(), Failure> {
        if self.check_mode {
            return Ok(());
        }
        for action in plan.actions.clone() {
            if self.outcome.adopted.is_some() {
                return Ok(());
            }
            if let Err(mut failure) = self.run_one(&mut plan.vm, &action) {
                if !self.outcome.done.is_empty() {
                    failure.msg.push_str(&format!(
                        " Already done before this failure: {}. A rerun continues from there.",
                        self.outcome.done.join("; ")
                    ));
                    failure = failure.with("done", &self.outcome.done);
                }
                return Err(failure);
            }
            // An update records its own steps (config written, each disk grown).
            if !matches!(
                action,
                Action::Converge { .. } | Action::WaitListed | Action::RebootIfPending { .. }
            ) {
                self.outcome.done.push(action.describe(&plan.vm));
            }
        }
        Ok(())
    }

    /// Runs one action: each method makes its PVE call and, where PVE's answer can be
    /// lost, reconciles it by reading back what PVE did.
    pub(crate) fn run_one(&mut self, vm: &mut Vm, action: &Action) -> Result<(), Failure> {
        match action {
            Action::Create { form, allocation } => self.create(vm, form, allocation),
            Action::Clone {
                source,
                form,
                allocation,
            } => self.clone_vm(vm, source, form, allocation),
            Action::WaitListed => {
                self.wait_listed(vm.vmid);
                Ok(())
            }
            Action::Converge {
                wanted,
                changes,
                digest,
                recompute,
            } => self.converge(vm, wanted, changes, digest.as_deref(), *recompute),
            Action::RebootIfPending { cloud_init } => self.reboot_if_pending(vm, *cloud_init),
            Action::Power(call) => self.power(vm, call),
            Action::Template => self.template(vm),
            Action::Destroy {
                purge,
                unreferenced_disks,
            } => self.destroy(vm, *purge, *unreferenced_disks),
            Action::Migrate {
                target,
                online,
                with_local_disks,
                options,
            } => self.migrate(vm, target, *online, *with_local_disks, options),
            Action::MoveClone {
                from,
                to,
                targetstorage,
            } => self.move_clone(vm, from, to, targetstorage.as_deref()),
            Action::DeleteKeys(keys) => self.delete_keys(vm, keys),
            Action::PoolMove { from, to } => self.pool_move(vm, from.as_deref(), to),
            Action::RevertKeys(keys) => self.revert_keys(vm, keys),
        }
    }

    fn wait_answer(
        &mut self,
        answer: &Value,
        budget: Duration,
        op: &str,
        prefix: &str,
        vmid: u32,
    ) -> Result<(), Failure> {
        match answer.as_str().filter(|s| s.starts_with("UPID:")) {
            Some(upid) => self.wait(upid, budget, op, prefix, vmid),
            None => Ok(()),
        }
    }

    /// Waits for the task; warnings it ended with (`WARNINGS: n`) become warnings of
    /// the result.
    fn wait(&mut self, upid: &str, budget: Duration, op: &str, prefix: &str, vmid: u32) -> Result<(), Failure> {
        self.follow(upid, budget)
            .map_err(|e| Failure::new(task_failure(prefix, op, e)).with("vmid", vmid))
    }

    /// Waits for the task; warnings it ended with (`WARNINGS: n`) become warnings of
    /// the result, and a failure is returned as PVE reported it.
    pub(crate) fn follow(&mut self, upid: &str, budget: Duration) -> Result<(), TaskError> {
        let done = ferrox_common::api::tasks::wait(self.client, upid, budget)?;
        self.outcome
            .warnings
            .extend(done.warnings.into_iter().map(|w| format!("task {upid}: {w}")));
        Ok(())
    }
}

pub(crate) fn api_fail(prefix: &str, e: ApiError, vmid: u32) -> Failure {
    Failure::new(format!("{prefix}{e}")).with("vmid", vmid)
}

/// A failed or timed-out task in words: 1.6's timeout text, plus what it lacked (the
/// task's id, how long we waited, the last log line rather than the first).
pub fn task_failure(prefix: &str, op: &str, e: TaskError) -> String {
    match e {
        TaskError::Timeout { upid, waited, last_line } => format!(
            "Reached timeout while waiting for {op} VM. Last line in task before timeout: {} (task {upid} still running after {} s; it continues in PVE)",
            last_line.unwrap_or_else(|| "(no output yet)".into()),
            waited.as_secs()
        ),
        TaskError::Failed { upid, exitstatus, log_tail } => {
            let tail = if log_tail.is_empty() { String::new() } else { format!(" Task log: {}", log_tail.join(" | ")) };
            format!("{prefix}{exitstatus} (task {upid}).{tail}")
        }
        TaskError::Api(e) => format!("{prefix}{e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_failures_name_the_task_and_what_it_said() {
        let timeout = TaskError::Timeout {
            upid: "UPID:pve1:1:2:3:qmclone:9000:root@pam:".into(),
            waited: Duration::from_secs(300),
            last_line: Some("transferred 1.0 GiB of 32.0 GiB (3.12%)".into()),
        };
        assert_eq!(
            task_failure("Unable to clone vm x from vmid 9000: ", "creating", timeout),
            "Reached timeout while waiting for creating VM. Last line in task before timeout: transferred 1.0 GiB of 32.0 GiB (3.12%) (task UPID:pve1:1:2:3:qmclone:9000:root@pam: still running after 300 s; it continues in PVE)"
        );
        let failed = TaskError::Failed {
            upid: "UPID:pve1:1:2:3:qmstart:100:root@pam:".into(),
            exitstatus: "start failed: bridge 'vmbr9' does not exist".into(),
            log_tail: vec!["TASK ERROR: start failed: bridge 'vmbr9' does not exist".into()],
        };
        assert_eq!(
            task_failure("starting of VM 100 failed with exception: ", "starting", failed),
            "starting of VM 100 failed with exception: start failed: bridge 'vmbr9' does not exist (task UPID:pve1:1:2:3:qmstart:100:root@pam:). Task log: TASK ERROR: start failed: bridge 'vmbr9' does not exist"
        );
    }

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
        assert!(is_ha_migration(
            "UPID:pve1:00100001:01000000:6570A1B2:hamigrate:100:root@pam:"
        ));
        assert!(!is_ha_migration(
            "UPID:pve1:00100001:01000000:6570A1B2:qmigrate:100:root@pam:"
        ));
    }
}
