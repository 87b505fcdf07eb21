//! `migrate: true`, a task of the one driver ([`ferrox_run::driver`]): observe locates
//! the VM the task names in the run's listing and reads its power state when it is to
//! move ([`crate::observe::migration`]); the plan is [`crate::decide::migrate`]'s; the guard
//! is the VM's lock and the migration PVE checks; check mode predicts the move, a real
//! run makes it ([`crate::step::Op::carry_out`]); the result is `report/migrate.rs`'s.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::{Failure, Output};
use ferrox_run::driver::{Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::vm_task::LockWording;

use crate::decide::migrate::{self, Decision, Migration};
use crate::observe::listing::Listing;
use crate::observe::MigrateObserved;
use crate::plan::{privileges, Plan};
use crate::step::Op;
use crate::{observe, report};

/// The task of `migrate: true`.
pub(crate) struct Migrate<'a> {
    pub(crate) op: Op<'a>,
    /// The run's listing, where the VM is located.
    pub(crate) listing: &'a Listing,
}

/// The VM's view, and the start of the refusal of it locked.
pub(crate) struct Seen {
    observed: MigrateObserved,
    /// The start of the refusal of a locked VM.
    lock_prefix: String,
}

/// The result's message, and the migration with its diff (`None`: on the target node
/// already).
pub(crate) struct Planned {
    msg: String,
    migration: Option<(Plan, Diff)>,
}

impl Decided for Planned {
    fn changes(&self) -> bool {
        self.migration.is_some()
    }
}

impl Task for Migrate<'_> {
    type Seen = Seen;
    type Plan = Planned;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let observed = observe::migration(&self.op.run(cx), self.listing)?;
        let lock_prefix = migrate::lock_prefix(&observed.vm, self.op.task.node.as_deref().unwrap_or_default());
        Ok(Seen { observed, lock_prefix })
    }

    fn plan(&self, seen: &Seen) -> Result<Planned, Failure> {
        Ok(match migrate::decide(self.op.task, &seen.observed)? {
            Decision::AlreadyThere(msg) => Planned { msg, migration: None },
            Decision::Act(migration) => {
                let Migration { action, msg, diff } = *migration;
                let mut plan = Plan::new(seen.observed.vm.clone());
                plan.push(action);
                Planned {
                    msg,
                    migration: Some((plan, diff)),
                }
            }
        })
    }

    fn guard<'s>(&self, seen: &'s Seen, planned: &Planned) -> Guard<'s> {
        let vm = &seen.observed.vm;
        let writes = match &planned.migration {
            Some((plan, _)) => privileges::of(plan),
            None => Vec::new(),
        };
        Guard {
            subject: Subject::Vm {
                vmid: vm.vmid,
                node: &vm.node,
            },
            lock: Some(Lock {
                held: seen.observed.lock.as_deref(),
                skiplock: self.op.task.skiplock,
                wording: LockWording::Action {
                    prefix: &seen.lock_prefix,
                },
            }),
            writes,
        }
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &Seen, planned: &Planned) -> Result<Prediction, Failure> {
        let Some((plan, _)) = &planned.migration else {
            return Ok(Prediction::default());
        };
        Ok(self.op.predict(plan))
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned) -> Result<(), Failure> {
        let Some((plan, _)) = &planned.migration else {
            return Ok(());
        };
        let mut plan = plan.clone();
        let name = seen.observed.name.clone();
        self.op.carry_out(cx, self.listing, &mut plan, name).map(|_| ())
    }

    fn report(
        self,
        _cx: &mut Cx<'_>,
        seen: &Seen,
        planned: &Planned,
        _outcome: Outcome<()>,
    ) -> Result<Output, Failure> {
        let id = seen.observed.vm.vmid;
        Ok(match &planned.migration {
            None => report::migrate::unchanged(planned.msg.clone(), id),
            Some((plan, diff)) => report::migrate::changed(planned.msg.clone(), id, plan.describe(), diff.clone()),
        })
    }
}
