//! The power states, `current`, `template` and `absent`: observe the VM's power state
//! ([`crate::observe::power_state`]), decide ([`crate::decide::power`], pure), execute,
//! report ([`crate::report::power`]); then, with `wait_for_agent`/`wait_for_ip`, wait
//! for the guest.

use ferrox_common::ansible::protocol::{Failure, Output};

use crate::context::Ctx;
use crate::decide::power::{self, Decision};
use crate::guest_wait;
use crate::observe::{self, PowerObserved};
use crate::plan::Plan;
use crate::report;
use crate::task::State;

/// A power state, `current`, `template` or `absent` (`present` is [`crate::present`]'s).
pub fn handle(ctx: &mut Ctx, state: State) -> Result<Output, Failure> {
    let Some(observed) = observe::power_state(ctx, state)? else {
        return power::not_found(ctx.task, state).map(report::power::already_absent);
    };
    let decision = power::decide(ctx.task, state, &observed)?;
    let (acted, waits) = match &decision {
        Decision::Act { .. } => (true, true),
        Decision::AlreadyThere(_) => (false, true),
        _ => (false, false),
    };
    let done = match &decision {
        Decision::Act { actions, .. } => {
            let mut plan = Plan::of(observed.vm.clone(), actions.clone());
            crate::execute::execute(ctx, &mut plan, observed.name.clone())?;
            plan.describe()
        }
        _ => Vec::new(),
    };
    let out = report::power::output(state, &observed, decision, done);
    if !waits {
        return Ok(out);
    }
    until_reachable(ctx, &observed, out, acted, acted && state == State::Restarted)
}

/// With `wait_for_agent`/`wait_for_ip`: the guest's addresses once it can be reached
/// (check mode: known after apply unless it answers already). A wait that fails after
/// the VM was started or restarted keeps `changed: true`.
fn until_reachable(
    ctx: &Ctx,
    observed: &PowerObserved,
    out: Output,
    acted: bool,
    restarted: bool,
) -> Result<Output, Failure> {
    let Some((wait, guest)) = &observed.waiting else {
        return Ok(out);
    };
    if ctx.check_mode {
        return Ok(guest_wait::predict(ctx, wait, guest, acted, out));
    }
    guest_wait::wait(ctx, wait, guest, restarted, out).map_err(|f| if acted { f.with("changed", true) } else { f })
}
