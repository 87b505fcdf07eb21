//! `state: present` for a VM not there: create it (or restore it from `archive`), a task
//! of the one driver ([`ferrox_run::driver`]). Observe decides the node among the
//! listing's and chooses the vmid (`observe/vmid.rs`: the one asked, the next free, or
//! one of the name's range); the plan is [`crate::decide::create`]'s; the guard is the
//! writes PVE checks of a new VM (no lock: it has no config yet); the check is of the
//! bridges, volumes and pool the config names ([`crate::checks`]); check mode predicts
//! the VM, a real run makes it ([`crate::step::Op::carry_out`]); the report words 1.6's
//! result with `mac` and `devices`, after the re-look for a racer of the same name
//! ([`crate::name_race`]). When another run made this name at the same moment, the
//! create adopts its VM: the task continues as the update of that VM
//! ([`crate::update::UpdateExisting`], run with `driver::steps`).

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::tags::TagCase;
use ferrox_run::driver::{self, Cx, Decided, Guard, Outcome, Prediction, Subject, Task};

use crate::api::Vm;
use crate::checks::check_new_vm;
use crate::execute::Outcome as Executed;
use crate::observe::listing::Listing;
use crate::plan::{privileges, Allocation, Plan};
use crate::report::update::with_mac_and_devices;
use crate::step::{Learned, Op};
use crate::task::KvmTask;
use crate::update::{To, UpdateExisting};
use crate::{decide, name_race, observe};

/// The task of a new VM.
pub(crate) struct Create<'a> {
    op: Op<'a>,
    /// The run's listing: which vmids are taken; the VM of a racer adopted is learned in it.
    listing: &'a mut Listing,
    /// What the run learns: the listing that showed the new VM, a racer's warning.
    learned: &'a mut Learned,
}

impl<'a> Create<'a> {
    pub(crate) fn new(
        task: &'a KvmTask,
        listing: &'a mut Listing,
        tag_case: TagCase<'a>,
        learned: &'a mut Learned,
    ) -> Self {
        Create {
            op: Op { task, tag_case },
            listing,
            learned,
        }
    }
}

/// The node and vmid the VM is made with.
pub(crate) struct Seen {
    node: String,
    vmid: u32,
    allocation: Allocation,
}

/// The plan of the create, and its diff.
pub(crate) struct Planned {
    plan: Plan,
    diff: Diff,
}

impl Decided for Planned {
    fn changes(&self) -> bool {
        true
    }
}

impl Task for Create<'_> {
    type Seen = Seen;
    type Plan = Planned;
    /// The plan as run (a vmid taken meanwhile chooses another), and what it found out.
    type Done = (Plan, Executed);

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let listing = &*self.listing;
        let node = decide::create::node(self.op.task, &listing.nodes)?;
        if let Some(w) = decide::create::warning(self.op.task) {
            cx.warn(w);
        }
        let (vmid, allocation) = observe::vmid::choose(&self.op.run(cx), listing, self.op.task.vmid)?;
        Ok(Seen { node, vmid, allocation })
    }

    fn plan(&self, seen: &Seen) -> Result<Planned, Failure> {
        let vm = Vm {
            node: seen.node.clone(),
            vmid: seen.vmid,
        };
        let (plan, diff) = decide::create::plan(self.op.task, vm, seen.allocation.clone())?;
        Ok(Planned { plan, diff })
    }

    fn guard<'s>(&self, seen: &'s Seen, planned: &Planned) -> Guard<'s> {
        let plan = &planned.plan;
        Guard {
            subject: Subject::Vm {
                vmid: seen.vmid,
                node: &seen.node,
            },
            lock: None,
            writes: privileges::of(plan),
        }
    }

    fn check(&self, cx: &mut Cx<'_>, seen: &Seen, _planned: &Planned) -> Result<(), Failure> {
        check_new_vm(&self.op.run(cx), self.listing, &seen.node, &self.op.task.config)
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &Seen, planned: &Planned) -> Result<Prediction, Failure> {
        Ok(self.op.predict(&planned.plan))
    }

    fn execute(&self, cx: &mut Cx<'_>, _seen: &Seen, planned: &Planned) -> Result<(Plan, Executed), Failure> {
        let mut plan = planned.plan.clone();
        let name = observe::name_of(self.op.task, None);
        let done = self.op.carry_out(cx, self.listing, &mut plan, name)?;
        Ok((plan, done))
    }

    fn report(
        self,
        cx: &mut Cx<'_>,
        seen: &Seen,
        planned: &Planned,
        outcome: Outcome<(Plan, Executed)>,
    ) -> Result<Output, Failure> {
        let task = self.op.task;
        let name = observe::name_of(task, None);
        let (plan, mut done) = match outcome {
            Outcome::Done(done) => done,
            _ => (planned.plan.clone(), Executed::default()),
        };
        if let Some(found) = done.adopted {
            // Another run created this name at the same moment: that VM is the one.
            self.listing.learn_name(&found, &name, task.pool.as_ref());
            return self.adopt(cx, &found);
        }
        let vm = plan.vm.clone();
        let may_race = seen.allocation == Allocation::NextId;
        name_race::after_create(&self.op.run(cx), may_race, &vm, done.listing.take(), self.learned);
        let out = Output::changed(format!("VM {name} with vmid {} deployed", vm.vmid))
            .with("vmid", vm.vmid)
            .with("actions", plan.describe())
            .with_diff(planned.diff.clone());
        let out = done.with_pending(out);
        let config = observe::made_config(&self.op.run(cx), self.listing, &vm, done.config.take())?;
        Ok(with_mac_and_devices(
            out,
            cx.effects(),
            cx.check_mode(),
            vm.vmid,
            config.as_ref(),
        ))
    }
}

impl Create<'_> {
    /// The VM `found` another run made under this name: the task continues as its update.
    fn adopt(self, cx: &mut Cx<'_>, found: &Vm) -> Result<Output, Failure> {
        let listing = &*self.listing;
        let guest = observe::target(&self.op.run(cx), listing)?.ok_or_else(|| {
            Failure::new(format!(
                "VM {} made by another run under this name is not found in the listing",
                found.vmid
            ))
            .with("vmid", found.vmid)
        })?;
        let next = UpdateExisting::new(self.op.task, listing, self.op.tag_case.clone(), To::Present(&guest));
        driver::steps(cx, next)
    }
}
