//! The VM a task names, located in the run's listing: by `vmid`, else by `name` among
//! QEMU VMs (when several share it, the one on the preferred node; a shared name is
//! explained, which of them are templates and where). A container's vmid is refused.

use ferrox_common::ansible::protocol::Failure;
use ferrox_common::cluster::vm::{Guest, GuestType};
use ferrox_common::run::vm_task::{self, Lookup};

use crate::context::Ctx;
use crate::task::Operation;

/// The VM the task names: by `vmid`, else by `name` (QEMU VMs only; when several
/// share the name, the one on `node`, except for `migrate`, whose `node` is the
/// destination).
pub fn target(ctx: &Ctx) -> Result<Option<Guest>, Failure> {
    let prefer_node = ctx
        .task
        .node
        .as_deref()
        .filter(|_| ctx.task.operation != Operation::Migrate);
    locate(
        ctx,
        &Lookup {
            vmid: ctx.task.vmid,
            name: ctx.task.name.as_deref(),
            prefer_node,
        },
    )
}

/// The VM the task names, which must exist (`delete`, `revert`, `migrate`).
pub fn existing_target(ctx: &Ctx) -> Result<Guest, Failure> {
    target(ctx)?.ok_or_else(|| match ctx.task.vmid {
        Some(id) => Failure::new(format!("VM with vmid {id} does not exist in cluster")).with("vmid", id),
        None => Failure::new(format!(
            "VM with name = {} does not exist in cluster",
            ctx.task.name.as_deref().unwrap_or_default()
        )),
    })
}

/// The guest `lookup` names ([`vm_task::locate`]); a vmid of a container is refused.
pub fn locate(ctx: &Ctx, lookup: &Lookup) -> Result<Option<Guest>, Failure> {
    match vm_task::locate(ctx.client, &ctx.listing.guests, lookup)? {
        Some(g) if g.kind == GuestType::Lxc => Err(Failure::new(format!(
            "vmid {} belongs to a container (LXC) on node {}, not a QEMU VM; choose another vmid",
            g.vmid, g.node
        ))
        .with("vmid", g.vmid)),
        other => Ok(other.cloned()),
    }
}

pub fn qemu_by_vmid(ctx: &Ctx, id: u32) -> Result<Option<Guest>, Failure> {
    locate(
        ctx,
        &Lookup {
            vmid: Some(id),
            ..Lookup::default()
        },
    )
}

/// The QEMU VM with this name; when several have it, the one on `node` (if given).
pub fn qemu_named(ctx: &Ctx, name: Option<&str>, node: Option<&str>) -> Result<Option<Guest>, Failure> {
    locate(
        ctx,
        &Lookup {
            vmid: None,
            name,
            prefer_node: node,
        },
    )
}
