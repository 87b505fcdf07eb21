//! Moving an existing VM into another resource pool (`pool` with `update: true`),
//! reconciled like every other write when its answer is lost: the pool's members are
//! read and the move counts as made when the VM is there; only otherwise is it sent again.

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::pools;
use ferrox_pve_client::client::{ApiError, Client};
use ferrox_pve_client::recover;

use super::{api_fail, Executor};
use crate::api::Vm;

/// One pool update of one VM: join (optionally leaving its pool with `allow-move`) or leave.
#[derive(Clone, Copy, PartialEq)]
enum Update {
    Join { allow_move: bool },
    Leave,
}

impl Executor<'_> {
    /// Puts the VM into pool `to` with `allow-move` (it leaves `from` in the same
    /// write), the pool named as `ferrox_cluster::pools::address` names it. A PVE that does not
    /// know `allow-move` gets the VM taken out of `from`, then added to `to`.
    pub(crate) fn pool_move(&mut self, vm: &Vm, from: Option<&str>, to: &str) -> Result<(), Failure> {
        let id = vm.vmid;
        let prefix = format!("Unable to move VM {id} to pool {to}: ");
        match self.pool_update(id, to, Update::Join { allow_move: true }) {
            Err(e) if e.errors.as_ref().is_some_and(|errs| errs.contains_key("allow-move")) => {
                if let Some(from) = from {
                    self.pool_update(id, from, Update::Leave)
                        .map_err(|e| api_fail(&format!("Unable to take VM {id} out of pool {from}: "), e, id))?;
                }
                self.pool_update(id, to, Update::Join { allow_move: false })
                    .map_err(|e| api_fail(&prefix, e, id))
            }
            other => other.map_err(|e| api_fail(&prefix, e, id)),
        }
    }

    /// Sends one pool update. After a lost answer the pool's members say whether PVE
    /// made it; only if not is it sent again (a repeated join PVE answers `is already a
    /// pool member`, a repeated leave `is not a pool member`: nothing is done twice).
    fn pool_update(&mut self, id: u32, pool: &str, update: Update) -> Result<(), ApiError> {
        let mut body = vec![("vms", id.to_string())];
        match update {
            Update::Join { allow_move: true } => body.push(("allow-move", "1".to_string())),
            Update::Join { allow_move: false } => {}
            Update::Leave => body.push(("delete", "1".to_string())),
        }
        let (path, address) = pools::address(pool);
        body.extend(address);
        let joining = update != Update::Leave;
        let mut resends = 0;
        loop {
            match self.client.put(&path, &body) {
                // Already as wanted (an earlier send, or another run, made it): done.
                Err(e) if joining && e.message.contains("is already a pool member") => return Ok(()),
                Err(e) if !joining && e.message.contains("is not a pool member") => return Ok(()),
                Err(e) if e.answer_lost() && resends < recover::MAX_RESENDS => {
                    resends += 1;
                    let member = pool_members(self.client, pool)?.contains(&id);
                    let found = match (joining, member) {
                        (true, true) => format!("VM {id} is in pool {pool}"),
                        (false, false) => format!("VM {id} is no longer in pool {pool}"),
                        (true, false) => format!("VM {id} is not in pool {pool}; sent again"),
                        (false, true) => format!("VM {id} is still in pool {pool}; sent again"),
                    };
                    self.outcome.warnings.push(recover::warning(&e, &found));
                    if joining == member {
                        return Ok(());
                    }
                }
                other => return other.map(|_| ()),
            }
        }
    }
}

/// The vmids in `pool` (none when the pool does not exist).
pub(crate) fn pool_members(client: &Client, pool: &str) -> Result<Vec<u32>, ApiError> {
    Ok(pools::read(client, pool)?
        .map(|p| p.vmids().collect())
        .unwrap_or_default())
}
