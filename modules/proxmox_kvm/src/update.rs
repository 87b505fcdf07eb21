//! The one update path of a VM that exists, a task of the one driver
//! ([`ferrox_run::driver`]): `present` with `update: true` (else the VM left alone, what
//! differs named), and a clone task whose clone exists ([`crate::clone`], after a move
//! to its node a run left undone). Observe reads the VM's config (a clone's is handed
//! over), compares it with the task and reads the cloud-init drive where it matters;
//! the plan is [`crate::decide::update`]'s; the guard is the VM's lock (worded by the
//! decision) and the writes PVE checks; the check is of the bridges, volumes and pool
//! the writes name ([`crate::checks`]); check mode predicts what PVE would keep
//! pending (reading what a running VM has pending already), a real run writes
//! ([`crate::step::Op::carry_out`]); the report is `report/update.rs`'s, with `mac` and
//! `devices`.

use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::tags::TagCase;
use ferrox_cluster::vm::Guest;
use ferrox_run::driver::{Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::vm_task::LockWording;
use serde_json::{Map, Value};

use crate::api::Vm;
use crate::checks::{check_bridges, check_drives, check_pool, newly_referenced};
use crate::converge::Changes;
use crate::decide::update::{self, Decision};
use crate::execute::Outcome as Done;
use crate::observe::listing::Listing;
use crate::observe::UpdateObserved;
use crate::plan::{privileges, Plan};
use crate::report::update::{moved_then, with_mac_and_devices, Moved, Updated};
use crate::step::{Op, Run};
use crate::task::{Config, KvmTask};
use crate::{converge, observe, report};

/// An existing VM to bring to the task.
#[derive(Clone)]
pub(crate) struct Existing<'g> {
    pub(crate) guest: &'g Guest,
    /// The name for messages.
    pub(crate) name: String,
    /// Its config, read once.
    pub(crate) current: Map<String, Value>,
    /// The config keys asked for (a clone moved to its node leaves out `name`).
    pub(crate) wanted: Config,
    /// The message when nothing differs (1.6 words it per path).
    pub(crate) up_to_date: String,
}

/// What the update is of.
pub(crate) enum To<'g> {
    /// `state: present` on the VM `guest`: converged with `update: true`, else left alone.
    Present(&'g Guest),
    /// A clone that exists, converged; `moved`: the move to its node this run made first.
    Clone {
        existing: Box<Existing<'g>>,
        moved: Option<Moved>,
    },
}

/// The task of the update of a VM that exists.
pub(crate) struct UpdateExisting<'a> {
    pub(crate) op: Op<'a>,
    /// The run's listing (which vmids are taken).
    pub(crate) listing: &'a Listing,
    pub(crate) to: To<'a>,
    /// What a check run predicts stays pending ([`Task::predict`]), for the report.
    predicted: Map<String, Value>,
}

impl<'a> UpdateExisting<'a> {
    pub(crate) fn new(task: &'a KvmTask, listing: &'a Listing, tag_case: TagCase<'a>, to: To<'a>) -> Self {
        UpdateExisting {
            op: Op { task, tag_case },
            listing,
            to,
            predicted: Map::new(),
        }
    }
}

/// What the update read.
pub(crate) enum Seen {
    /// Without `update`: the VM, its config and what of it differs from the task.
    LeftAlone {
        vm: Vm,
        pool: Option<String>,
        config: Map<String, Value>,
        differ: Result<Vec<String>, String>,
    },
    /// The VM to converge.
    Converging(Box<Converging>),
}

/// A VM to converge: its view, the keys asked for and what differs.
pub(crate) struct Converging {
    observed: UpdateObserved,
    wanted: Config,
    changes: Changes,
    up_to_date: String,
    /// How a refusal of it locked starts: an update's, a reboot's.
    update_prefix: String,
    reboot_prefix: String,
}

/// The decision, and the plan of its writes (`None`: nothing to write).
pub(crate) enum Planned {
    LeftAlone {
        msg: String,
        warnings: Vec<String>,
    },
    Decided {
        decision: Box<Decision>,
        plan: Option<Box<Plan>>,
    },
}

impl Decided for Planned {
    fn changes(&self) -> bool {
        matches!(self, Planned::Decided { plan: Some(_), .. })
    }

    fn warnings(&self) -> Vec<String> {
        match self {
            Planned::LeftAlone { warnings, .. } => warnings.clone(),
            Planned::Decided { .. } => Vec::new(),
        }
    }
}

impl UpdateExisting<'_> {
    /// What the update reads; its warnings go to `warnings`, failed or not.
    fn seen(&self, run: &Run, warnings: &mut Vec<String>) -> Result<Seen, Failure> {
        let task = self.op.task;
        let to = match &self.to {
            To::Present(guest) => {
                let observed = observe::existing(run, guest)?;
                let vm = observed.vm;
                warnings.extend(update::node_warning(task, &vm));
                warnings.extend(update::ha_warning(
                    task,
                    &vm,
                    observed.ha_managed,
                    guest.hastate.as_deref(),
                ));
                if !task.update {
                    let differ =
                        converge::changes(&observed.config, &task.config, vm.vmid, &run.tag_case).map(|c| c.keys());
                    return Ok(Seen::LeftAlone {
                        vm,
                        pool: guest.pool.clone(),
                        config: observed.config,
                        differ,
                    });
                }
                Existing {
                    guest,
                    up_to_date: format!("VM {} with vmid {} is up to date", observed.name, vm.vmid),
                    name: observed.name,
                    current: observed.config,
                    wanted: task.config.clone(),
                }
            }
            To::Clone { existing, .. } => (**existing).clone(),
        };
        let id = to.guest.vmid;
        let (changes, warning) = update::compare(task, id, &to.current, &to.wanted, &run.tag_case)?;
        warnings.extend(warning);
        let observed = observe::for_update(run, to.guest, to.name, to.current, &to.wanted)?;
        Ok(Seen::Converging(Box::new(Converging {
            update_prefix: update::lock_prefix(false, &observed.name, id),
            reboot_prefix: update::lock_prefix(true, &observed.name, id),
            observed,
            wanted: to.wanted,
            changes,
            up_to_date: to.up_to_date,
        })))
    }

    /// The result of a decision on `c` (and the update's clauses a moved clone's message
    /// ends with), with the config `mac` and `devices` are read from.
    fn worded(
        &mut self,
        c: &Converging,
        decision: &Decision,
        plan: Option<&Plan>,
        outcome: Outcome<Done>,
    ) -> (Output, String, Option<Map<String, Value>>) {
        let (id, observed) = (c.observed.vm.vmid, &c.observed);
        let actions = plan.map(Plan::describe).unwrap_or_default();
        let out = match decision {
            Decision::UpToDate(msg) => report::update::up_to_date(msg.clone(), id),
            Decision::NotInGuest { msg, waiting } => report::update::not_in_guest(msg.clone(), id, waiting.clone()),
            Decision::RebootForGuest { msg, diff, .. } => {
                report::update::rebooted_for_guest(msg.clone(), id, actions, diff.clone())
            }
            Decision::Update(u) => {
                let (rebooted_for_pending, pending, config) = match outcome {
                    Outcome::Done(done) => (done.rebooted_for_pending, done.pending, done.config),
                    _ => {
                        // Nothing was written: what PVE's hotplug rules would leave pending.
                        let predicted = std::mem::take(&mut self.predicted);
                        let rebooted = u.reboot && !(predicted.is_empty() && u.not_in_guest.is_empty());
                        (rebooted, predicted, None)
                    }
                };
                let (out, after_update) = report::update::updated(Updated {
                    name: observed.name.clone(),
                    vmid: id,
                    keys: u.keys.clone(),
                    actions,
                    diff: u.diff.clone(),
                    rebooted_for_pending,
                    pending,
                    not_in_guest: u.not_in_guest.clone(),
                });
                return (out, after_update, config);
            }
        };
        (out, String::new(), None)
    }
}

impl Task for UpdateExisting<'_> {
    type Seen = Seen;
    type Plan = Planned;
    type Done = Done;

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let mut warnings = Vec::new();
        let seen = self.seen(&self.op.run(cx), &mut warnings);
        for w in warnings {
            cx.warn(w);
        }
        seen
    }

    fn plan(&self, seen: &Seen) -> Result<Planned, Failure> {
        let c = match seen {
            Seen::LeftAlone { vm, pool, differ, .. } => {
                let (msg, warnings) = update::left_alone(self.op.task, vm, pool.as_ref(), differ.clone());
                return Ok(Planned::LeftAlone { msg, warnings });
            }
            Seen::Converging(c) => c,
        };
        let (vm, current) = (&c.observed.vm, &c.observed.config);
        let decision = update::decide(
            self.op.task,
            &c.observed,
            c.wanted.clone(),
            c.changes.clone(),
            c.up_to_date.clone(),
        )?;
        let plan = match &decision {
            Decision::RebootForGuest { actions, .. } => Some(Box::new(Plan::of(vm.clone(), actions.clone()))),
            Decision::Update(u) => {
                let mut plan = Plan::of(vm.clone(), u.actions.clone());
                plan.known.current = Some(current.clone());
                Some(Box::new(plan))
            }
            _ => None,
        };
        Ok(Planned::Decided {
            decision: Box::new(decision),
            plan,
        })
    }

    fn guard<'s>(&self, seen: &'s Seen, planned: &Planned) -> Guard<'s> {
        let (
            Seen::Converging(c),
            Planned::Decided {
                decision,
                plan: Some(plan),
            },
        ) = (seen, planned)
        else {
            unreachable!("only a decision with a plan changes anything")
        };
        let vm = &c.observed.vm;
        let prefix = match &**decision {
            Decision::RebootForGuest { .. } => &c.reboot_prefix,
            _ => &c.update_prefix,
        };
        Guard {
            subject: Subject::Vm {
                vmid: vm.vmid,
                node: &vm.node,
            },
            lock: Some(Lock {
                held: update::held_lock(&c.observed.config),
                skiplock: self.op.task.skiplock,
                wording: LockWording::Action { prefix },
            }),
            writes: privileges::of(plan),
        }
    }

    fn check(&self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned) -> Result<(), Failure> {
        let (Seen::Converging(c), Planned::Decided { decision, .. }) = (seen, planned) else {
            return Ok(());
        };
        let Decision::Update(u) = &**decision else {
            return Ok(());
        };
        let run = self.op.run(cx);
        let (vm, current) = (&c.observed.vm, &c.observed.config);
        check_bridges(&run, &vm.node, u.changes.set.iter())?;
        check_drives(&run, self.listing, &vm.node, newly_referenced(&u.changes, current))?;
        if u.moves_pool {
            check_pool(&run)?;
        }
        Ok(())
    }

    fn predict(&mut self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned) -> Result<Prediction, Failure> {
        let (
            Seen::Converging(c),
            Planned::Decided {
                decision,
                plan: Some(plan),
            },
        ) = (seen, planned)
        else {
            return Ok(Prediction::default());
        };
        let mut plan = (**plan).clone();
        if let Decision::Update(u) = &**decision {
            let predicted = observe::pending_before_update(&self.op.run(cx), &c.observed)?
                .map(|already| update::predicted_pending(&u.changes, &c.observed.config, already))
                .unwrap_or_default();
            plan.known.pending = predicted.clone();
            self.predicted = predicted;
        }
        Ok(self.op.predict(&plan))
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, planned: &Planned) -> Result<Done, Failure> {
        let (Seen::Converging(c), Planned::Decided { plan: Some(plan), .. }) = (seen, planned) else {
            return Ok(Done::default());
        };
        let mut plan = (**plan).clone();
        let name = c.observed.name.clone();
        self.op.carry_out(cx, self.listing, &mut plan, name)
    }

    fn report(
        mut self,
        cx: &mut Cx<'_>,
        seen: &Seen,
        planned: &Planned,
        outcome: Outcome<Done>,
    ) -> Result<Output, Failure> {
        let check_mode = cx.check_mode();
        let (out, after_update, vmid, config) = match (seen, planned) {
            (Seen::LeftAlone { vm, config, .. }, Planned::LeftAlone { msg, .. }) => (
                report::update::left_alone(msg.clone(), vm.vmid),
                String::new(),
                vm.vmid,
                config.clone(),
            ),
            (Seen::Converging(c), Planned::Decided { decision, plan }) => {
                let (out, after_update, config) = self.worded(c, decision, plan.as_deref(), outcome);
                let config = config.unwrap_or_else(|| c.observed.config.clone());
                (out, after_update, c.observed.vm.vmid, config)
            }
            _ => unreachable!("a plan is of what was seen"),
        };
        let out = with_mac_and_devices(out, cx.effects(), check_mode, vmid, Some(&config));
        Ok(match &self.to {
            To::Clone { moved: Some(moved), .. } => moved_then(out, &after_update, moved),
            _ => out,
        })
    }
}
