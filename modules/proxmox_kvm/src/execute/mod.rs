//! Runs a [`Plan`]: each action is one PVE call (plus waiting on its task). A task of
//! the one driver writes with [`Op::carry_out`], run by an [`Executor`] (the driver
//! holds the plan to the privilege gate before, a plan PVE would refuse failing before
//! any write, and keeps its effects); in check mode the driver does not execute, and
//! the task hands it the plan's effects instead ([`Op::predict`]).
//!
//! Errors carry community.proxmox 1.6's message for the operation, then PVE's answer;
//! a failed task is reported at once with its exit status and log tail.
//!
//! Each action is one method of [`Executor`], with what it does when PVE's answer was
//! lost. The config writes are here: the update's keys and grown disks (`Converge`, the
//! action every create, clone and update ends with), deleted and reverted keys. The
//! other methods live by kind of action: `new_vm` (create, clone), [`busy_lock`] (a
//! create or clone failed on a busy storage's or config's lock: what it left removed,
//! tried again), `pool_move`, `power`, `migrate`, `remove`, `template`. What the run
//! found out is an [`Outcome`]; `failure` words a failed call or task.

pub(crate) mod busy_lock;
mod failure;
mod migrate;
mod new_vm;
mod outcome;
mod pool_move;
mod power;
mod remove;
mod template;

use std::collections::BTreeMap;
use std::time::Duration;

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::tags::TagCase;
use ferrox_pve_client::client::{ApiError, Client};
use ferrox_pve_client::recover::{self, Search};
use ferrox_pve_client::tasks::{TaskDone, TaskError};
use ferrox_pve_rules::propstring::versions::Versioned;
use ferrox_run::driver::{Cx, Prediction};
use serde_json::Value;

use crate::api::{self, fields, Vm};
use crate::converge::{self, Changes};
use crate::observe::listing::Listing;
use crate::plan::{effects, Action, Plan};
use crate::step::{Op, Run};
use crate::task::Config;
pub(crate) use failure::task_failure;
pub(crate) use failure::{api_fail, newer_keys_refused};
pub(crate) use outcome::Outcome;

/// The smallest wait for creating, cloning, restoring, converting and removing.
const LONG_TASK_SECS: u64 = 300;

impl Op<'_> {
    /// Check mode: the effects of `plan` on the VM the task names, which later tasks of
    /// the run see as done.
    pub(crate) fn predict(&self, plan: &Plan) -> Prediction {
        Prediction {
            effects: effects::effects(plan, self.task.name.as_deref(), &self.tag_case),
            warnings: Vec::new(),
        }
    }

    /// Runs `plan` (`name`: the VM's, for messages) once the driver held it to the
    /// privilege gate, and returns what it found out; its warnings go to `cx`, failed
    /// or not.
    pub(crate) fn carry_out(
        &self,
        cx: &mut Cx<'_>,
        listing: &Listing,
        plan: &mut Plan,
        name: String,
    ) -> Result<Outcome, Failure> {
        let run = self.run(cx);
        let mut exec = Executor::of(&run, listing, name);
        let result = exec.run(plan);
        let mut outcome = exec.outcome;
        for w in std::mem::take(&mut outcome.warnings) {
            cx.warn(w);
        }
        result.map(|_| outcome)
    }
}

pub(crate) struct Executor<'a> {
    pub(crate) client: &'a Client,
    /// `timeout`: budget for each task.
    pub(crate) timeout: Duration,
    /// Budget for creating, cloning and restoring.
    pub(crate) long_timeout: Duration,
    /// The VM's name for messages (`name` option, else the VM's name).
    pub(crate) name: String,
    pub(crate) skiplock: bool,
    /// vmids listed when the plan was made, with the name listed (`None` before the
    /// VM's name is broadcast), for the next candidate of a range.
    pub(crate) listed: BTreeMap<u32, Option<String>>,
    /// How the cluster compares tags, for a config compared again while running.
    pub(crate) tag_case: TagCase<'a>,
    /// The task's keys only the node decides: a node's refusal of them is explained.
    pub(crate) newer_keys: &'a [Versioned],
    pub(crate) outcome: Outcome,
}

impl<'a> Executor<'a> {
    /// The executor of the task: its budgets, `skiplock`, the vmids listed when the plan
    /// was made.
    fn of(run: &Run<'a>, listing: &Listing, name: String) -> Executor<'a> {
        let timeout = run.task.timeout.as_secs();
        Executor {
            client: run.client,
            timeout: Duration::from_secs(timeout),
            long_timeout: Duration::from_secs(timeout.max(LONG_TASK_SECS)),
            name,
            skiplock: run.task.skiplock,
            listed: listing
                .listed()
                .map(|(vmid, name)| (vmid, name.map(str::to_string)))
                .collect(),
            tag_case: run.tag_case.clone(),
            newer_keys: &run.task.newer_keys,
            outcome: Outcome::default(),
        }
    }
}

impl Executor<'_> {
    /// Runs every action in order; the plan's VM is updated when a new vmid had to be
    /// chosen because of a collision.
    pub(crate) fn run(&mut self, plan: &mut Plan) -> Result<(), Failure> {
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

    /// After a call's answer was lost: its `kind` task on `vm`, started since `since`,
    /// followed to its end (`None`: none was started), its warnings those of the result;
    /// the task's failure worded as `op`'s (`prefix`: 1.6's message for the operation).
    fn lost_task(
        &mut self,
        vm: &Vm,
        kind: &str,
        since: u64,
        op: &str,
        prefix: &str,
    ) -> Result<Option<TaskDone>, Failure> {
        let search = Search {
            node: &vm.node,
            kind,
            vmid: vm.vmid,
            since,
        };
        let found = recover::find_and_wait(self.client, &search, self.long_timeout)
            .map_err(|te| Failure::new(task_failure(prefix, op, te)).with("vmid", vm.vmid))?;
        self.outcome
            .warnings
            .extend(found.iter().flat_map(TaskDone::result_warnings));
        Ok(found)
    }

    /// Waits for the task; warnings it ended with (`WARNINGS: n`) become warnings of
    /// the result, and a failure is returned as PVE reported it.
    pub(crate) fn follow(&mut self, upid: &str, budget: Duration) -> Result<(), TaskError> {
        let done = ferrox_pve_client::tasks::wait(self.client, upid, budget)?;
        self.outcome.warnings.extend(done.result_warnings());
        Ok(())
    }

    /// Writes the config keys that differ (guarded by the config digest, re-planned
    /// after a lost answer), then grows disks; what stays pending and
    /// the effective config are read back for the result. With `recompute` the changes
    /// come from the VM's real config (a VM just made), not the plan.
    fn converge(
        &mut self,
        vm: &Vm,
        wanted: &Config,
        planned: &Changes,
        digest: Option<&str>,
        recompute: bool,
    ) -> Result<(), Failure> {
        let id = vm.vmid;
        let prefix = format!("Unable to update vm {} with vmid {id}: ", self.name);
        let (changes, digest) = if recompute {
            self.changes_now(vm, wanted, &prefix)?
        } else {
            (planned.clone(), digest.map(str::to_string))
        };
        if changes.is_empty() {
            return Ok(());
        }
        let written = changes.keys();
        let changes = self.write_config(vm, wanted, changes, digest, &prefix)?;
        for grow in &changes.grow {
            self.grow(vm, grow, &prefix)?;
            self.outcome
                .done
                .push(format!("grew {} of VM {id} to {}", grow.key, grow.to));
        }
        self.outcome.written = written;
        let pending = api::pending(self.client, vm).map_err(|e| api_fail(&prefix, e, id))?;
        self.outcome.pending = pending.waiting;
        self.outcome.config = Some(pending.effective);
        Ok(())
    }

    /// What the VM's config lacks of `wanted` now, with the digest of the config read.
    fn changes_now(&self, vm: &Vm, wanted: &Config, prefix: &str) -> Result<(Changes, Option<String>), Failure> {
        let id = vm.vmid;
        let current = api::config(self.client, vm).map_err(|e| api_fail(prefix, e, id))?;
        let digest = current.get("digest").and_then(Value::as_str).map(str::to_string);
        let changes =
            converge::changes(&current, wanted, id, &self.tag_case).map_err(|e| Failure::new(e).with("vmid", id))?;
        Ok((changes, digest))
    }

    /// Writes `changes.set`, guarded by `digest`. Returns the changes as they stand
    /// after the write: a lost answer re-plans them, and their disks are grown next.
    fn write_config(
        &mut self,
        vm: &Vm,
        wanted: &Config,
        mut changes: Changes,
        mut digest: Option<String>,
        prefix: &str,
    ) -> Result<Changes, Failure> {
        let id = vm.vmid;
        let mut resends = 0;
        while !changes.set.is_empty() {
            let since = recover::now();
            match self.send_config(vm, &changes, digest.clone()) {
                Ok(answer) => {
                    self.wait_answer(&answer, self.long_timeout, "updating", prefix, id)?;
                    self.outcome.done.push(format!(
                        "set {} of VM {id}",
                        changes.set.keys().cloned().collect::<Vec<_>>().join(", ")
                    ));
                    break;
                }
                Err(e) if e.answer_lost() && resends < recover::MAX_RESENDS => {
                    resends += 1;
                    (changes, digest) = self.replan_config(vm, wanted, changes.allocates, &e, since, prefix)?;
                }
                Err(e) => return Err(api_fail(prefix, e, id)),
            }
        }
        Ok(changes)
    }

    /// One config write of `changes.set`, with the digest and `skiplock` when asked.
    fn send_config(&self, vm: &Vm, changes: &Changes, digest: Option<String>) -> Result<Value, ApiError> {
        let mut body: Vec<(String, String)> = changes.set.clone().into_iter().collect();
        if let Some(d) = digest {
            body.push(("digest".into(), d));
        }
        if self.skiplock {
            body.push(("skiplock".into(), "1".into()));
        }
        // Allocating storage can outlast an HTTP request: PVE runs it as a task.
        let sent = if changes.allocates {
            self.client.post(&vm.path("/config"), &fields(&body))
        } else {
            self.client.put(&vm.path("/config"), &fields(&body))
        };
        sent.map_err(|e| newer_keys_refused(e, self.newer_keys, &vm.node))
    }

    /// After a config write's answer was lost: lets a config task of the lost call
    /// finish, then re-reads and re-plans. What it applied drops out of the plan, and
    /// the new digest keeps anything from being applied twice.
    fn replan_config(
        &mut self,
        vm: &Vm,
        wanted: &Config,
        allocates: bool,
        lost: &ApiError,
        since: u64,
        prefix: &str,
    ) -> Result<(Changes, Option<String>), Failure> {
        let id = vm.vmid;
        if allocates {
            let search = Search {
                node: &vm.node,
                kind: "qmconfig",
                vmid: id,
                since,
            };
            let found = recover::find_and_wait(self.client, &search, self.long_timeout)
                .map_err(|te| Failure::new(format!("{prefix}{}", task_failure("", "updating", te))).with("vmid", id))?;
            self.outcome
                .warnings
                .extend(found.iter().flat_map(TaskDone::result_warnings));
        }
        let (changes, digest) = self.changes_now(vm, wanted, prefix)?;
        let found = if changes.set.is_empty() {
            format!("the config of VM {id} shows the change applied")
        } else {
            format!("the config of VM {id} lacks the change; it is sent again")
        };
        self.outcome.warnings.push(recover::warning(lost, &found));
        Ok((changes, digest))
    }

    /// Grows a disk; a lost answer is reconciled through the `resize` task (an absolute
    /// size may be sent again: PVE leaves a disk of that size as it is).
    fn grow(&mut self, vm: &Vm, grow: &converge::Grow, prefix: &str) -> Result<(), Failure> {
        let id = vm.vmid;
        let body = [("disk", grow.key.clone()), ("size", grow.to.clone())];
        for resend in 0.. {
            let since = recover::now();
            match self.client.put(&vm.path("/resize"), &body) {
                Ok(answer) => return self.wait_answer(&answer, self.long_timeout, "resizing disk of", prefix, id),
                Err(e) if e.answer_lost() && resend < recover::MAX_RESENDS => {
                    match self.lost_task(vm, "resize", since, "resizing disk of", prefix)? {
                        Some(done) => {
                            self.outcome.warnings.push(recover::warning(
                                &e,
                                &format!("task {} grew {} of VM {id}", done.upid, grow.key),
                            ));
                            return Ok(());
                        }
                        None => self.outcome.warnings.push(recover::warning(
                            &e,
                            &format!("no resize task was started for {} of VM {id}; sent again", grow.key),
                        )),
                    }
                }
                Err(e) => return Err(Failure::new(format!("{prefix}{e}")).with("vmid", id)),
            }
        }
        unreachable!("the loop returns")
    }

    /// Deletes config keys.
    fn delete_keys(&self, vm: &Vm, keys: &[String]) -> Result<(), Failure> {
        let id = vm.vmid;
        let prefix = format!("Unable to delete settings on VM {} with vmid {id}: ", self.name);
        let mut body = vec![("delete", keys.join(","))];
        if self.skiplock {
            body.push(("skiplock", "1".into()));
        }
        self.client
            .put(&vm.path("/config"), &body)
            .map_err(|e| api_fail(&prefix, e, id))?;
        Ok(())
    }

    /// Reverts pending changes of config keys.
    fn revert_keys(&self, vm: &Vm, keys: &[String]) -> Result<(), Failure> {
        let id = vm.vmid;
        let prefix = format!(
            "Unable to revert settings on VM {} with vmid {id}: Maybe is not a pending task...   ",
            self.name
        );
        self.client
            .put(&vm.path("/config"), &[("revert", keys.join(","))])
            .map_err(|e| api_fail(&prefix, e, id))?;
        Ok(())
    }
}
