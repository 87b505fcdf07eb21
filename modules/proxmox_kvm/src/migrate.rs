//! `migrate: true`, a task of the one driver ([`ferrox_run::driver`]): observe lists the
//! cluster, locates the VM and reads its power state when it is to move
//! ([`crate::observe::migration`]); the plan is [`crate::decide::migrate`]'s; the guard
//! is the VM's lock and the migration PVE checks; check mode predicts the move, a real
//! run makes it ([`crate::execute::carry_out`]); the result is `report/migrate.rs`'s.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::tags::TagCase;
use ferrox_pve_rules::propstring::versions;
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
pub(crate) struct Migrate(pub(crate) KvmTask);

/// What the migration reads: the run's listing and the VM's view.
pub(crate) struct Seen {
    listing: Listing,
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

impl Migrate {
    /// What every step of the kvm run is handed, on the driver's context.
    fn run<'a>(&'a self, cx: &'a Cx<'_>) -> Run<'a> {
        Run {
            client: cx.client,
            gate: &cx.gate,
            task: &self.0,
            tag_case: TagCase::of_options(cx.gate.cluster_options()),
        }
    }
}

impl Task for Migrate {
    type Seen = Seen;
    type Plan = Planned;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let task = &self.0;
        cx.client.set_retry_budget(task.timeout);
        // Sent, never refused on a version: the node that parses them decides.
        for warning in versions::notes(&task.newer_keys, task.check_mode) {
            cx.warn(warning);
        }
        let listing = observe::listing::read(cx.m, task, cx.conn, cx.client)?;
        let observed = observe::migration(&self.run(cx), &listing)?;
        let lock_prefix = migrate::lock_prefix(&observed.vm, task.node.as_deref().unwrap_or_default());
        Ok(Seen {
            listing,
            observed,
            lock_prefix,
        })
    }

    fn plan(&self, seen: &Seen) -> Result<Planned, Failure> {
        Ok(match migrate::decide(&self.0, &seen.observed)? {
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
                skiplock: self.0.skiplock,
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
        // A migration compares no tags.
        let tag_case = TagCase::known(false);
        Ok(Prediction {
            effects: effects::effects(plan, self.0.name.as_deref(), &plan.known, &tag_case),
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
        let result = execute::carry_out(&self.run(cx), &seen.listing, &mut plan, name, &mut warnings);
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
