//! Converting a VM to a template.

use ferrox_ansible::protocol::Failure;

use super::{api_fail, Executor};
use crate::api::Vm;

impl Executor<'_> {
    /// Converts the VM to a template.
    pub(super) fn template(&mut self, vm: &Vm) -> Result<(), Failure> {
        let id = vm.vmid;
        let prefix = format!("conversion of VM {id} to template failed with exception: ");
        let answer = self
            .client
            .post(&vm.path("/template"), &[])
            .map_err(|e| api_fail(&prefix, e, id))?;
        self.wait_answer(&answer, self.long_timeout, "converting", &prefix, id)
    }
}
