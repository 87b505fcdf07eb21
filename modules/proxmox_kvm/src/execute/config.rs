//! Config writes: the update's keys (guarded by the config digest, re-planned after a
//! lost answer) and its disks grown, config keys deleted or reverted.

use ferrox_common::ansible::protocol::Failure;
use ferrox_common::api::client::ApiError;
use ferrox_common::api::recover::{self, Search};
use serde_json::Value;

use super::{api_fail, task_failure, Executor};
use crate::api::{self, fields, Vm};
use crate::converge::{self, Changes};
use crate::task::Config;

impl Executor<'_> {
    /// Writes the config keys that differ, then grows disks; what stays pending and
    /// the effective config are read back for the result. With `recompute` the changes
    /// come from the VM's real config (a VM just made), not the plan.
    pub(super) fn converge(
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
        if changes.allocates {
            self.client.post(&vm.path("/config"), &fields(&body))
        } else {
            self.client.put(&vm.path("/config"), &fields(&body))
        }
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
            recover::find_and_wait(self.client, &search, self.long_timeout)
                .map_err(|te| Failure::new(format!("{prefix}{}", task_failure("", "updating", te))).with("vmid", id))?;
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
                    let search = Search {
                        node: &vm.node,
                        kind: "resize",
                        vmid: id,
                        since,
                    };
                    let found = recover::find_and_wait(self.client, &search, self.long_timeout)
                        .map_err(|te| Failure::new(task_failure(prefix, "resizing disk of", te)).with("vmid", id))?;
                    match found {
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
    pub(super) fn delete_keys(&self, vm: &Vm, keys: &[String]) -> Result<(), Failure> {
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
    pub(super) fn revert_keys(&self, vm: &Vm, keys: &[String]) -> Result<(), Failure> {
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
