//! `migrate: true`: observe the VM ([`crate::observe::migration`]), decide
//! ([`crate::decide::migrate`], pure), execute, report ([`crate::report::migrate`]).

use ferrox_common::ansible::protocol::{Failure, Output};

use crate::context::Ctx;
use crate::decide::migrate::{self, Decision, Migration};
use crate::observe;
use crate::plan::Plan;
use crate::report;

pub fn migrate(ctx: &mut Ctx) -> Result<Output, Failure> {
    let observed = observe::migration(ctx)?;
    let id = observed.vm.vmid;
    let Migration { action, msg, diff } = match migrate::decide(ctx.task, &observed)? {
        Decision::AlreadyThere(msg) => return Ok(report::migrate::unchanged(msg, id)),
        Decision::Act(migration) => *migration,
    };
    let mut plan = Plan::new(observed.vm.clone());
    plan.push(action);
    crate::execute::execute(ctx, &mut plan, observed.name.clone())?;
    Ok(report::migrate::changed(msg, id, plan.describe(), diff))
}
