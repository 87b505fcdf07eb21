//! Workers in two steps, as PVE's snapshot workers run: a start step at once (checks,
//! then the lock and `snapstate` written to the config, visible while the task runs),
//! the volume work for the task's duration, then an end step (commit or cleanup).
//!
//! A worker may first need a flock another task holds (the guest migration lock of a
//! rollback or snapshot delete): it waits for that task as PVE's `lock_file_full` waits,
//! for at most [`FLOCK_TIMEOUT_MS`], and otherwise fails with the caller's text before its
//! start step, so nothing is changed.

use crate::auth::Identity;
use crate::sim::SimInner;
use crate::state::Cluster;
use crate::tasks::{self, TaskCtx};
use std::sync::Arc;
use std::time::Duration;

/// PVE's flock timeout for the guest migration lock (`guest_migration_lock($vmid, 10, …)`).
pub const FLOCK_TIMEOUT_MS: u64 = 10_000;

/// A step of the worker: under the cluster lock, with the task's log and fault.
pub type Step = Box<dyn FnOnce(&mut Cluster, &mut TaskCtx) -> Result<(), String> + Send + 'static>;

/// A flock the worker needs before its start step: the task that holds it, and the error
/// the worker ends with when the holder runs past [`FLOCK_TIMEOUT_MS`].
pub struct Flock {
    pub holder: String,
    pub timeout_error: String,
}

/// Registers the task and runs `start` when it gets `flock` (at once without one), then
/// `end` after the task's duration. An injected `at_lock` fault fails it before `start`
/// (nothing changed); any other fault is left to `end` (`TaskCtx::check_fault`).
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    sim: &Arc<SimInner>,
    c: &mut Cluster,
    node: &str,
    kind: &str,
    id: &str,
    who: &Identity,
    flock: Option<Flock>,
    start: Step,
    end: Step,
) -> String {
    let (upid, action) = tasks::register(sim, c, node, kind, id, who);
    let dur = action
        .duration_ms
        .unwrap_or((sim.cfg.task_ms as f64 * tasks::duration_factor(kind)) as u64);
    let mut ctx = TaskCtx {
        log: vec![],
        fault: action.fail,
        at_lock: action.at_lock,
        leave: action.leave,
        warnings: 0,
    };
    let extra_warnings = action.warnings;
    let free_now = flock.as_ref().is_none_or(|f| !running(c, &f.holder));
    let mut start = Some(start);
    if free_now {
        // The worker takes its locks at once: its start step is visible right away.
        if let Err(e) = begin(c, &mut ctx, start.take().expect("start runs once")) {
            end_task(c, &upid, &mut ctx, Err(e), 0);
            sim.persist(c);
            return upid;
        }
    }
    let (sim2, upid2) = (sim.clone(), upid.clone());
    tokio::spawn(async move {
        if let (Some(start), Some(f)) = (start, flock) {
            let got = wait_for(&sim2, &upid2, &f.holder).await;
            let mut c = sim2.cluster();
            let res = match got {
                Some(true) => begin(&mut c, &mut ctx, start),
                Some(false) => {
                    ctx.log.push("trying to acquire lock...".into());
                    Err(f.timeout_error)
                }
                None => return,
            };
            if let Err(e) = res {
                end_task(&mut c, &upid2, &mut ctx, Err(e), 0);
                sim2.persist(&c);
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(dur)).await;
        let mut c = sim2.cluster();
        if !c.tasks.contains_key(&upid2) {
            return; // state was reset or replaced meanwhile
        }
        let res = end(&mut c, &mut ctx);
        end_task(&mut c, &upid2, &mut ctx, res, extra_warnings);
        sim2.persist(&c);
    });
    upid
}

fn running(c: &Cluster, upid: &str) -> bool {
    c.tasks.get(upid).is_some_and(|t| t.running)
}

/// The start step, unless an injected fault strikes at the config lock first.
fn begin(c: &mut Cluster, ctx: &mut TaskCtx, start: Step) -> Result<(), String> {
    match ctx.lock_fault() {
        Some(e) => Err(e),
        None => start(c, ctx),
    }
}

/// Waits for `holder` to end: `Some(true)` when it did within the flock timeout,
/// `Some(false)` when it still runs, `None` when the task was forgotten (state reset).
///
/// The timeout is time elapsed, as `lock_file_full`'s alarm counts it: counting the
/// polls instead would stretch it on a loaded machine, where each poll takes longer.
async fn wait_for(sim: &Arc<SimInner>, upid: &str, holder: &str) -> Option<bool> {
    let started = tokio::time::Instant::now();
    loop {
        {
            let c = sim.cluster();
            if !c.tasks.contains_key(upid) {
                return None;
            }
            if !running(&c, holder) {
                return Some(true);
            }
        }
        if started.elapsed() >= Duration::from_millis(FLOCK_TIMEOUT_MS) {
            return Some(false);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn end_task(c: &mut Cluster, upid: &str, ctx: &mut TaskCtx, res: Result<(), String>, extra_warnings: u32) {
    if res.is_ok() {
        for i in 0..extra_warnings {
            ctx.warn(format!("simulated warning {}", i + 1));
        }
    }
    if let Some(t) = c.tasks.get_mut(upid) {
        t.log.append(&mut ctx.log);
    }
    tasks::finish(c, upid, res, ctx.warnings);
}
