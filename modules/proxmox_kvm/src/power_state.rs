//! The power states, `current`, `template` and `absent`, a task of the one driver
//! ([`ferrox_run::driver`]): observe locates the VM the task names in the run's listing
//! and reads its power state, with a guest wait what the wait relies on
//! ([`crate::observe::power_state`]); the plan is [`crate::decide::power`]'s (a VM not
//! there is `absent` reached, or refused); the guard is the VM's lock (not a hibernated
//! VM's, which the plan resumes) and the calls PVE checks; check mode predicts them, a
//! real run makes them ([`crate::step::Op::carry_out`]); the report words the result
//! (`report/power.rs`) and, after a VM started or restarted or found already so, waits
//! for its guest ([`crate::guest_wait::after_power`]).

use ferrox_ansible::protocol::{Failure, Output};
use ferrox_run::driver::{Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::vm_task::LockWording;

use crate::decide::power::{self, AlreadyAbsent, Decision};
use crate::observe::listing::Listing;
use crate::observe::PowerObserved;
use crate::plan::{privileges, Plan};
use crate::step::Op;
use crate::task::State;
use crate::{guest_wait, observe, report};

/// The task of a power state, `current`, `template` or `absent`.
pub(crate) struct PowerState<'a> {
    pub(crate) op: Op<'a>,
    /// The run's listing, where the VM is located.
    pub(crate) listing: &'a Listing,
    pub(crate) state: State,
}

/// The VM's view (`None`: not in the cluster), and the start of the refusal of it
/// locked.
pub(crate) struct Seen {
    observed: Option<PowerObserved>,
    lock_prefix: String,
}

/// What the state asks: nothing of a VM not there (`absent` reached), or the decision
/// with the plan of its calls.
pub(crate) enum Planned {
    Absent(AlreadyAbsent),
    Decided {
        decision: Decision,
        plan: Option<Box<Plan>>,
    },
}

impl Decided for Planned {
    fn changes(&self) -> bool {
        matches!(self, Planned::Decided { plan: Some(_), .. })
    }
}

impl Task for PowerState<'_> {
    type Seen = Seen;
    type Plan = Planned;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let mut warnings = Vec::new();
        let observed = observe::power_state(&self.op.run(cx), self.listing, self.state, &mut warnings);
        for w in warnings {
            cx.warn(w);
        }
        let observed = observed?;
        let lock_prefix = observed
            .as_ref()
            .map(|o| power::lock_prefix(self.state, o.vm.vmid))
            .unwrap_or_default();
        Ok(Seen { observed, lock_prefix })
    }

    fn plan(&self, seen: &Seen) -> Result<Planned, Failure> {
        let Some(observed) = &seen.observed else {
            return power::not_found(self.op.task, self.state).map(Planned::Absent);
        };
        let decision = power::decide(self.op.task, self.state, observed)?;
        let plan = match &decision {
            Decision::Act { actions, .. } => Some(Box::new(Plan::of(observed.vm.clone(), actions.clone()))),
            _ => None,
        };
        Ok(Planned::Decided { decision, plan })
    }

    fn guard<'s>(&self, seen: &'s Seen, planned: &Planned) -> Guard<'s> {
        let observed = seen.observed.as_ref().expect("a plan that acts has the VM");
        let writes = match planned {
            Planned::Decided { plan: Some(plan), .. } => privileges::of(plan),
            _ => Vec::new(),
        };
        Guard {
            subject: Subject::Vm {
                vmid: observed.vm.vmid,
                node: &observed.vm.node,
            },
            lock: Some(Lock {
                held: power::held_lock(&observed.now),
                skiplock: self.op.task.skiplock,
                wording: LockWording::Action {
                    prefix: &seen.lock_prefix,
                },
            }),
            writes,
        }
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &Seen, planned: &Planned) -> Result<Prediction, Failure> {
        let Planned::Decided { plan: Some(plan), .. } = planned else {
            return Ok(Prediction::default());
        };
        Ok(self.op.predict(plan))
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned) -> Result<(), Failure> {
        let (Planned::Decided { plan: Some(plan), .. }, Some(observed)) = (planned, &seen.observed) else {
            return Ok(());
        };
        let mut plan = (**plan).clone();
        let name = observed.name.clone();
        self.op.carry_out(cx, self.listing, &mut plan, name).map(|_| ())
    }

    fn report(self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned, _outcome: Outcome<()>) -> Result<Output, Failure> {
        let (decision, plan) = match planned {
            Planned::Absent(absent) => return Ok(report::power::already_absent(absent.clone())),
            Planned::Decided { decision, plan } => (decision, plan),
        };
        let observed = seen.observed.as_ref().expect("a decision has the VM");
        let (acted, waits) = match decision {
            Decision::Act { .. } => (true, true),
            Decision::AlreadyThere(_) => (false, true),
            _ => (false, false),
        };
        let done = plan.as_deref().map(Plan::describe).unwrap_or_default();
        let out = report::power::output(self.state, observed, decision.clone(), done);
        if !waits {
            return Ok(out);
        }
        let restarted = acted && self.state == State::Restarted;
        guest_wait::after_power(&self.op.run(cx), observed.waiting.as_ref(), out, acted, restarted)
    }
}
