//! `clone`: make the clone unless it exists, then apply the rest of the task to it in
//! the same run. Without `newid`, a VM named `name` (other than the source) is the clone.
//! Each step is a task of the one driver ([`ferrox_run::driver`]) run with
//! `driver::steps`: a new clone ([`MakeClone`], decided by [`crate::decide::clone`], a
//! clone to another node's local storage taking the route of
//! [`crate::decide::clone_route`]; a racing run's clone adopted and converged); a clone
//! that exists converges exactly as `update: true` would, the update task
//! ([`crate::update::UpdateExisting`]), after a move to its node that a run left undone
//! ([`MoveClone`]), whose message the update's result starts with.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::tags::TagCase;
use ferrox_cluster::vm::Guest;
use ferrox_run::driver::{self, Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::vm_task::LockWording;
use serde_json::{Map, Value};

use crate::api::Vm;
use crate::checks::check_new_vm;
use crate::converge::{self, Changes};
use crate::decide::clone_route;
use crate::execute::Outcome as Executed;
use crate::observe::listing::Listing;
use crate::observe::{self, name_of, vm_of};
use crate::plan::{privileges, Action, Allocation, Plan};
use crate::report::update::{with_mac_and_devices, Moved};
use crate::step::{Learned, Op, Run};
use crate::task::KvmTask;
use crate::update::{Existing, To, UpdateExisting};
use crate::{decide, name_race};

/// `clone`: make the clone unless it exists, then apply the rest of the task to it.
pub(crate) fn clone<'a>(
    cx: &mut Cx<'_>,
    task: &'a KvmTask,
    tag_case: &TagCase<'a>,
    listing: &mut Listing,
    learned: &mut Learned,
) -> Result<Output, Failure> {
    if task.ha_managed {
        learned.warnings.push("ha_managed applies when a VM is created or restored; PVE's clone has no such parameter, so the clone is not HA-managed. Add it to HA with ha-manager add vm:<vmid> (or POST /cluster/ha/resources)".to_string());
    }
    let run = Run::on(cx, task, tag_case);
    let source = observe::clone_source(&run, listing)?;
    match observe::existing_clone(&run, listing, &source)? {
        Some(clone) => rerun(cx, task, tag_case, listing, &clone, &source),
        None => make(cx, task, tag_case, listing, learned, &source),
    }
}

/// The clone exists: a move a run left undone goes first; then it converges like an
/// update, a task of the driver ([`UpdateExisting`]).
fn rerun<'a>(
    cx: &mut Cx<'_>,
    task: &'a KvmTask,
    tag_case: &TagCase<'a>,
    listing: &Listing,
    clone: &Guest,
    source: &Guest,
) -> Result<Output, Failure> {
    let vm = vm_of(clone);
    let current = observe::config(cx.client, &vm)?;
    let name = name_of(task, None);
    let left = move_left(&Run::on(cx, task, tag_case), listing, clone, source, &current)?;
    if let Some((target, route)) = left {
        let move_clone = MoveClone {
            op: Op {
                task,
                tag_case: tag_case.clone(),
            },
            listing,
            clone,
            current: &current,
            name: &name,
            target,
            route,
        };
        return driver::steps(cx, move_clone);
    }
    // Exactly as `update: true` would; 1.6 words the up-to-date message its own way.
    let existing = Existing {
        guest: clone,
        up_to_date: format!("vmid {} with VM name {name} already exists", vm.vmid),
        name,
        current,
        wanted: task.config.clone(),
    };
    let to = To::Clone {
        existing: Box::new(existing),
        moved: None,
    };
    driver::steps(cx, UpdateExisting::new(task, listing, tag_case.clone(), to))
}

/// A new clone: observed, planned (clone, listed, moved, configured), checked and made:
/// a task of the driver ([`MakeClone`]).
fn make<'a>(
    cx: &mut Cx<'_>,
    task: &'a KvmTask,
    tag_case: &TagCase<'a>,
    listing: &mut Listing,
    learned: &mut Learned,
    source: &Guest,
) -> Result<Output, Failure> {
    let make = MakeClone {
        op: Op {
            task,
            tag_case: tag_case.clone(),
        },
        source,
        listing,
        learned,
    };
    driver::steps(cx, make)
}

/// The task of a new clone of `source`.
struct MakeClone<'a, 'l> {
    op: Op<'a>,
    source: &'l Guest,
    /// The run's listing: which vmids are taken; a racer's clone adopted is learned in it.
    listing: &'l mut Listing,
    /// What the run learns: the listing that showed the clone, a racer's warning.
    learned: &'l mut Learned,
}

/// What a new clone reads: its node, the source's config where it matters, the route
/// to another node's local storage, its vmid, and the rest of the task compared.
struct CloneSeen {
    node: String,
    source_config: Option<Map<String, Value>>,
    route: Option<clone_route::Route>,
    newid: u32,
    allocation: Allocation,
    changes: Option<Changes>,
}

/// The plan of the clone, and its diff.
struct ClonePlanned {
    plan: Plan,
    diff: Diff,
}

impl Decided for ClonePlanned {
    fn changes(&self) -> bool {
        true
    }
}

impl Task for MakeClone<'_, '_> {
    type Seen = CloneSeen;
    type Plan = ClonePlanned;
    /// The plan as run (a vmid taken meanwhile chooses another), and what it found out.
    type Done = (Plan, Executed);

    fn observe(&self, cx: &mut Cx<'_>) -> Result<CloneSeen, Failure> {
        let (task, source, run) = (self.op.task, self.source, self.op.run(cx));
        let listing = &*self.listing;
        decide::clone::refuse_linked_of_non_template(task, source)?;
        let node = task.clone.target.clone().unwrap_or_else(|| source.node.to_string());
        // The source's config: the clone's start (check mode), what the rest of the task is
        // compared with, and where its disks are (a clone to another node).
        let source_config = if decide::clone::reads_source_config(task, task.check_mode, &node, &source.node) {
            Some(observe::clone_source_config(
                run.client,
                &vm_of(source),
                task.clone.snapname.as_deref(),
                &name_of(task, None),
            )?)
        } else {
            None
        };
        let route = match &source_config {
            Some(c) => clone_route::route(task, &listing.storages, source.vmid, &source.node, &node, c)?,
            None => None,
        };
        let (newid, allocation) = observe::vmid::choose(&run, listing, task.clone.newid)?;
        let changes = rest_of_task(&run, source, newid, source_config.clone())?;
        Ok(CloneSeen {
            node,
            source_config,
            route,
            newid,
            allocation,
            changes,
        })
    }

    fn plan(&self, seen: &CloneSeen) -> Result<ClonePlanned, Failure> {
        let task = self.op.task;
        let (mut plan, diff) = decide::clone::plan(
            task,
            self.source,
            seen.newid,
            seen.allocation.clone(),
            seen.route.as_ref(),
            seen.changes.clone(),
        );
        // The plan's clone starts as a copy of the source's config (what a check run predicts).
        plan.known.clone_source = seen.source_config.clone().filter(|_| task.check_mode);
        Ok(ClonePlanned { plan, diff })
    }

    fn guard<'s>(&self, seen: &'s CloneSeen, planned: &ClonePlanned) -> Guard<'s> {
        let plan = &planned.plan;
        Guard {
            subject: Subject::Vm {
                vmid: seen.newid,
                node: &seen.node,
            },
            lock: None,
            writes: privileges::of(plan),
        }
    }

    fn check(&self, cx: &mut Cx<'_>, seen: &CloneSeen, _planned: &ClonePlanned) -> Result<(), Failure> {
        check_new_vm(&self.op.run(cx), self.listing, &seen.node, &self.op.task.config)
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &CloneSeen, planned: &ClonePlanned) -> Result<Prediction, Failure> {
        Ok(self.op.predict(&planned.plan))
    }

    fn execute(&self, cx: &mut Cx<'_>, _seen: &CloneSeen, planned: &ClonePlanned) -> Result<(Plan, Executed), Failure> {
        let mut plan = planned.plan.clone();
        let name = name_of(self.op.task, None);
        let done = self.op.carry_out(cx, self.listing, &mut plan, name)?;
        Ok((plan, done))
    }

    fn report(
        self,
        cx: &mut Cx<'_>,
        seen: &CloneSeen,
        planned: &ClonePlanned,
        outcome: Outcome<(Plan, Executed)>,
    ) -> Result<Output, Failure> {
        let task = self.op.task;
        let name = name_of(task, None);
        let (plan, mut done) = match outcome {
            Outcome::Done(done) => done,
            _ => (planned.plan.clone(), Executed::default()),
        };
        if let Some(found) = done.adopted {
            // Another run made this clone at the same moment: that VM is the clone.
            self.listing.learn_name(&found, &name, task.pool.as_ref());
            return clone(cx, task, &self.op.tag_case, self.listing, self.learned);
        }
        let vm = plan.vm.clone();
        let may_race = seen.allocation == Allocation::NextId;
        name_race::after_create(&self.op.run(cx), may_race, &vm, done.listing.take(), self.learned);
        let out = Output::changed(format!(
            "VM {name} with newid {} cloned from vm with vmid {}",
            vm.vmid, self.source.vmid
        ))
        .with("vmid", vm.vmid)
        .with("actions", plan.describe())
        .with_diff(planned.diff.clone());
        let out = done.with_pending(out);
        // In check mode the clone does not exist: its MACs and volumes are not known yet
        // (PVE gives a clone new ones), so none are reported rather than the source's.
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

/// The rest of the task ([`decide::clone::wanted`]) compared with the source's config,
/// the clone's copy (`None`: nothing else to apply).
fn rest_of_task(
    run: &Run,
    source: &Guest,
    newid: u32,
    source_config: Option<Map<String, Value>>,
) -> Result<Option<Changes>, Failure> {
    let wanted = decide::clone::wanted(run.task);
    if wanted.is_empty() {
        return Ok(None);
    }
    let source_config = match source_config {
        Some(c) => c,
        None => observe::clone_source_config(
            run.client,
            &vm_of(source),
            run.task.clone.snapname.as_deref(),
            &name_of(run.task, None),
        )?,
    };
    converge::changes(&source_config, &wanted, newid, &run.tag_case)
        .map(Some)
        .map_err(|e| Failure::new(e).with("vmid", newid))
}

/// A clone a run left on the source's node before its move: stopped, while the task
/// wants it on `target` and its disks cannot be cloned there: the node it is to move to
/// and the route of its disks; `None` when no move is left to do. `current`: the
/// clone's config, read once.
fn move_left(
    run: &Run,
    listing: &Listing,
    clone: &Guest,
    source: &Guest,
    current: &Map<String, Value>,
) -> Result<Option<(String, clone_route::Route)>, Failure> {
    let Some(target) = run.task.clone.target.clone().filter(|t| *t != *clone.node) else {
        return Ok(None);
    };
    if clone.node != source.node || clone.status.as_deref() != Some("stopped") {
        return Ok(None);
    }
    let route = clone_route::route(run.task, &listing.storages, clone.vmid, &clone.node, &target, current)?;
    Ok(route.map(|route| (target, route)))
}

/// The move of a clone a run left on the source's node ([`move_left`]), a task of the
/// driver; then the clone converges as `update: true` would, the update task's result
/// starting with the move's message.
struct MoveClone<'a, 'l> {
    op: Op<'a>,
    listing: &'l Listing,
    clone: &'l Guest,
    /// The clone's config, read once.
    current: &'l Map<String, Value>,
    /// The name for messages.
    name: &'l str,
    target: String,
    route: clone_route::Route,
}

/// The clone, and how a refusal of it locked starts.
struct MoveSeen {
    vm: Vm,
    /// The clone's config's `lock`, if any.
    lock: Option<String>,
    lock_prefix: String,
}

/// The move's plan.
struct MovePlanned(Plan);

impl Decided for MovePlanned {
    fn changes(&self) -> bool {
        true
    }
}

impl Task for MoveClone<'_, '_> {
    type Seen = MoveSeen;
    type Plan = MovePlanned;
    type Done = ();

    fn observe(&self, _cx: &mut Cx<'_>) -> Result<MoveSeen, Failure> {
        let vm = vm_of(self.clone);
        let lock_prefix = format!(
            "Unable to clone vm {}: the clone VM {} was made on {}, its move to {} failed: ",
            self.name, vm.vmid, vm.node, self.target
        );
        let lock = self.current.get("lock").and_then(Value::as_str).map(str::to_string);
        Ok(MoveSeen { vm, lock, lock_prefix })
    }

    fn plan(&self, seen: &MoveSeen) -> Result<MovePlanned, Failure> {
        let route = self.route.clone();
        let mut plan = Plan::new(seen.vm.clone());
        plan.push(Action::MoveClone {
            from: route.via,
            to: route.to,
            targetstorage: route.targetstorage,
        });
        plan.known.current = Some(self.current.clone());
        Ok(MovePlanned(plan))
    }

    fn guard<'s>(&self, seen: &'s MoveSeen, planned: &MovePlanned) -> Guard<'s> {
        let plan = &planned.0;
        Guard {
            subject: Subject::Vm {
                vmid: seen.vm.vmid,
                node: &seen.vm.node,
            },
            lock: Some(Lock {
                held: seen.lock.as_deref(),
                skiplock: self.op.task.skiplock,
                wording: LockWording::Action {
                    prefix: &seen.lock_prefix,
                },
            }),
            writes: privileges::of(plan),
        }
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &MoveSeen, planned: &MovePlanned) -> Result<Prediction, Failure> {
        Ok(self.op.predict(&planned.0))
    }

    fn execute(&self, cx: &mut Cx<'_>, _seen: &MoveSeen, planned: &MovePlanned) -> Result<(), Failure> {
        let mut plan = planned.0.clone();
        let name = self.name.to_string();
        self.op.carry_out(cx, self.listing, &mut plan, name).map(|_| ())
    }

    fn report(
        self,
        cx: &mut Cx<'_>,
        seen: &MoveSeen,
        planned: &MovePlanned,
        _: Outcome<()>,
    ) -> Result<Output, Failure> {
        let moved = Guest {
            node: self.target.as_str().into(),
            ..self.clone.clone()
        };
        // The migration rewrote the config (its volumes, its digest); a dry run has only the old.
        let current = if cx.check_mode() {
            self.current.clone()
        } else {
            observe::config(cx.client, &vm_of(&moved))?
        };
        let mut wanted = self.op.task.config.clone();
        wanted.remove("name");
        let existing = Existing {
            guest: &moved,
            name: self.name.to_string(),
            current,
            wanted,
            up_to_date: String::new(),
        };
        let done = Moved {
            name: self.name.to_string(),
            vmid: seen.vm.vmid,
            from: seen.vm.node.clone(),
            to: self.target.clone(),
            actions: planned.0.describe(),
        };
        let to = To::Clone {
            existing: Box::new(existing),
            moved: Some(done),
        };
        driver::steps(
            cx,
            UpdateExisting::new(self.op.task, self.listing, self.op.tag_case.clone(), to),
        )
    }
}
