//! `migrate: true`, a task of the one driver ([`ferrox_run::driver`]): observe locates
//! the VM the task names in the run's listing and reads its power state when it is to
//! move ([`crate::observe::migration`]); the plan is [`crate::decide::migrate`]'s; the guard
//! is the VM's lock and the migration PVE checks; check mode predicts the move, a real
//! run makes it ([`crate::execute::carry_out`]); the result is `report/migrate.rs`'s.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::tags::TagCase;
use ferrox_run::driver::{Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::vm_task::LockWording;

use crate::decide::migrate::{self, Decision, Migration};
use crate::observe::listing::Listing;
use crate::observe::MigrateObserved;
use crate::plan::{effects, privileges, Plan};
use crate::step::Run;
use crate::task::KvmTask;
use crate::{execute, observe, report};

/// The task of `migrate: true`.
pub(crate) struct Migrate<'a> {
    pub(crate) task: &'a KvmTask,
    /// The run's listing, where the VM is located.
    pub(crate) listing: &'a Listing,
    /// The run's tag comparison.
    pub(crate) tag_case: TagCase<'a>,
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

impl Migrate<'_> {
    fn run<'r>(&'r self, cx: &'r Cx<'_>) -> Run<'r> {
        Run::on(cx, self.task, &self.tag_case)
    }
}

impl Task for Migrate<'_> {
    type Seen = Seen;
    type Plan = Planned;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let observed = observe::migration(&self.run(cx), self.listing)?;
        let lock_prefix = migrate::lock_prefix(&observed.vm, self.task.node.as_deref().unwrap_or_default());
        Ok(Seen { observed, lock_prefix })
    }

    fn plan(&self, seen: &Seen) -> Result<Planned, Failure> {
        Ok(match migrate::decide(self.task, &seen.observed)? {
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
            Some((plan, _)) => privileges::of(plan, &plan.known),
            None => Vec::new(),
        };
        Guard {
            subject: Subject::Vm {
                vmid: vm.vmid,
                node: &vm.node,
            },
            lock: Some(Lock {
                held: seen.observed.lock.as_deref(),
                skiplock: self.task.skiplock,
                wording: LockWording::Action {
                    prefix: &seen.lock_prefix,
                },
            }),
            writes,
        }
    }

    fn predict(&self, _cx: &mut Cx<'_>, _seen: &Seen, planned: &Planned) -> Result<Prediction, Failure> {
        let Some((plan, _)) = &planned.migration else {
            return Ok(Prediction::default());
        };
        Ok(Prediction {
            effects: effects::effects(plan, self.task.name.as_deref(), &plan.known, &self.tag_case),
            warnings: Vec::new(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned) -> Result<(), Failure> {
        let Some((plan, _)) = &planned.migration else {
            return Ok(());
        };
        let mut plan = plan.clone();
        let mut warnings = Vec::new();
        let name = seen.observed.name.clone();
        let result = execute::carry_out(&self.run(cx), self.listing, &mut plan, name, &mut warnings);
        for w in warnings {
            cx.warn(w);
        }
        result.map(|_| ())
    }

    fn report(
        &self,
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
