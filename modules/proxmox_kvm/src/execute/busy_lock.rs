//! Busy storages: under parallel clones and creates, PVE's task (not the HTTP request)
//! fails when it cannot take a storage's lock to allocate a disk, or the config lock of a
//! VM, in time. Such a task did nothing else, so it is tried again, bounded and jittered,
//! within the task's budget — once what it left of the VM this task allocated (and only
//! that: our vmid, our name, a `lock` of `clone`/`create`) is removed through PVE's own
//! delete. Any other task failure is reported as before.

use std::time::{Duration, Instant};

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::listing_probe::LookupTargets;
use ferrox_cluster::vm::{self, ListingQuery};
use ferrox_pve_client::client::{retry, ApiError};
use ferrox_pve_client::tasks::{self, TaskError};
use serde_json::Value;

use super::{task_failure, Executor};
use crate::api::{self, Vm};
use crate::plan::Action;

/// Attempts of a create or clone whose task fails on a busy lock, the first included.
pub(crate) const MAX_ATTEMPTS: u32 = 3;

/// The lock a failed task timed out on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BusyLock {
    /// A storage's: pve-storage's file lock (local) or pmxcfs lock (shared).
    Storage(String),
    /// A VM's config lock (`/var/lock/qemu-server/lock-<vmid>.conf`).
    Config(u32),
}

impl std::fmt::Display for BusyLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BusyLock::Storage(id) => write!(f, "storage {id}"),
            BusyLock::Config(vmid) => write!(f, "the config of VM {vmid}"),
        }
    }
}

/// The lock a line of a task (its exit status, or a line of its log) says timed out:
/// the lock texts of pve-common's `lock_file_full` and pve-cluster's `cfs_lock`, alone or
/// as qemu-server's create and clone workers word their failures.
pub(crate) fn busy_lock(text: &str) -> Option<BusyLock> {
    let text = text.trim_end();
    let text = text.strip_prefix("clone failed: ").unwrap_or(text);
    let text = match text.strip_prefix("unable to create VM ") {
        Some(rest) => rest
            .split_once(" - ")
            .map_or(text, |(id, rest)| if id.parse::<u32>().is_ok() { rest } else { text }),
        None => text,
    };
    if let Some(id) = text
        .strip_prefix("cfs-lock 'storage-")
        .and_then(|r| r.strip_suffix("' error: got lock request timeout"))
    {
        return Some(BusyLock::Storage(id.to_string()));
    }
    let file = text
        .strip_prefix("can't lock file '")?
        .strip_suffix("' - got timeout")?;
    if let Some(id) = file.strip_prefix("/var/lock/pve-manager/pve-storage-") {
        return Some(BusyLock::Storage(id.to_string()));
    }
    file.strip_prefix("/var/lock/qemu-server/lock-")?
        .strip_suffix(".conf")?
        .parse()
        .ok()
        .map(BusyLock::Config)
}

/// Whether the log shows the task's cleanup failing on a lock too (a line naming a lock
/// besides the final `TASK ERROR`): then volumes it allocated were not freed.
pub(crate) fn cleanup_hit_a_lock(log_tail: &[String]) -> bool {
    log_tail
        .iter()
        .filter(|l| !l.starts_with("TASK ERROR"))
        .any(|l| busy_lock(l).is_some())
}

impl Executor<'_> {
    /// Posts a create or clone (`post` returns its UPID, or `None` when a lost answer was
    /// reconciled and the VM is complete) and waits for its task; a task that failed on a
    /// busy lock is cleaned up after and posted again (the warnings say so).
    pub(crate) fn post_while_busy(
        &mut self,
        vm: &mut Vm,
        named: Option<&str>,
        prefix: &dyn Fn(u32) -> String,
        op: &str,
        mut post: impl FnMut(&mut Self, &mut Vm) -> Result<Option<String>, Failure>,
    ) -> Result<(), Failure> {
        let started = Instant::now();
        for attempt in 1..=MAX_ATTEMPTS {
            let Some(upid) = post(self, vm)? else {
                return Ok(());
            };
            let budget = self.long_timeout.saturating_sub(started.elapsed());
            let Err(failure) = self.follow(&upid, budget) else {
                return Ok(());
            };
            let fail = |e: TaskError| Failure::new(task_failure(&prefix(vm.vmid), op, e)).with("vmid", vm.vmid);
            let TaskError::Failed {
                exitstatus, log_tail, ..
            } = &failure
            else {
                return Err(fail(failure));
            };
            let Some(lock) = busy_lock(exitstatus) else {
                return Err(fail(failure));
            };
            let removed = match self.remove_leftovers(vm, named, cleanup_hit_a_lock(log_tail)) {
                Ok(removed) => removed,
                Err(left) => {
                    let mut f = fail(failure.clone());
                    f.msg.push_str(&format!(". {left}"));
                    return Err(f);
                }
            };
            let pause = retry::pause(attempt, retry::jitter());
            if attempt == MAX_ATTEMPTS || started.elapsed() + pause >= self.long_timeout {
                let mut f = fail(failure.clone());
                f.msg.push_str(&format!(
                    ". The lock of {lock} timed out in {attempt} attempts within {} s; {}. Run the task again when fewer clones or creates use {lock} at once (fewer forks), or raise timeout",
                    started.elapsed().as_secs(),
                    removed
                ));
                return Err(f);
            }
            self.outcome.warnings.push(format!(
                "task {upid} failed on a busy lock: {exitstatus}. Attempt {attempt} of {MAX_ATTEMPTS}: {}; trying again in {} ms",
                removed,
                pause.as_millis()
            ));
            std::thread::sleep(pause);
        }
        unreachable!("the last attempt returns")
    }

    /// Removes what a create or clone that failed on a lock left of VM `vm.vmid`: its
    /// config when it carries our name and a `clone`/`create` lock (with its volumes), or,
    /// with no config left but volumes (`volumes_left`: its cleanup hit the lock too), those
    /// volumes. A VM of that vmid that is not ours was made by another run once the failed
    /// task had removed its config (PVE hands a freed vmid out again): it is left alone, and
    /// the retry takes the next free vmid as after any collision. `Err` says what of ours is
    /// left and why it could not be removed.
    fn remove_leftovers(&mut self, vm: &Vm, named: Option<&str>, volumes_left: bool) -> Result<String, String> {
        let id = vm.vmid;
        let nothing = || format!("the failed task left nothing of VM {id}");
        let sought = LookupTargets::lookup(Some(id), None);
        let guests = vm::read(self.client, &ListingQuery::guests().only(&sought))
            .map_err(|e| format!("What it left of VM {id} could not be read: {e}"))?
            .cluster
            .guests;
        let Some(guest) = vm::by_vmid(&guests, id) else {
            return if volumes_left {
                self.remove_orphaned_volumes(vm)
            } else {
                Ok(nothing())
            };
        };
        let found = Vm {
            node: guest.node.to_string(),
            vmid: id,
        };
        let config = match api::config(self.client, &found) {
            Ok(c) => c,
            Err(e) if e.message.contains("does not exist") => return Ok(nothing()),
            Err(e) => return Err(format!("What it left of VM {id} could not be read: {e}")),
        };
        let lock = config.get("lock").and_then(Value::as_str).unwrap_or("");
        let name = config.get("name").and_then(Value::as_str);
        let ours = matches!(lock, "clone" | "create") && named.is_some() && name == named;
        if !ours && name.is_none() && matches!(lock, "clone" | "create") {
            // A create's placeholder (`lock: create`, no name) it did not remove, or another
            // run's create or clone still running under the freed vmid: PVE shows them alike.
            return Ok(format!(
                "VM {id} on {} is locked ({lock}) without a name: another run's {lock} still running, or what the failed task left (a create's placeholder), which PVE shows alike; it was left alone (if it stays, remove it with `qm unlock {id} && qm destroy {id} --purge 1 --destroy-unreferenced-disks 1`)",
                found.node
            ));
        }
        if !ours {
            let whose = format!(
                "VM {id} is another's now (on {}, {})",
                found.node,
                name.map_or("no name yet".to_string(), |n| format!("name {n}"))
            );
            return Ok(if volumes_left {
                format!("{whose}; the volumes the failed task could not free stay as unreferenced volumes of VM {id} (PVE removes them with that VM's delete with destroy-unreferenced-disks)")
            } else {
                format!("{whose}: the failed task left nothing of this task's VM")
            });
        }
        if self.client.task_owner() != ("root@pam".to_string(), None) {
            return Err(format!(
                "The failed task left VM {id} on {} half-made (lock {lock}, with its volumes); PVE removes a locked VM only for root@pam (skiplock). Remove it there with `qm unlock {id} && qm destroy {id} --purge 1 --destroy-unreferenced-disks 1`, then run the task again",
                found.node
            ));
        }
        self.destroy_with_volumes(&found, true)?;
        Ok(format!(
            "the half-made VM {id} it left (lock {lock}) was removed with its volumes"
        ))
    }

    /// Volumes a failed task allocated for VM `vm.vmid` and could not free, its config
    /// gone: PVE frees a VM's unreferenced volumes only through the VM's delete
    /// (`destroy-unreferenced-disks`), so an empty VM of that vmid is created and deleted
    /// so (the privileges the create or clone itself needs).
    fn remove_orphaned_volumes(&mut self, vm: &Vm) -> Result<String, String> {
        let id = vm.vmid;
        let cant = |e: String| {
            format!(
                "The failed task left volumes of VM {id} on {}; removing them failed: {e}",
                vm.node
            )
        };
        let answer = self
            .client
            .post(&format!("/nodes/{}/qemu", vm.node), &[("vmid", id.to_string())])
            .map_err(|e: ApiError| cant(e.to_string()))?;
        if let Some(upid) = answer.as_str() {
            tasks::wait(self.client, upid, self.timeout.max(Duration::from_secs(30)))
                .map_err(|e| cant(e.to_string()))?;
        }
        self.destroy_with_volumes(vm, false).map_err(cant)?;
        Ok(format!("the volumes it left of VM {id} were removed (through an empty VM {id}, deleted with destroy-unreferenced-disks)"))
    }

    /// PVE's delete with `purge` and `destroy-unreferenced-disks` (and `skiplock` for a
    /// locked VM), lost answers reconciled as for any delete.
    fn destroy_with_volumes(&mut self, vm: &Vm, skiplock: bool) -> Result<(), String> {
        let saved = std::mem::replace(&mut self.skiplock, skiplock);
        let result = self.run_one(
            &mut vm.clone(),
            &Action::Destroy {
                purge: true,
                unreferenced_disks: true,
            },
        );
        self.skiplock = saved;
        result.map_err(|f| f.msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_timeouts_are_read_from_pves_texts() {
        let local = "can't lock file '/var/lock/pve-manager/pve-storage-local-lvm' - got timeout";
        let shared = "cfs-lock 'storage-ceph-vm' error: got lock request timeout";
        let config = "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout";
        assert_eq!(busy_lock(local), Some(BusyLock::Storage("local-lvm".into())));
        assert_eq!(
            busy_lock(&format!("clone failed: {local}")),
            Some(BusyLock::Storage("local-lvm".into()))
        );
        assert_eq!(
            busy_lock(&format!("unable to create VM 105 - {shared}\n")),
            Some(BusyLock::Storage("ceph-vm".into()))
        );
        assert_eq!(busy_lock(config), Some(BusyLock::Config(9000)));
        assert_eq!(
            busy_lock(&format!("clone failed: {config}")),
            Some(BusyLock::Config(9000))
        );
        for other in [
            "clone failed: storage 'nvme' does not exist",
            "unable to create VM 105 - lvcreate 'pve/vm-105-disk-0' error: out of space",
            "VM is locked (clone)",
            "cfs-lock 'file-replication_cfg' error: got lock request timeout",
            "can't lock file '/var/lock/lxc/pve-config-200.lock' - got timeout",
            &format!("clone failed: {local} (and more)"),
        ] {
            assert_eq!(busy_lock(other), None, "{other}");
        }
        assert_eq!(BusyLock::Storage("local-lvm".into()).to_string(), "storage local-lvm");
        assert_eq!(BusyLock::Config(9000).to_string(), "the config of VM 9000");
    }

    #[test]
    fn a_cleanup_that_hit_a_lock_shows_in_the_log() {
        let local = "can't lock file '/var/lock/pve-manager/pve-storage-local-lvm' - got timeout";
        let error = format!("TASK ERROR: clone failed: {local}");
        assert!(!cleanup_hit_a_lock(&[
            "create full clone of drive scsi0 (local-lvm:base-9000-disk-0)".into(),
            error.clone()
        ]));
        assert!(cleanup_hit_a_lock(&[
            "transferred 3G of 3G (100.00%)".into(),
            local.into(),
            error
        ]));
    }
}
