//! The one way a flow writes: its plan held to the privilege gate (a plan PVE would
//! refuse fails before any write, and in check mode goes to the run's plan as refused),
//! then run by an [`Executor`] (nothing is called in check mode), then, in check mode,
//! its effects buffered for the later tasks of the run.

use std::time::Duration;

use ferrox_common::ansible::protocol::Failure;
use ferrox_common::pve::privileges::Target;

use super::{Executor, Outcome};
use crate::context::Ctx;
use crate::plan::{effects, privileges, Plan};

/// The smallest wait for creating, cloning, restoring, converting and removing.
const LONG_TASK_SECS: u64 = 300;

/// Runs `plan` on the VM named `name` (for messages) unless in check mode, and returns
/// what it found out; the `actions` list goes on the result either way.
pub fn execute(ctx: &mut Ctx, plan: &mut Plan, name: String) -> Result<Outcome, Failure> {
    // Whether PVE will allow all of it: a plan it would refuse fails before any write.
    let writes = privileges::of(plan, &plan.known);
    let planned = ctx.check_mode && ctx.listing.listed_name(plan.vm.vmid).is_none();
    let target = Target {
        vmid: plan.vm.vmid,
        node: &plan.vm.node,
        planned,
    };
    let verdict = ctx
        .effects
        .hold(&ctx.gate, "proxmox_kvm", &target, &writes, ctx.check_mode);
    ctx.warnings.extend(ctx.gate.take_warnings());
    verdict?;
    let mut exec = executor(ctx, name);
    let result = exec.run(plan);
    ctx.warnings.append(&mut exec.outcome.warnings);
    if result.is_ok() {
        ctx.effects.record_all(
            ctx.check_mode,
            effects::effects(plan, ctx.task.name.as_deref(), &plan.known, &ctx.tag_case),
        );
    }
    result.map(|_| exec.outcome)
}

/// The executor of the task: its budgets, `skiplock`, the vmids listed when the plan was
/// made.
fn executor<'a>(ctx: &Ctx<'a>, name: String) -> Executor<'a> {
    let timeout = ctx.task.timeout.as_secs();
    Executor {
        client: ctx.client,
        check_mode: ctx.check_mode,
        timeout: Duration::from_secs(timeout),
        long_timeout: Duration::from_secs(timeout.max(LONG_TASK_SECS)),
        name,
        skiplock: ctx.task.skiplock,
        listed: ctx
            .listing
            .listed()
            .map(|(vmid, name)| (vmid, name.map(str::to_string)))
            .collect(),
        tag_case: ctx.tag_case.clone(),
        outcome: Outcome::default(),
    }
}
