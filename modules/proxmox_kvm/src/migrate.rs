//! `migrate: true`: move the VM to `node`, online when it runs. Converges: a VM on
//! `node` already is left alone.

use ferrox_common::ansible::diff::Diff;
use ferrox_common::ansible::protocol::{Failure, Output};
use ferrox_common::run::vm_task::{self, LockWording};
use serde_json::Value;

use crate::api;
use crate::context::{vm_of, Ctx};
use crate::plan::{Action, Plan};

/// The migration call's optional parameters the task sets; `with-conntrack-state` only
/// for an online migration (PVE ignores it otherwise).
fn migrate_options(ctx: &Ctx, online: bool) -> Vec<(String, String)> {
    let m = &ctx.task.migration;
    let mut out = Vec::new();
    for (param, value) in [
        ("targetstorage", &m.targetstorage),
        ("migration_network", &m.migration_network),
        ("migration_type", &m.migration_type),
    ] {
        if let Some(v) = value {
            out.push((param.to_string(), v.clone()));
        }
    }
    if let Some(limit) = ctx.task.bwlimit {
        out.push(("bwlimit".into(), limit.to_string()));
    }
    if online {
        if let Some(keep) = m.with_conntrack_state {
            out.push(("with-conntrack-state".into(), u8::from(keep).to_string()));
        }
    }
    out
}

pub fn migrate(ctx: &mut Ctx) -> Result<Output, Failure> {
    let guest = ctx.existing_target()?;
    let vm = vm_of(&guest);
    let id = vm.vmid;
    let node = ctx
        .task
        .node
        .clone()
        .ok_or("node is mandatory for migrating VM: set node to the target node")?;
    if vm.node == node {
        return Ok(Output::unchanged(format!("VM {id} is already on {node}"))
            .with("vmid", id)
            .with("actions", Vec::<String>::new()));
    }
    vm_task::refuse_locked(
        id,
        guest.lock.as_deref(),
        ctx.task.skiplock,
        LockWording::Action {
            prefix: &format!("Unable to migrate VM {id} from {} to {node}: ", vm.node),
        },
    )?;
    let running = api::power(ctx.client, &vm)
        .map(|p| p.status == "running")
        .unwrap_or(true);
    let mut diff = Diff::new(format!("VM {id}"));
    diff.change(
        "node",
        Some(Value::from(vm.node.clone())),
        Some(Value::from(node.clone())),
    );
    let mut plan = Plan::new(vm.clone());
    plan.push(Action::Migrate {
        target: node.clone(),
        online: running,
        with_local_disks: ctx.task.migration.with_local_disks,
        options: migrate_options(ctx, running),
    });
    let name = ctx.name_of(Some(&guest));
    ctx.execute(&mut plan, name)?;
    Ok(
        Output::changed(format!("VM {id} has been migrated from {} to {node}", vm.node))
            .with("vmid", id)
            .with("actions", plan.describe())
            .with_diff(diff),
    )
}
