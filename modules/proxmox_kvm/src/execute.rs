//! Runs a [`Plan`]: each action is one PVE call (plus waiting on its task). In check
//! mode nothing is called; the plan is the report.
//!
//! Errors carry community.proxmox 1.6's message for the operation, then PVE's answer;
//! a failed task is reported at once with its exit status and log tail.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use ferrox_common::client::{ApiError, Client};
use ferrox_common::protocol::Failure;
use ferrox_common::recover::{self, Search};
use ferrox_common::tags::TagCase;
use ferrox_common::tasks::TaskError;
use ferrox_common::vm;
use serde_json::{Map, Value};

use crate::api::{self, fields, Vm};
use crate::converge::{self, Changes};
use crate::plan::{Action, Allocation, Plan, PowerCall};
use crate::probe;
use crate::wanted::Config;

/// How often a collision on a new vmid is retried before giving up.
const MAX_ALLOCATION_ATTEMPTS: u32 = 40;
/// How long to wait for a new VM to be listed with its name (PVE's status broadcast
/// runs every 10 seconds).
const LISTED_TIMEOUT: Duration = Duration::from_secs(30);

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
        out: ferrox_common::protocol::Output,
    ) -> ferrox_common::protocol::Output {
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
                Action::Converge { .. } | Action::WaitListed { .. } | Action::RebootIfPending { .. }
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
            Action::WaitListed { name } => {
                self.wait_listed(vm.vmid, name.as_deref());
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
            Action::MoveClone { from, to, targetstorage } => {
                self.move_clone(vm, from, to, targetstorage.as_deref())
            }
            Action::DeleteKeys(keys) => self.delete_keys(vm, keys),
            Action::PoolMove { from, to } => self.pool_move(vm, from.as_deref(), to),
            Action::RevertKeys(keys) => self.revert_keys(vm, keys),
        }
    }

    /// Creates (or restores) the VM under the vmid its allocation gives; a lost answer
    /// is reconciled by [`Self::allocate_and_post`].
    fn create(&mut self, vm: &mut Vm, form: &[(String, String)], allocation: &Allocation) -> Result<(), Failure> {
        let name = self.name.clone();
        let prefix =
            |id: u32| format!("creation of qemu VM {name} with vmid {id} failed with exception=");
        let node = vm.node.clone();
        let named = name_in(form);
        self.post_while_busy(vm, named.as_deref(), &prefix, "creating", |this, vm| {
            this.allocate_and_post(vm, allocation, &prefix, None, named.as_deref(), |c, id| {
                let mut body = vec![("vmid".to_string(), id.to_string())];
                body.extend(form.iter().cloned());
                c.post(&format!("/nodes/{node}/qemu"), &fields(&body)).map_err(ha_managed_unknown)
            })
        })
    }

    /// Clones `source` to the plan's VM; a lost answer is reconciled by
    /// [`Self::allocate_and_post`].
    fn clone_vm(
        &mut self,
        vm: &mut Vm,
        source: &Vm,
        form: &[(String, String)],
        allocation: &Allocation,
    ) -> Result<(), Failure> {
        let name = self.name.clone();
        let prefix = |_: u32| format!("Unable to clone vm {name} from vmid {}: ", source.vmid);
        let path = source.path("/clone");
        let named = name_in(form);
        self.post_while_busy(vm, named.as_deref(), &prefix, "creating", |this, vm| {
            this.allocate_and_post(vm, allocation, &prefix, Some(source), named.as_deref(), |c, id| {
                let mut body = vec![("newid".to_string(), id.to_string())];
                body.extend(form.iter().cloned());
                c.post(&path, &fields(&body))
            })
        })
    }

    /// Writes the config keys that differ, then grows disks; what stays pending and
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
    fn changes_now(
        &self,
        vm: &Vm,
        wanted: &Config,
        prefix: &str,
    ) -> Result<(Changes, Option<String>), Failure> {
        let id = vm.vmid;
        let current = api::config(self.client, vm).map_err(|e| api_fail(prefix, e, id))?;
        let digest = current.get("digest").and_then(Value::as_str).map(str::to_string);
        let changes = converge::changes(&current, wanted, id, &self.tag_case)
            .map_err(|e| Failure::new(e).with("vmid", id))?;
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
                    (changes, digest) =
                        self.replan_config(vm, wanted, changes.allocates, &e, since, prefix)?;
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
            let search = Search { node: &vm.node, kind: "qmconfig", vmid: id, since };
            recover::find_and_wait(self.client, &search, self.long_timeout).map_err(|te| {
                Failure::new(format!("{prefix}{}", task_failure("", "updating", te))).with("vmid", id)
            })?;
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

    /// Reboots a running VM when the update left changes pending, or when its
    /// cloud-init drive lacks changes only a start brings to it.
    fn reboot_if_pending(&mut self, vm: &Vm, cloud_init: bool) -> Result<(), Failure> {
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

    /// Converts the VM to a template.
    fn template(&mut self, vm: &Vm) -> Result<(), Failure> {
        let id = vm.vmid;
        let prefix = format!("conversion of VM {id} to template failed with exception: ");
        let answer = self
            .client
            .post(&vm.path("/template"), &[])
            .map_err(|e| api_fail(&prefix, e, id))?;
        self.wait_answer(&answer, self.long_timeout, "converting", &prefix, id)
    }

    /// Deletes the VM; a lost answer is reconciled by [`Self::removed_meanwhile`], the
    /// delete sent again only while the VM is still there.
    fn destroy(&mut self, vm: &Vm, purge: bool, unreferenced_disks: bool) -> Result<(), Failure> {
        let id = vm.vmid;
        let prefix = format!("deletion of VM {id} failed with exception: ");
        let mut query = Vec::new();
        if purge {
            query.push(("purge", "1".to_string()));
        }
        if unreferenced_disks {
            query.push(("destroy-unreferenced-disks", "1".to_string()));
        }
        if self.skiplock {
            query.push(("skiplock", "1".to_string()));
        }
        for resend in 0.. {
            let since = recover::now();
            match self.client.delete(&vm.path(""), &query) {
                Ok(answer) => return self.wait_answer(&answer, self.long_timeout, "removing", &prefix, id),
                Err(e) if e.answer_lost() && resend < recover::MAX_RESENDS => {
                    if self.removed_meanwhile(vm, &e, since, &prefix)? {
                        return Ok(());
                    }
                }
                Err(e) => return Err(Failure::new(format!("{prefix}{e}"))),
            }
        }
        unreachable!("the loop returns")
    }

    /// Whether a delete whose answer was lost removed the VM: its `qmdestroy` task
    /// (followed to its end) or the VM's absence says so; the warning says which.
    fn removed_meanwhile(&mut self, vm: &Vm, lost: &ApiError, since: u64, prefix: &str) -> Result<bool, Failure> {
        let id = vm.vmid;
        let search = Search { node: &vm.node, kind: "qmdestroy", vmid: id, since };
        let found = recover::find_and_wait(self.client, &search, self.long_timeout)
            .map_err(|te| Failure::new(task_failure(prefix, "removing", te)).with("vmid", id))?;
        if let Some(done) = found {
            self.outcome.warnings.push(recover::warning(lost, &format!("task {} removed VM {id}", done.upid)));
            return Ok(true);
        }
        if !self.exists(vm).map_err(|e| api_fail(prefix, e, id))? {
            self.outcome.warnings.push(recover::warning(lost, &format!("VM {id} is gone")));
            return Ok(true);
        }
        self.outcome
            .warnings
            .push(recover::warning(lost, &format!("VM {id} is still there and no removal task was started; sent again")));
        Ok(false)
    }

    /// Migrates the VM to `target`; an HA-managed VM is done once the HA manager has
    /// moved it there.
    fn migrate(
        &mut self,
        vm: &Vm,
        target: &str,
        online: bool,
        with_local_disks: bool,
        options: &[(String, String)],
    ) -> Result<(), Failure> {
        let id = vm.vmid;
        let prefix = format!("Unable to migrate VM {id} from {} to {target}: ", vm.node);
        let mut body = vec![
            ("target".to_string(), target.to_string()),
            ("online".to_string(), u8::from(online).to_string()),
            ("with-local-disks".to_string(), u8::from(with_local_disks).to_string()),
        ];
        body.extend(options.iter().cloned());
        let started = std::time::Instant::now();
        let answer = self
            .client
            .post(&vm.path("/migrate"), &fields(&body))
            .map_err(|e| api_fail(&prefix, e, id))?;
        self.wait_answer(&answer, self.long_timeout, "migrating", &prefix, id)?;
        // An HA-managed VM: the task only handed the request to the HA manager,
        // which migrates the VM later in its own task. Done means it is there.
        if answer.as_str().is_some_and(is_ha_migration) {
            let left = self.long_timeout.saturating_sub(started.elapsed());
            self.wait_on_node(vm, target, left)?;
        }
        Ok(())
    }

    /// Moves a clone just made on `from` to `to`; the plan's VM is on `to` after.
    fn move_clone(&mut self, vm: &mut Vm, from: &str, to: &str, targetstorage: Option<&str>) -> Result<(), Failure> {
        let prefix = format!(
            "Unable to clone vm {}: the clone VM {} was made on {from}, its move to {to} failed: ",
            self.name, vm.vmid
        );
        self.migrate_clone(vm, to, targetstorage, &prefix)?;
        vm.node = to.to_string();
        Ok(())
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

    /// Migrates a fresh clone offline to `to` (disks onto `targetstorage`). A lost answer
    /// is reconciled by [`Self::moved_meanwhile`]; only when it finds no move is the
    /// request sent again.
    fn migrate_clone(&mut self, vm: &Vm, to: &str, targetstorage: Option<&str>, prefix: &str) -> Result<(), Failure> {
        let id = vm.vmid;
        let mut body = vec![("target", to.to_string()), ("online", "0".to_string())];
        if let Some(st) = targetstorage {
            body.push(("targetstorage", st.to_string()));
        }
        for resend in 0.. {
            let since = recover::now();
            match self.client.post(&vm.path("/migrate"), &body) {
                Ok(answer) => return self.wait_answer(&answer, self.long_timeout, "migrating", prefix, id),
                Err(e) if e.answer_lost() && resend < recover::MAX_RESENDS => {
                    if self.moved_meanwhile(vm, to, &e, since, prefix)? {
                        return Ok(());
                    }
                }
                Err(e) => return Err(api_fail(prefix, e, id)),
            }
        }
        unreachable!("the loop returns")
    }

    /// Whether a clone's migration whose answer was lost moved it: the `qmigrate` task
    /// is found and followed, or the cluster listing shows the VM on `to` already.
    fn moved_meanwhile(&mut self, vm: &Vm, to: &str, lost: &ApiError, since: u64, prefix: &str) -> Result<bool, Failure> {
        let id = vm.vmid;
        let search = Search { node: &vm.node, kind: "qmigrate", vmid: id, since };
        let found = recover::find_and_wait(self.client, &search, self.long_timeout)
            .map_err(|te| Failure::new(task_failure(prefix, "migrating", te)).with("vmid", id))?;
        if let Some(done) = found {
            self.outcome.warnings.push(recover::warning(lost, &format!("task {} moved VM {id} to {to}", done.upid)));
            return Ok(true);
        }
        let guests = vm::list(self.client).map_err(|e| api_fail(prefix, e, id))?;
        if vm::by_vmid(&guests, id).is_some_and(|g| *g.node == *to) {
            self.outcome.warnings.push(recover::warning(lost, &format!("VM {id} is on {to}")));
            return Ok(true);
        }
        self.outcome
            .warnings
            .push(recover::warning(lost, &format!("no migration task was started for VM {id}; sent again")));
        Ok(false)
    }

    fn power(&mut self, vm: &Vm, call: &PowerCall) -> Result<(), Failure> {
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

    /// Polls the cluster listing until the VM is on `target`, unlocked (after an HA
    /// migration request).
    fn wait_on_node(&mut self, vm: &Vm, target: &str, budget: Duration) -> Result<(), Failure> {
        let t0 = std::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let guests = vm::list(self.client).map_err(|e| api_fail("", e, vm.vmid))?;
            let now = vm::by_vmid(&guests, vm.vmid);
            if now.is_some_and(|g| *g.node == *target && g.lock.is_none()) {
                return Ok(());
            }
            if t0.elapsed() >= budget {
                return Err(Failure::new(format!(
                    "Reached timeout while waiting for migrating VM. VM {} is HA-managed: the HA manager accepted the migration to {target}, but the VM was still on {} after {} s (check `ha-manager status` on the cluster, or raise timeout)",
                    vm.vmid,
                    now.map_or("no node", |g| &*g.node),
                    t0.elapsed().as_secs()
                ))
                .with("vmid", vm.vmid));
            }
            std::thread::sleep(pause.min(budget.saturating_sub(t0.elapsed())));
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// Posts with a vmid, choosing the next one when PVE says it was taken meanwhile
    /// (only for vmids the module chose). Returns the task's UPID, or `None` when a lost
    /// answer was recovered and the new VM is already complete.
    ///
    /// A lost answer is reconciled: the create's (clone's) task is looked up and followed;
    /// with none and no new VM, the same vmid is posted again; a VM there without our task
    /// is someone else's, which counts as a collision.
    fn allocate_and_post(
        &mut self,
        vm: &mut Vm,
        allocation: &Allocation,
        prefix: &dyn Fn(u32) -> String,
        clone_of: Option<&Vm>,
        named: Option<&str>,
        post: impl Fn(&Client, u32) -> Result<Value, ApiError>,
    ) -> Result<Option<String>, Failure> {
        let mut tried = BTreeSet::new();
        let mut resends = 0;
        for attempt in 1.. {
            let since = recover::now();
            match post(self.client, vm.vmid) {
                Ok(answer) => {
                    return answer.as_str().map(|s| Some(s.to_string())).ok_or_else(|| {
                        Failure::new(format!(
                            "{}PVE answered {answer} instead of a task id",
                            prefix(vm.vmid)
                        ))
                        .with("vmid", vm.vmid)
                    })
                }
                Err(e) if e.answer_lost() && resends < recover::MAX_RESENDS => {
                    resends += 1;
                    let fail = |e: ApiError| Failure::new(format!("{}{e}", prefix(vm.vmid))).with("vmid", vm.vmid);
                    match self.reconcile_new(vm, clone_of, named, since).map_err(fail)? {
                        NewVm::Complete(how) => {
                            self.outcome.warnings.push(recover::warning(&e, &how));
                            return Ok(None);
                        }
                        NewVm::Absent(why) => self.outcome.warnings.push(recover::warning(&e, &format!("{why}; sent again"))),
                        NewVm::Foreign if *allocation != Allocation::Given && attempt < MAX_ALLOCATION_ATTEMPTS => {
                            tried.insert(vm.vmid);
                            vm.vmid = self
                                .next_candidate(allocation, &tried)
                                .map_err(|e| Failure::new(format!("{}{e}", prefix(vm.vmid))))?;
                        }
                        NewVm::Foreign => {
                            return Err(Failure::new(format!(
                                "{}{e}; VM {} exists now, but not by a task of this run: another client created it",
                                prefix(vm.vmid),
                                vm.vmid
                            ))
                            .with("vmid", vm.vmid))
                        }
                    }
                }
                Err(e)
                    if e.message.contains("already exists")
                        && named.is_some()
                        && matches!(allocation, Allocation::Range { .. })
                        && attempt < MAX_ALLOCATION_ATTEMPTS =>
                {
                    let fail = |e: ApiError| Failure::new(format!("{}{e}", prefix(vm.vmid))).with("vmid", vm.vmid);
                    match self.holder(vm.vmid, named).map_err(fail)? {
                        Holder::Ours(found) => {
                            self.outcome.adopted = Some(found);
                            return Ok(None);
                        }
                        Holder::Other => {
                            tried.insert(vm.vmid);
                            vm.vmid = self
                                .next_candidate(allocation, &tried)
                                .map_err(|e| Failure::new(format!("{}{e}", prefix(vm.vmid))))?;
                        }
                        // Its create failed and was cleaned up: the id is free again.
                        Holder::Gone => std::thread::sleep(jitter(attempt)),
                    }
                }
                Err(e)
                    if e.message.contains("already exists")
                        && *allocation != Allocation::Given
                        && attempt < MAX_ALLOCATION_ATTEMPTS =>
                {
                    tried.insert(vm.vmid);
                    std::thread::sleep(jitter(attempt));
                    vm.vmid = self
                        .next_candidate(allocation, &tried)
                        .map_err(|e| Failure::new(format!("{}{e}", prefix(vm.vmid))))?;
                }
                Err(e) => {
                    return Err(
                        Failure::new(format!("{}{e}", prefix(vm.vmid))).with("vmid", vm.vmid)
                    )
                }
            }
        }
        unreachable!("the loop returns")
    }

    /// What became of a create (or clone) whose answer was lost.
    ///
    /// Parallel runs share the API user, so a task of "ours" may be another run's that
    /// posted the same vmid: a VM counts as ours only once its config carries our name.
    fn reconcile_new(&self, vm: &Vm, clone_of: Option<&Vm>, named: Option<&str>, since: u64) -> Result<NewVm, ApiError> {
        let id = vm.vmid;
        let mut followed = None;
        if clone_of.is_none() {
            let search = Search { node: &vm.node, kind: "qmcreate", vmid: id, since };
            if let Some(upid) = recover::find_one(self.client, &search)? {
                followed = Some(upid.clone());
                match ferrox_common::tasks::wait(self.client, &upid, self.long_timeout) {
                    Ok(_) => {}
                    // Ours or another run's: unknown. The failed create has cleaned up,
                    // so posting again is safe; if it was ours and fails again, that
                    // failure is reported with its own task log.
                    Err(TaskError::Failed { exitstatus, .. }) => {
                        return Ok(NewVm::Absent(format!(
                            "a create task for VM {id} by the same user ({upid}) failed ({exitstatus}), maybe another run's"
                        )))
                    }
                    Err(TaskError::Api(e)) => return Err(e),
                    Err(timeout) => return Err(ApiError::other(ferrox_common::client::ApiErrorKind::Other, timeout.to_string())),
                }
            }
        } else {
            // A clone's task carries the source's vmid, so parallel clones of one template
            // cannot be told apart by their tasks: the new VM's config (created with
            // `lock: clone` before PVE answers) decides.
            self.wait_unlocked(vm)?;
        }
        match api::config(self.client, vm) {
            Ok(c) if is_ours(&c, named) => {
                let named = named.map(|n| format!(" with the name {n}")).unwrap_or_default();
                Ok(NewVm::Complete(match followed {
                    Some(upid) => format!("task {upid} created VM {id}{named}"),
                    None => format!("VM {id} exists{named}"),
                }))
            }
            Ok(_) => Ok(NewVm::Foreign),
            Err(e) if e.message.contains("does not exist") => {
                Ok(NewVm::Absent(format!("VM {id} does not exist and no task of this run created it")))
            }
            Err(e) => Err(e),
        }
    }

    /// Who holds `vmid`, which PVE just said exists: the cluster listing (consistent
    /// for which vmids exist, where names lag) gives the node, the VM's config the
    /// name. While a create or clone still runs its config has no name yet: wait until
    /// it has one, or is gone (that create failed).
    fn holder(&self, vmid: u32, named: Option<&str>) -> Result<Holder, ApiError> {
        let started = std::time::Instant::now();
        loop {
            let guests = vm::list(self.client)?;
            let Some(guest) = vm::by_vmid(&guests, vmid) else {
                return Ok(Holder::Gone);
            };
            if guest.kind != vm::GuestType::Qemu {
                return Ok(Holder::Other);
            }
            let found = Vm { node: guest.node.to_string(), vmid };
            match api::config(self.client, &found) {
                Ok(c) => match c.get("name").and_then(Value::as_str) {
                    Some(name) if Some(name) == named => return Ok(Holder::Ours(found)),
                    Some(_) => return Ok(Holder::Other),
                    None if c.get("lock").is_none() => return Ok(Holder::Other),
                    None => {}
                },
                Err(e) if e.message.contains("does not exist") => {}
                Err(e) => return Err(e),
            }
            if started.elapsed() >= self.long_timeout {
                return Err(ApiError::other(
                    ferrox_common::client::ApiErrorKind::Timeout,
                    format!(
                        "VM {vmid} was taken meanwhile, and its create by another client was still running after {} s",
                        started.elapsed().as_secs()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// Whether the VM's config exists on its node.
    fn exists(&self, vm: &Vm) -> Result<bool, ApiError> {
        match api::config(self.client, vm) {
            Ok(_) => Ok(true),
            Err(e) if e.message.contains("does not exist") => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Waits until the VM's config has no `lock` (its create or clone task ended) or is gone.
    fn wait_unlocked(&self, vm: &Vm) -> Result<(), ApiError> {
        let started = std::time::Instant::now();
        while started.elapsed() < self.long_timeout {
            match api::config(self.client, vm) {
                Ok(c) if c.get("lock").is_none() => return Ok(()),
                Ok(_) => std::thread::sleep(Duration::from_millis(300)),
                Err(e) if e.message.contains("does not exist") => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
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
                    let search = Search { node: &vm.node, kind: "resize", vmid: id, since };
                    let found = recover::find_and_wait(self.client, &search, self.long_timeout)
                        .map_err(|te| Failure::new(task_failure(prefix, "resizing disk of", te)).with("vmid", id))?;
                    match found {
                        Some(done) => {
                            self.outcome
                                .warnings
                                .push(recover::warning(&e, &format!("task {} grew {} of VM {id}", done.upid, grow.key)));
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

    fn next_candidate(
        &self,
        allocation: &Allocation,
        tried: &BTreeSet<u32>,
    ) -> Result<u32, String> {
        match allocation {
            Allocation::Range { first, last, name } => {
                let name = name.as_deref();
                probe::first_candidate(name, *first, *last, |id| {
                    tried.contains(&id)
                        || probe::held_by_other(self.listed.get(&id).map(Option::as_deref), name)
                })
                .ok_or_else(|| probe::range_full(*first, *last))
            }
            _ => {
                let mut id = api::next_id(self.client)
                    .map_err(|e| format!("Unable to retrieve next free vmid: {e}"))?;
                while tried.contains(&id) {
                    id += 1;
                }
                Ok(id)
            }
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
    fn wait(
        &mut self,
        upid: &str,
        budget: Duration,
        op: &str,
        prefix: &str,
        vmid: u32,
    ) -> Result<(), Failure> {
        self.follow(upid, budget)
            .map_err(|e| Failure::new(task_failure(prefix, op, e)).with("vmid", vmid))
    }

    /// Waits for the task; warnings it ended with (`WARNINGS: n`) become warnings of
    /// the result, and a failure is returned as PVE reported it.
    pub(crate) fn follow(&mut self, upid: &str, budget: Duration) -> Result<(), TaskError> {
        let done = ferrox_common::tasks::wait(self.client, upid, budget)?;
        self.outcome.warnings.extend(done.warnings.into_iter().map(|w| format!("task {upid}: {w}")));
        Ok(())
    }

    /// Polls the cluster listing until the VM shows with its name; a warning (not a
    /// failure) when PVE takes longer.
    fn wait_listed(&mut self, vmid: u32, name: Option<&str>) {
        if let Err(e) = vm::wait_visible(self.client, vmid, name, LISTED_TIMEOUT) {
            self.outcome.warnings.push(format!(
                "{e}; a lookup by name right away may not find VM {vmid}"
            ));
        }
    }
}

/// The power state an HA request's task (`hastart`/`hastop` in the UPID's type field)
/// leads to once the HA manager has acted.
pub fn ha_request_target(upid: &str) -> Option<&'static str> {
    match upid.split(':').nth(5)? {
        "hastart" => Some("running"),
        "hastop" => Some("stopped"),
        _ => None,
    }
}

/// Whether a migration's task (UPID type field) is an HA request, not the migration.
pub fn is_ha_migration(upid: &str) -> bool {
    upid.split(':').nth(5) == Some("hamigrate")
}

/// PVE before 9.0.24 has no `ha-managed` on create and refuses it as an unknown
/// parameter (nothing was made): said in the task's terms.
fn ha_managed_unknown(mut e: ApiError) -> ApiError {
    if e.errors.as_ref().is_some_and(|errs| errs.contains_key("ha-managed")) {
        e.message = "ha_managed: true needs PVE 9.0.24 or later, which takes ha-managed with the create; this cluster does not know it. Create the VM without ha_managed and add it to HA afterwards (ha-manager add vm:<vmid>, or POST /cluster/ha/resources). Nothing was created".to_string();
        e.errors = None;
    }
    e
}

/// Who holds a vmid PVE refused because it exists.
enum Holder {
    /// A VM with the name this task gives (another run's create of the same name).
    Ours(Vm),
    /// A VM of another name, or a container.
    Other,
    /// Nothing any more: its create failed and was cleaned up.
    Gone,
}

/// What a create or clone whose answer was lost left behind.
enum NewVm {
    /// Our VM exists, its create/clone has ended (how it was found).
    Complete(String),
    /// No VM of ours and nothing running for it (why): post again.
    Absent(String),
    /// A VM with that vmid that is not ours: another run took the vmid.
    Foreign,
}

/// The `name` a create or clone form gives the new VM.
fn name_in(form: &[(String, String)]) -> Option<String> {
    form.iter().find(|(k, _)| k == "name").map(|(_, v)| v.clone())
}

/// Whether a config whose create or clone has ended is the VM this task makes: the name
/// the task gave it (without one, a VM there is taken as ours: nothing tells otherwise).
fn is_ours(config: &Map<String, Value>, named: Option<&str>) -> bool {
    config.get("lock").is_none() && named.is_none_or(|n| config.get("name").and_then(Value::as_str) == Some(n))
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

/// A short random pause so parallel runs that collided do not collide again.
fn jitter(attempt: u32) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let seed = nanos ^ std::process::id().wrapping_mul(2654435761);
    Duration::from_millis(u64::from(seed % (50 + 25 * attempt.min(8))))
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
        assert!(is_ha_migration("UPID:pve1:00100001:01000000:6570A1B2:hamigrate:100:root@pam:"));
        assert!(!is_ha_migration("UPID:pve1:00100001:01000000:6570A1B2:qmigrate:100:root@pam:"));
    }

    #[test]
    fn jitter_stays_short() {
        for attempt in 1..50 {
            assert!(jitter(attempt) < Duration::from_millis(250));
        }
    }
}
