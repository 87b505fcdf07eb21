//! The one task driver: every module task that may write is a value implementing
//! [`Task`], and [`run`] runs it, so the sequence every module shares is written once:
//!
//! 1. connect (the connection options read once), and build the steps' context [`Cx`];
//!    a read PVE guards as it guards a write ([`Task::read_guard`]) is held to the
//!    privilege gate first;
//! 2. [`Task::observe`]: every read the decision needs;
//! 3. [`Task::plan`]: the decision, pure — a plan that changes nothing is reported at once;
//! 4. [`Task::guard`]: what PVE will check of the change — a lock on the VM is refused,
//!    then the writes are held to the privilege gate ([`Gate`]; a refusal goes to the
//!    run's plan in check mode, so later tasks plan as if this one had not run);
//! 5. [`Task::check`]: refusals that need one more read (a bridge, a storage);
//! 6. check mode: [`Task::predict`] — the effects later tasks of the run see as done, and
//!    the warnings a real run would give; otherwise [`Task::execute`];
//! 7. [`Task::report`] words the result of whichever of the three outcomes happened (and
//!    may read: a guest's agent waited for, a VM already as asked). It takes the task:
//!    what the task kept (the run's listing, a prediction) is its own to use up.
//!
//! [`run`] is a whole task. A module whose task first reads what decides which task it is
//! (proxmox_kvm lists the cluster and places a new VM, then creates, clones or updates),
//! or that continues as another task (a create that finds the VM another run made
//! converges it), takes the context with [`within`] and runs each task with [`steps`]:
//! one connection, one privilege gate, one effects buffer for all of them.
//!
//! The effects buffered reach the run once, at the end, on success and failure alike
//! (the protocol keeps only a refusal of a failed task).
//!
//! One trait for every writing task, not one for VM tasks and another for the rest: a
//! task on an ACL path, a pool or a user reads, decides, is gated and writes the same way;
//! only what it names differs, and that is the [`Guard`]'s [`Subject`]. A task that only
//! reads (an `_info` module) implements [`Read`] instead, and [`read`] runs it: connect,
//! observe, report, on the same context.

use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_dryrun::Effect;
use ferrox_pve_client::client::Client;
use ferrox_pve_rules::privileges::Write;

use crate::connection::{ConnectionParams, FromOptions};
use crate::privileges::{Gate, Target};
use crate::vm_task::{lock_refusal, Effects, LockWording};
use crate::SharedRunState;

/// A plan as the driver sees it: whether it changes anything, and what it warns of.
pub trait Decided {
    /// Whether carrying the plan out changes the cluster (else it is reported at once).
    fn changes(&self) -> bool;
    /// Warnings the decision gives, whatever happens next.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A module's task: what it reads, the pure plan from what was read, what PVE will
/// check of its writes, how it writes, and how it words the result.
pub trait Task {
    /// What [`Task::observe`] read.
    type Seen;
    /// The decision.
    type Plan: Decided;
    /// What [`Task::execute`] learned (a config read back, a task's log, ...).
    type Done;

    /// What PVE checks of a read as it would of a write, if the task makes such a read
    /// (a node's `query-url-metadata` demands what the download it prepares demands): held
    /// to the privilege gate before [`Task::observe`], so that a missing privilege is
    /// named as one, not as a read that failed.
    fn read_guard(&self) -> Option<Guard<'_>> {
        None
    }

    /// Every read the decision needs.
    fn observe(&self, cx: &mut Cx<'_>) -> Result<Self::Seen, Failure>;

    /// The decision, pure: a plan, or the refusal in the module's words.
    fn plan(&self, seen: &Self::Seen) -> Result<Self::Plan, Failure>;

    /// What PVE will check of the plan's change, before the first write. Pure.
    fn guard<'s>(&'s self, seen: &'s Self::Seen, plan: &Self::Plan) -> Guard<'s>;

    /// Refusals that need one more read, made before any write (check mode too).
    fn check(&self, _cx: &mut Cx<'_>, _seen: &Self::Seen, _plan: &Self::Plan) -> Result<(), Failure> {
        Ok(())
    }

    /// Check mode: what the change would do, for the run's plan and the result (reading
    /// what a real run would read back: what a running VM keeps pending, ...); the task
    /// may keep what it predicted for [`Task::report`].
    fn predict(&mut self, cx: &mut Cx<'_>, seen: &Self::Seen, plan: &Self::Plan) -> Result<Prediction, Failure>;

    /// Carries the plan out.
    fn execute(&self, cx: &mut Cx<'_>, seen: &Self::Seen, plan: &Self::Plan) -> Result<Self::Done, Failure>;

    /// The result of `outcome` (reading what it needs: a guest waited for, ...); the last
    /// step, so it takes the task (and what the task keeps: the run's listing to learn a
    /// VM in, a prediction).
    fn report(
        self,
        cx: &mut Cx<'_>,
        seen: &Self::Seen,
        plan: &Self::Plan,
        outcome: Outcome<Self::Done>,
    ) -> Result<Output, Failure>;
}

/// What happened to a plan.
#[derive(Debug)]
pub enum Outcome<D> {
    /// The plan changes nothing.
    Unchanged,
    /// Check mode: the change was predicted, not made.
    Predicted,
    /// The change was made; what was learned doing it.
    Done(D),
}

/// A check run's view of a change.
#[derive(Debug, Default)]
pub struct Prediction {
    /// What later tasks of the run see as done.
    pub effects: Vec<Effect>,
    /// What a real run would warn of (a change left pending until a restart, ...).
    pub warnings: Vec<String>,
}

/// What PVE will check of a change before making it.
#[derive(Debug)]
pub struct Guard<'s> {
    /// What the change is made to, as a refusal names it.
    pub subject: Subject<'s>,
    /// The lock PVE refuses a change under, if the subject has one.
    pub lock: Option<Lock<'s>>,
    /// The writes, as PVE checks their privileges.
    pub writes: Vec<Write>,
}

/// What a change is made to.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'s> {
    /// A VM on a node.
    Vm {
        /// Its vmid.
        vmid: u32,
        /// Its node.
        node: &'s str,
    },
    /// Something that is no VM (an ACL path, a pool, a user), as a refusal names it:
    /// `ACL path /vms/100`, `pool prod`. It has no config lock, and a refusal in check
    /// mode leaves the run's plan as it was.
    Named(&'s str),
}

/// The lock a VM's config holds, and whether the task overrides it.
#[derive(Debug, Clone, Copy)]
pub struct Lock<'s> {
    /// The config's `lock` (`backup`, `migrate`, ...), if any.
    pub held: Option<&'s str>,
    /// `skiplock`: root@pam lets PVE change it anyway.
    pub skiplock: bool,
    /// How the module words the refusal.
    pub wording: LockWording<'s>,
}

/// What the steps of a task are handed: the module (its parameters, check mode,
/// warnings, the run's shared state), the client, the connection options, and the
/// effects the task has buffered so far.
pub struct Cx<'a> {
    /// The module: parameters, check mode, warnings, the run's shared state.
    pub m: &'a mut Module,
    /// The client of the run's connection.
    pub client: &'a Client,
    /// The connection options, read once.
    pub conn: &'a ConnectionParams,
    /// The privileges PVE will check (read once, when first needed; a check that reads
    /// the cluster may ask it why PVE hides something).
    pub gate: Gate<'a>,
    effects: &'a mut Effects,
}

impl Cx<'_> {
    /// Whether the task runs in check mode.
    pub fn check_mode(&self) -> bool {
        self.m.check_mode
    }

    /// A warning in the task's result.
    pub fn warn(&mut self, msg: impl Into<String>) {
        self.m.warn(msg);
    }

    /// The effects the task has buffered so far (a task that reports the config it
    /// predicts reads its own effects).
    pub fn effects(&self) -> &[Effect] {
        self.effects.as_slice()
    }
}

/// Runs `task`: the steps in the module doc's order, each once.
pub fn run<T: Task>(m: &mut Module, task: T) -> Result<Output, Failure> {
    let conn = ConnectionParams::from_params(&m.params)?;
    within(m, &conn, |cx| steps(cx, task))
}

/// A task that only reads (proxmox_snap_info, proxmox_user_info): nothing to plan, guard,
/// predict or write; what it read is its result, in check mode as in a real run.
pub trait Read {
    /// What [`Read::observe`] read.
    type Seen;

    /// Every read the result needs.
    fn observe(&self, cx: &mut Cx<'_>) -> Result<Self::Seen, Failure>;

    /// The result, in the module's words. Pure.
    fn report(&self, seen: Self::Seen) -> Output;
}

/// Runs a read-only `task`: connect, observe, report.
pub fn read<T: Read>(m: &mut Module, task: T) -> Result<Output, Failure> {
    let conn = ConnectionParams::from_params(&m.params)?;
    within(m, &conn, |cx| Ok(task.report(task.observe(cx)?)))
}

/// Connects with `conn` and runs `body` with the steps' context; the effects it buffered
/// reach the run at the end, on success and failure alike.
pub fn within(
    m: &mut Module,
    conn: &ConnectionParams,
    body: impl FnOnce(&mut Cx<'_>) -> Result<Output, Failure>,
) -> Result<Output, Failure> {
    let client = m.connect(conn)?;
    let mut effects = Effects::default();
    let result = body(&mut Cx {
        m,
        client: &client,
        conn,
        gate: Gate::new(&client, conn),
        effects: &mut effects,
    });
    effects.hand_to(m);
    result
}

/// The steps of `task`, in the module doc's order, each once, on `cx`.
pub fn steps<T: Task>(cx: &mut Cx<'_>, mut task: T) -> Result<Output, Failure> {
    if let Some(guard) = task.read_guard() {
        hold(cx, guard)?;
    }
    let seen = task.observe(cx)?;
    let plan = task.plan(&seen)?;
    for w in plan.warnings() {
        cx.warn(w);
    }
    if !plan.changes() {
        return task.report(cx, &seen, &plan, Outcome::Unchanged);
    }
    hold(cx, task.guard(&seen, &plan))?;
    let checked = task.check(cx, &seen, &plan);
    for w in cx.gate.take_warnings() {
        cx.warn(w);
    }
    checked?;
    if cx.check_mode() {
        let Prediction { effects, warnings } = task.predict(cx, &seen, &plan)?;
        for w in warnings {
            cx.warn(w);
        }
        cx.effects.record_all(true, effects);
        return task.report(cx, &seen, &plan, Outcome::Predicted);
    }
    let done = task.execute(cx, &seen, &plan)?;
    task.report(cx, &seen, &plan, Outcome::Done(done))
}

/// Refuses a locked subject, then holds the writes to the privilege gate.
fn hold(cx: &mut Cx<'_>, guard: Guard<'_>) -> Result<(), Failure> {
    let (vmid, node) = match guard.subject {
        Subject::Vm { vmid, node } => (vmid, node),
        Subject::Named(subject) => return cx.gate.require_for(cx.m, subject, &guard.writes),
    };
    if let Some(lock) = guard.lock {
        if let Some(refused) = lock_refusal(vmid, lock.held, lock.skiplock, lock.wording) {
            return Err(refused);
        }
    }
    let target = Target {
        vmid,
        node,
        planned: cx.m.plan().is_some_and(|p| p.is_planned(vmid)),
    };
    cx.effects.require(cx.m, &cx.gate, &target, &guard.writes)
}
