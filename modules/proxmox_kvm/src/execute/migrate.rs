//! Moving a VM to another node: a migration (an HA-managed VM's done when the HA
//! manager has moved it), and a fresh clone's move to another node's local storage.

use std::time::Duration;

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::vm::{self, ListingQuery};
use ferrox_pve_client::client::ApiError;
use ferrox_pve_client::recover;

use super::{api_fail, Executor};
use crate::api::{fields, Vm};

impl Executor<'_> {
    /// Migrates the VM to `target`; an HA-managed VM is done once the HA manager has
    /// moved it there.
    pub(super) fn migrate(
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

    /// Polls the cluster listing until the VM is on `target`, unlocked (after an HA
    /// migration request).
    fn wait_on_node(&mut self, vm: &Vm, target: &str, budget: Duration) -> Result<(), Failure> {
        let t0 = std::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let guests = vm::read(self.client, &ListingQuery::guests())
                .map_err(|e| api_fail("", e, vm.vmid))?
                .cluster
                .guests;
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

    /// Moves a clone just made on `from` to `to`; the plan's VM is on `to` after.
    pub(super) fn move_clone(
        &mut self,
        vm: &mut Vm,
        from: &str,
        to: &str,
        targetstorage: Option<&str>,
    ) -> Result<(), Failure> {
        let prefix = format!(
            "Unable to clone vm {}: the clone VM {} was made on {from}, its move to {to} failed: ",
            self.name, vm.vmid
        );
        self.migrate_clone(vm, to, targetstorage, &prefix)?;
        vm.node = to.to_string();
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
    fn moved_meanwhile(
        &mut self,
        vm: &Vm,
        to: &str,
        lost: &ApiError,
        since: u64,
        prefix: &str,
    ) -> Result<bool, Failure> {
        let id = vm.vmid;
        let found = self.lost_task(vm, "qmigrate", since, "migrating", prefix)?;
        if let Some(done) = found {
            self.outcome.warnings.push(recover::warning(
                lost,
                &format!("task {} moved VM {id} to {to}", done.upid),
            ));
            return Ok(true);
        }
        let guests = vm::read(self.client, &ListingQuery::guests())
            .map_err(|e| api_fail(prefix, e, id))?
            .cluster
            .guests;
        if vm::by_vmid(&guests, id).is_some_and(|g| *g.node == *to) {
            self.outcome
                .warnings
                .push(recover::warning(lost, &format!("VM {id} is on {to}")));
            return Ok(true);
        }
        self.outcome.warnings.push(recover::warning(
            lost,
            &format!("no migration task was started for VM {id}; sent again"),
        ));
        Ok(false)
    }
}

/// Whether a migration's task (UPID type field) is an HA request, not the migration.
pub(crate) fn is_ha_migration(upid: &str) -> bool {
    upid.split(':').nth(5) == Some("hamigrate")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ha_migrations_are_recognised_by_their_task_type() {
        assert!(is_ha_migration(
            "UPID:pve1:00100001:01000000:6570A1B2:hamigrate:100:root@pam:"
        ));
        assert!(!is_ha_migration(
            "UPID:pve1:00100001:01000000:6570A1B2:qmigrate:100:root@pam:"
        ));
    }
}
