//! `delete` and `revert`, a task of the one driver ([`ferrox_run::driver`]): observe
//! locates the VM the task names in the run's listing and reads its config (`delete`) or
//! its pending values (`revert`) ([`crate::observe::config_keys`]); the plan is
//! [`crate::decide::config_keys`]'s; the guard is the VM's lock and the config write PVE
//! checks; check mode predicts the write, a real run makes it
//! ([`crate::step::Op::carry_out`]); the report reads back what stays pending (a running
//! VM's deletions, a revert's leftovers) and words it (`report/config_keys.rs`).

use ferrox_ansible::protocol::{Failure, Output};
use ferrox_run::driver::{Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::vm_task::LockWording;

use crate::decide::config_keys::{self as keys, Decision, KeysWrite};
use crate::observe::listing::Listing;
use crate::observe::KeysObserved;
use crate::plan::{privileges, Plan};
use crate::step::Op;
use crate::task::KeyEdit;
use crate::{observe, report};

/// The task of `delete` or `revert` (`edit`) of the config keys `wanted`.
pub(crate) struct ConfigKeys<'a> {
    pub(crate) op: Op<'a>,
    /// The run's listing, where the VM is located.
    pub(crate) listing: &'a Listing,
    pub(crate) edit: KeyEdit,
    pub(crate) wanted: &'a [String],
}

/// The VM's view, and the start of the refusal of it locked.
pub(crate) struct Seen {
    observed: KeysObserved,
    lock_prefix: String,
}

/// What the VM's config has of the keys: nothing (with the result's message), or the
/// write.
pub(crate) enum Planned {
    Unchanged(String),
    Write(Box<Write>),
}

/// The config write, and its plan.
pub(crate) struct Write {
    write: KeysWrite,
    plan: Plan,
}

impl Decided for Planned {
    fn changes(&self) -> bool {
        matches!(self, Planned::Write(_))
    }
}

impl Task for ConfigKeys<'_> {
    type Seen = Seen;
    type Plan = Planned;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let observed = observe::config_keys(&self.op.run(cx), self.listing, self.edit)?;
        let lock_prefix = keys::lock_prefix(self.edit, &observed);
        Ok(Seen { observed, lock_prefix })
    }

    fn plan(&self, seen: &Seen) -> Result<Planned, Failure> {
        let seen = &seen.observed;
        let write = match keys::decide(self.edit, self.wanted, seen)? {
            Decision::Unchanged(msg) => return Ok(Planned::Unchanged(msg)),
            Decision::Act(write) => *write,
        };
        let mut plan = Plan::new(seen.vm.clone());
        plan.push(write.action.clone());
        if self.edit == KeyEdit::Delete {
            plan.known.current = Some(seen.found.clone());
            plan.known.pending_deletes = write.predicted.keys().cloned().collect();
        }
        Ok(Planned::Write(Box::new(Write { write, plan })))
    }

    fn guard<'s>(&self, seen: &'s Seen, planned: &Planned) -> Guard<'s> {
        let Seen { observed, lock_prefix } = seen;
        let subject = Subject::Vm {
            vmid: observed.vm.vmid,
            node: &observed.vm.node,
        };
        let Planned::Write(w) = planned else {
            return Guard {
                subject,
                lock: None,
                writes: Vec::new(),
            };
        };
        Guard {
            subject,
            lock: Some(Lock {
                held: observed.lock.as_deref(),
                skiplock: self.op.task.skiplock,
                wording: LockWording::Action { prefix: lock_prefix },
            }),
            writes: privileges::of(&w.plan),
        }
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &Seen, planned: &Planned) -> Result<Prediction, Failure> {
        let Planned::Write(w) = planned else {
            return Ok(Prediction::default());
        };
        Ok(self.op.predict(&w.plan))
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned) -> Result<(), Failure> {
        let Planned::Write(w) = planned else {
            return Ok(());
        };
        let mut plan = w.plan.clone();
        let name = seen.observed.name.clone();
        self.op.carry_out(cx, self.listing, &mut plan, name).map(|_| ())
    }

    fn report(self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned, _outcome: Outcome<()>) -> Result<Output, Failure> {
        let seen = &seen.observed;
        let id = seen.vm.vmid;
        let Write { write, plan } = match planned {
            Planned::Unchanged(msg) => return Ok(report::config_keys::unchanged(msg.clone(), id)),
            Planned::Write(w) => &**w,
        };
        let check_mode = cx.check_mode();
        let read_back = if keys::reads_back(self.edit, seen.running, check_mode) {
            Some(observe::pending_after_keys(&self.op.run(cx), self.edit, seen)?)
        } else {
            None
        };
        let pending = keys::pending_after(
            self.edit,
            &write.keys,
            write.predicted.clone(),
            seen,
            read_back,
            check_mode,
        );
        Ok(report::config_keys::changed(
            write.msg.clone(),
            id,
            plan.describe(),
            write.diff.clone(),
            pending,
        ))
    }
}
