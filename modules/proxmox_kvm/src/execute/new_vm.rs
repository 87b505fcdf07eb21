//! Making a new VM: a create (or restore) or a clone, under a vmid chosen anew when
//! another run took it meanwhile; a lost answer is reconciled through the create's
//! task or the new VM's config.

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::time::Duration;

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::vm::{self, ListingQuery};
use ferrox_pve_client::client::{ApiError, Client};
use ferrox_pve_client::recover::{self, Search};
use ferrox_pve_client::tasks::TaskError;
use serde_json::{Map, Value};

use super::{newer_keys_refused, Executor};
use crate::api::{self, fields, Vm};
use crate::plan::Allocation;
use crate::vmid_range;

/// How often a collision on a new vmid is retried before giving up.
const MAX_ALLOCATION_ATTEMPTS: u32 = 40;

/// How long to wait for a new VM to be listed with its name (PVE's status broadcast
/// runs every 10 seconds).
const LISTED_TIMEOUT: Duration = Duration::from_secs(30);

impl Executor<'_> {
    /// Creates (or restores) the VM under the vmid its allocation gives; a lost answer
    /// is reconciled by [`Self::allocate_and_post`].
    pub(super) fn create(
        &mut self,
        vm: &mut Vm,
        form: &[(String, String)],
        allocation: &Allocation,
    ) -> Result<(), Failure> {
        let name = self.name.clone();
        let prefix = |id: u32| format!("creation of qemu VM {name} with vmid {id} failed with exception=");
        let node = vm.node.clone();
        let named = name_in(form);
        let newer_keys = self.newer_keys;
        self.post_while_busy(vm, named.as_deref(), &prefix, "creating", |this, vm| {
            this.allocate_and_post(vm, allocation, &prefix, None, named.as_deref(), |c, id| {
                let mut body = vec![("vmid".to_string(), id.to_string())];
                body.extend(form.iter().cloned());
                c.post(&format!("/nodes/{node}/qemu"), &fields(&body))
                    .map_err(ha_managed_unknown)
                    .map_err(|e| newer_keys_refused(e, newer_keys, &node))
            })
        })
    }

    /// Clones `source` to the plan's VM; a lost answer is reconciled by
    /// [`Self::allocate_and_post`].
    pub(super) fn clone_vm(
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

    /// Polls the cluster listing until the VM shows, keeping that listing; a warning
    /// (not a failure) when PVE takes longer.
    pub(super) fn wait_listed(&mut self, vmid: u32) {
        match vm::wait_listed(self.client, vmid, LISTED_TIMEOUT) {
            Ok(listing) => self.outcome.listing = Some(listing),
            Err(e) => self
                .outcome
                .warnings
                .push(format!("{e}; a lookup right away may not find VM {vmid}")),
        }
    }

    /// Posts with a vmid, choosing the next one when PVE says it was taken meanwhile
    /// (only for vmids the module chose). Returns the task's UPID, or `None` when a lost
    /// answer was recovered and the new VM is already complete, or another run's VM of
    /// this name was adopted.
    fn allocate_and_post(
        &mut self,
        vm: &mut Vm,
        allocation: &Allocation,
        prefix: &dyn Fn(u32) -> String,
        clone_of: Option<&Vm>,
        named: Option<&str>,
        post: impl Fn(&Client, u32) -> Result<Value, ApiError>,
    ) -> Result<Option<String>, Failure> {
        let mut posting = Posting {
            allocation,
            prefix,
            clone_of,
            named,
            tried: BTreeSet::new(),
        };
        let mut resends = 0;
        for attempt in 1.. {
            let since = recover::now();
            let next = match post(self.client, vm.vmid) {
                Ok(answer) => {
                    return answer.as_str().map(|s| Some(s.to_string())).ok_or_else(|| {
                        Failure::new(format!("{}PVE answered {answer} instead of a task id", prefix(vm.vmid)))
                            .with("vmid", vm.vmid)
                    })
                }
                Err(e) if e.answer_lost() && resends < recover::MAX_RESENDS => {
                    resends += 1;
                    self.after_lost_post(vm, &mut posting, &e, since, attempt)?
                }
                Err(e)
                    if e.message.contains("already exists")
                        && named.is_some()
                        && matches!(allocation, Allocation::Range { .. })
                        && attempt < MAX_ALLOCATION_ATTEMPTS =>
                {
                    self.after_range_vmid_taken(vm, &mut posting, attempt)?
                }
                Err(e)
                    if e.message.contains("already exists")
                        && *allocation != Allocation::Given
                        && attempt < MAX_ALLOCATION_ATTEMPTS =>
                {
                    std::thread::sleep(jitter(attempt));
                    self.take_next_vmid(vm, &mut posting)?;
                    ControlFlow::Continue(())
                }
                Err(e) => return Err(posting.fail(vm.vmid, e)),
            };
            if next.is_break() {
                return Ok(None);
            }
        }
        unreachable!("the loop returns")
    }

    /// After a create's (clone's) lost answer: `Break` when its task is found and our VM
    /// is complete; else `Continue`, posting the same vmid again when nothing of ours is
    /// there, the next candidate when someone else's VM is (a collision).
    fn after_lost_post(
        &mut self,
        vm: &mut Vm,
        posting: &mut Posting,
        lost: &ApiError,
        since: u64,
        attempt: u32,
    ) -> Result<ControlFlow<()>, Failure> {
        let found = self
            .reconcile_new(vm, posting.clone_of, posting.named, since)
            .map_err(|e| posting.fail(vm.vmid, e))?;
        match found {
            NewVm::Complete { how, warnings } => {
                self.outcome.warnings.extend(warnings);
                self.outcome.warnings.push(recover::warning(lost, &how));
                return Ok(ControlFlow::Break(()));
            }
            NewVm::Absent(why) => self
                .outcome
                .warnings
                .push(recover::warning(lost, &format!("{why}; sent again"))),
            NewVm::Foreign if *posting.allocation != Allocation::Given && attempt < MAX_ALLOCATION_ATTEMPTS => {
                self.take_next_vmid(vm, posting)?
            }
            NewVm::Foreign => {
                return Err(Failure::new(format!(
                    "{}{lost}; VM {} exists now, but not by a task of this run: another client created it",
                    (posting.prefix)(vm.vmid),
                    vm.vmid
                ))
                .with("vmid", vm.vmid))
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// A vmid of the range that PVE says exists: `Break` adopting another run's VM of
    /// this name; else `Continue`, with the next candidate when the VM there is another,
    /// with the same vmid when its create failed and was cleaned up.
    fn after_range_vmid_taken(
        &mut self,
        vm: &mut Vm,
        posting: &mut Posting,
        attempt: u32,
    ) -> Result<ControlFlow<()>, Failure> {
        match self
            .holder(vm.vmid, posting.named)
            .map_err(|e| posting.fail(vm.vmid, e))?
        {
            Holder::Ours(found) => {
                self.outcome.adopted = Some(found);
                return Ok(ControlFlow::Break(()));
            }
            Holder::Other => self.take_next_vmid(vm, posting)?,
            // Its create failed and was cleaned up: the id is free again.
            Holder::Gone => std::thread::sleep(jitter(attempt)),
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Counts the VM's vmid as taken and moves it to the next candidate.
    fn take_next_vmid(&self, vm: &mut Vm, posting: &mut Posting) -> Result<(), Failure> {
        posting.tried.insert(vm.vmid);
        vm.vmid = self
            .next_candidate(posting.allocation, &posting.tried)
            .map_err(|e| Failure::new(format!("{}{e}", (posting.prefix)(vm.vmid))))?;
        Ok(())
    }

    /// What became of a create (or clone) whose answer was lost.
    ///
    /// Parallel runs share the API user, so a task of "ours" may be another run's that
    /// posted the same vmid: a VM counts as ours only once its config carries our name.
    fn reconcile_new(
        &self,
        vm: &Vm,
        clone_of: Option<&Vm>,
        named: Option<&str>,
        since: u64,
    ) -> Result<NewVm, ApiError> {
        let id = vm.vmid;
        let mut followed = None;
        if clone_of.is_none() {
            let search = Search {
                node: &vm.node,
                kind: "qmcreate",
                vmid: id,
                since,
            };
            if let Some(upid) = recover::find_one(self.client, &search)? {
                match ferrox_pve_client::tasks::wait(self.client, &upid, self.long_timeout) {
                    Ok(done) => followed = Some(done),
                    // Ours or another run's: unknown. The failed create has cleaned up,
                    // so posting again is safe; if it was ours and fails again, that
                    // failure is reported with its own task log.
                    Err(TaskError::Failed { exitstatus, .. }) => {
                        return Ok(NewVm::Absent(format!(
                            "a create task for VM {id} by the same user ({upid}) failed ({exitstatus}), maybe another run's"
                        )))
                    }
                    Err(TaskError::Api(e)) => return Err(e),
                    Err(timeout) => return Err(ApiError::other(ferrox_pve_client::client::ApiErrorKind::Other, timeout.to_string())),
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
                Ok(match followed {
                    Some(done) => NewVm::Complete {
                        how: format!("task {} created VM {id}{named}", done.upid),
                        warnings: done.result_warnings(),
                    },
                    None => NewVm::Complete {
                        how: format!("VM {id} exists{named}"),
                        warnings: Vec::new(),
                    },
                })
            }
            Ok(_) => Ok(NewVm::Foreign),
            Err(e) if e.message.contains("does not exist") => Ok(NewVm::Absent(format!(
                "VM {id} does not exist and no task of this run created it"
            ))),
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
            let guests = vm::read(self.client, &ListingQuery::guests())?.cluster.guests;
            let Some(guest) = vm::by_vmid(&guests, vmid) else {
                return Ok(Holder::Gone);
            };
            if guest.kind != vm::GuestType::Qemu {
                return Ok(Holder::Other);
            }
            let found = Vm {
                node: guest.node.to_string(),
                vmid,
            };
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
                    ferrox_pve_client::client::ApiErrorKind::Timeout,
                    format!(
                        "VM {vmid} was taken meanwhile, and its create by another client was still running after {} s",
                        started.elapsed().as_secs()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(300));
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

    fn next_candidate(&self, allocation: &Allocation, tried: &BTreeSet<u32>) -> Result<u32, String> {
        match allocation {
            Allocation::Range { first, last, name } => {
                let name = name.as_deref();
                vmid_range::first_candidate(name, *first, *last, |id| {
                    tried.contains(&id) || vmid_range::held_by_other(self.listed.get(&id).map(Option::as_deref), name)
                })
                .ok_or_else(|| vmid_range::range_full(*first, *last))
            }
            _ => {
                let mut id =
                    api::next_id(self.client).map_err(|e| format!("Unable to retrieve next free vmid: {e}"))?;
                while tried.contains(&id) {
                    id += 1;
                }
                Ok(id)
            }
        }
    }
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

/// What a create or clone posts with: how it picks its vmid and tells its VM from
/// others.
struct Posting<'p> {
    allocation: &'p Allocation,
    /// The operation's failure message, for the vmid tried.
    prefix: &'p dyn Fn(u32) -> String,
    /// The source of a clone (`None`: a create).
    clone_of: Option<&'p Vm>,
    /// The name the new VM gets.
    named: Option<&'p str>,
    /// vmids found taken.
    tried: BTreeSet<u32>,
}

impl Posting<'_> {
    /// A failure of the post at `vmid`, in the operation's words.
    fn fail(&self, vmid: u32, e: impl std::fmt::Display) -> Failure {
        Failure::new(format!("{}{e}", (self.prefix)(vmid))).with("vmid", vmid)
    }
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
    /// Our VM exists, its create/clone has ended: how it was found, and the warnings of
    /// the create task followed to its end.
    Complete {
        /// How it was found.
        how: String,
        /// The create task's warnings.
        warnings: Vec<String>,
    },
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

/// A short random pause so parallel runs that collided do not collide again.
fn jitter(attempt: u32) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let seed = nanos ^ std::process::id().wrapping_mul(2654435761);
    Duration::from_millis(u64::from(seed % (50 + 25 * attempt.min(8))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_short() {
        for attempt in 1..50 {
            assert!(jitter(attempt) < Duration::from_millis(250));
        }
    }
}
