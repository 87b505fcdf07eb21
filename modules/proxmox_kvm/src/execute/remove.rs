//! Removing a VM, reconciled after a lost answer.

use ferrox_ansible::protocol::Failure;
use ferrox_pve_client::client::ApiError;
use ferrox_pve_client::recover;

use super::{api_fail, Executor};
use crate::api::{self, Vm};

impl Executor<'_> {
    /// Deletes the VM; a lost answer is reconciled by [`Self::removed_meanwhile`], the
    /// delete sent again only while the VM is still there.
    pub(super) fn destroy(&mut self, vm: &Vm, purge: bool, unreferenced_disks: bool) -> Result<(), Failure> {
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
        let found = self.lost_task(vm, "qmdestroy", since, "removing", prefix)?;
        if let Some(done) = found {
            self.outcome
                .warnings
                .push(recover::warning(lost, &format!("task {} removed VM {id}", done.upid)));
            return Ok(true);
        }
        if !self.exists(vm).map_err(|e| api_fail(prefix, e, id))? {
            self.outcome
                .warnings
                .push(recover::warning(lost, &format!("VM {id} is gone")));
            return Ok(true);
        }
        self.outcome.warnings.push(recover::warning(
            lost,
            &format!("VM {id} is still there and no removal task was started; sent again"),
        ));
        Ok(false)
    }

    /// Whether the VM's config exists on its node.
    fn exists(&self, vm: &Vm) -> Result<bool, ApiError> {
        match api::config(self.client, vm) {
            Ok(_) => Ok(true),
            Err(e) if e.message.contains("does not exist") => Ok(false),
            Err(e) => Err(e),
        }
    }
}
