//! The run layer: what the tasks of one `ansible-playbook` run share through the action
//! plugin, each task being its own process. It comes in the private module arguments
//! (`_ferrox_*`) and goes back in private result keys, which the action plugin takes out
//! of the result and keeps in the run's temp dir (`plugins/plugin_utils/`):
//!
//! - the check-mode plan (`_ferrox_plan` in, `_ferrox_plan_effects` out; its meaning is
//!   [`ferrox_dryrun`]'s; `planning.py`, `plan_store.py`);
//! - the name index ([`name_index`]; `name_index.py`);
//! - the login ticket ([`ticket`]; `ticket_store.py`);
//! - the nodes the run's creates chose ([`placements`]; `placements.py`);
//! - the task's lines of progress for `-v` (`_ferrox_progress` out: calls the client
//!   repeated because PVE did not act on them; `binary_module.py` prints them).
//!
//! The protocol carries this state ([`ferrox_ansible::protocol::PrivateState`]) without
//! depending on it; modules reach it through [`SharedRunState`] on their `Module`.
//!
//! A layer of its own, and the top one, because this is where Ansible meets the client:
//! it declares the connection options and fills the client's plain `ConnectionParams`
//! ([`connection`]), passes the protocol's mask to the client as its `SecretSink`, and
//! hands the dry run's view to the client as its `ReadThrough`. Nothing in `common/`
//! depends on it, so the layers below stay free of one another; it knows no module.
//!
//! Invariants: a plan is read in check mode only; a ticket travels only in the private
//! `_ferrox_ticket` argument and result key, handed back after masking (sealed); a
//! task's writes are held to the privileges PVE will check before the first of them
//! ([`privileges::Gate`]), and in check mode a refusal is recorded in the plan.
//!
//! Entry points: [`read_private_state`] (the [`ferrox_ansible::protocol::PrivateStateReader`] the binary runs
//! with), [`SharedRunState`] (`m.connect`, `m.plan`, `m.plan_effect`, the name index),
//! [`connection::options`] and [`connection::FromOptions`],
//! [`driver`] (the one task driver every module runs on), [`vm_task`] (what tasks on one VM share: locate, read, refuse a locked VM,
//! buffer the check-mode effects and hand them to the run).

#![deny(missing_docs)]

pub mod check_mode_assume;
pub mod connection;
pub mod driver;
pub mod local_mode;
pub mod name_index;
pub mod placements;
pub mod privileges;
pub mod ticket;
pub mod vm_task;

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use ferrox_ansible::protocol::{Module, PrivateState};
use ferrox_dryrun::{Effect, PlanView, RunPlan, EFFECTS_KEY, PLAN_ARG};
use ferrox_pve_client::client::{ApiError, Client, ProgressSink, ReadThrough, SecretSink};

/// The result key carrying the task's lines of progress, which the action plugin prints
/// under `-v` (one per call the client repeated because PVE did not act on it).
pub const PROGRESS_KEY: &str = "_ferrox_progress";
use ferrox_pve_client::connection::ConnectionParams;

/// One task's share of the run: what came in, and what goes back.
#[derive(Default)]
pub struct RunState {
    /// The run's check-mode plan (check mode only).
    plan: Option<Arc<PlanView>>,
    /// What this check-mode task plans, for the plan (returned only when a plan came in).
    effects: Vec<Effect>,
    /// The run's name index, when the task reads the live cluster: not while a
    /// check-mode plan changes what it reads.
    names: Option<name_index::HandedIndex>,
    /// The index a fresh listing of this task gave, and when (returned with its age).
    names_out: Option<(Value, Instant)>,
    /// The run's ticket hand-over (absent: no reuse, e.g. an async task).
    ticket: Option<ticket::TicketHandover>,
    /// The run's placements so far (only a task that places gets them).
    placements: Option<Vec<placements::Reservation>>,
    /// The placement this task made, for the run.
    placed: Option<placements::Reservation>,
    /// The client's lines of progress ([`PROGRESS_KEY`]).
    progress: Arc<std::sync::Mutex<Vec<String>>>,
}

/// The [`ferrox_ansible::protocol::PrivateStateReader`] of the module binary: reads the private
/// arguments. A plan that cannot be read is the action plugin's bug and fails the task;
/// an unreadable index or ticket is only a shortcut not taken.
pub fn read_private_state(mut private: Map<String, Value>, check_mode: bool) -> Result<Box<dyn PrivateState>, String> {
    // Real runs never read a plan.
    let plan = match private.remove(PLAN_ARG).filter(|_| check_mode) {
        Some(value) => Some(Arc::new(PlanView::new(&RunPlan::from_value(&value)?))),
        None => None,
    };
    let names = private
        .remove(name_index::NAMES_ARG)
        .filter(|_| plan.as_ref().is_none_or(|p| p.is_empty()))
        .and_then(|v| name_index::HandedIndex::from_value(&v));
    let ticket = private
        .remove(ticket::TICKET_ARG)
        .and_then(|v| ticket::TicketHandover::from_value(&v));
    let placements = private
        .remove(placements::PLACEMENTS_ARG)
        .map(|v| placements::from_value(&v));
    Ok(Box::new(RunState {
        plan,
        names,
        ticket,
        placements,
        ..RunState::default()
    }))
}

impl PrivateState for RunState {
    fn hand_back(&mut self, result: &mut Map<String, Value>, failed: bool) {
        if self.plan.is_some() {
            // A failed task records only the refusal it predicted (it plans nothing else).
            let effects: Vec<&Effect> = self
                .effects
                .iter()
                .filter(|e| !failed || matches!(e, Effect::Refused { .. }))
                .collect();
            if !failed || !effects.is_empty() {
                result.insert(
                    EFFECTS_KEY.into(),
                    serde_json::to_value(&effects).unwrap_or(Value::Null),
                );
            }
        }
        // A listing is as good for the index when the task then failed.
        if let Some((mut index, listed_at)) = self.names_out.take() {
            index["age"] = Value::from(listed_at.elapsed().as_secs_f64());
            result.insert(name_index::NAMES_KEY.into(), index);
        }
        let progress = std::mem::take(&mut *self.progress.lock().unwrap_or_else(|e| e.into_inner()));
        if !progress.is_empty() {
            result.insert(PROGRESS_KEY.into(), Value::from(progress));
        }
        if let Some(placed) = self.placed.take().filter(|_| !failed) {
            result.insert(
                placements::PLACEMENT_KEY.into(),
                serde_json::to_value(placed).unwrap_or(Value::Null),
            );
        }
    }

    fn hand_back_sealed(&mut self, result: &mut Map<String, Value>) {
        if let Some(got) = self.ticket.as_ref().and_then(ticket::TicketHandover::got) {
            result.insert(ticket::TICKET_KEY.into(), got);
        }
    }
}

/// The run-wide state as a module uses it; without a [`RunState`] (a module run by
/// hand) there is no plan, no index and no kept ticket.
pub trait SharedRunState {
    /// The check-mode plan of the playbook run, for [`Client::seeing`].
    fn plan(&self) -> Option<Arc<PlanView>>;
    /// Records what this run would do, for the later tasks of the run (kept only in
    /// check mode with a plan; a no-op effect is dropped).
    fn plan_effect(&mut self, effect: Effect);
    /// The run's name index, when the action plugin keeps one and it may be used.
    fn name_index(&self) -> Option<&name_index::HandedIndex>;
    /// Returns the index of a listing made `listed_at` (only when the run keeps one).
    fn refresh_name_index(&mut self, index: Value, listed_at: Instant);
    /// The task's client: with password auth, through the run's ticket when it has one
    /// for this identity (one login per run); reads through the plan in check mode.
    fn connect(&mut self, conn: &ConnectionParams) -> Result<Client, ApiError>;
    /// The placements earlier tasks of the run made (empty without a run).
    fn placements(&self) -> &[placements::Reservation];
    /// Records the placement this task made, for the later tasks of the run.
    fn reserve_placement(&mut self, placed: placements::Reservation);
}

impl SharedRunState for Module {
    fn plan(&self) -> Option<Arc<PlanView>> {
        self.carried::<RunState>().and_then(|r| r.plan.clone())
    }

    fn plan_effect(&mut self, effect: Effect) {
        if let Some(run) = self.carried_mut::<RunState>().filter(|r| r.plan.is_some()) {
            if !effect.is_noop() {
                run.effects.push(effect);
            }
        }
    }

    fn name_index(&self) -> Option<&name_index::HandedIndex> {
        self.carried::<RunState>().and_then(|r| r.names.as_ref())
    }

    fn refresh_name_index(&mut self, index: Value, listed_at: Instant) {
        if let Some(run) = self.carried_mut::<RunState>().filter(|r| r.names.is_some()) {
            run.names_out = Some((index, listed_at));
        }
    }

    fn connect(&mut self, conn: &ConnectionParams) -> Result<Client, ApiError> {
        let plan = self.plan();
        let handover = self.carried::<RunState>().and_then(|r| r.ticket.as_ref());
        let run = handover.map(|h| h.for_connection(conn));
        let secrets: SecretSink = Arc::new(ferrox_ansible::protocol::register_secret);
        let client = Client::connect_keeping(conn, run, Some(secrets))?.seeing(plan.map(|p| p as Arc<dyn ReadThrough>));
        Ok(match self.carried::<RunState>() {
            Some(state) => {
                let lines = state.progress.clone();
                let sink: ProgressSink = Arc::new(move |line: &str| {
                    lines.lock().unwrap_or_else(|e| e.into_inner()).push(line.to_string());
                });
                client.reporting(sink)
            }
            None => client,
        })
    }

    fn placements(&self) -> &[placements::Reservation] {
        self.carried::<RunState>()
            .and_then(|r| r.placements.as_deref())
            .unwrap_or_default()
    }

    fn reserve_placement(&mut self, placed: placements::Reservation) {
        if let Some(run) = self.carried_mut::<RunState>() {
            run.placed = Some(placed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(private: Value, check_mode: bool) -> Result<Box<dyn PrivateState>, String> {
        read_private_state(private.as_object().unwrap().clone(), check_mode)
    }

    #[test]
    fn failure_carries_the_rendered_text() {
        use ferrox_ansible::protocol::Failure;
        let f: Failure = ApiError::http(403, "Permission check failed (/vms/100, VM.Allocate)", None).into();
        assert_eq!(f.msg, "403 Forbidden: Permission check failed (/vms/100, VM.Allocate)");
        let e = ferrox_pve_client::tasks::TaskError::Timeout {
            upid: "U".into(),
            waited: std::time::Duration::from_secs(30),
            last_line: Some("transferred 1 GiB".into()),
        };
        let f: Failure = e.into();
        assert!(f.msg.starts_with("timed out after 30s"));
        let f: Failure = anyhow::anyhow!("inner").context("outer").into();
        assert_eq!(f.msg, "outer: inner");
    }

    fn handed_back(carried: &mut Box<dyn PrivateState>, failed: bool) -> Map<String, Value> {
        let mut out = Map::new();
        carried.hand_back(&mut out, failed);
        carried.hand_back_sealed(&mut out);
        out
    }

    fn as_run(carried: &mut Box<dyn PrivateState>) -> &mut RunState {
        (carried.as_mut() as &mut dyn std::any::Any)
            .downcast_mut::<RunState>()
            .unwrap()
    }

    #[test]
    fn a_plan_is_read_in_check_mode_only_and_its_effects_go_back() {
        let plan = json!({"effects": [{"kind": "create", "vmid": 101, "node": "pve1", "config": {}}]});
        let mut c = state(json!({PLAN_ARG: plan}), true).unwrap();
        let run = as_run(&mut c);
        assert!(run.plan.as_ref().unwrap().is_planned(101));
        run.effects.push(Effect::Remove {
            vmid: 100,
            node: "pve1".into(),
        });
        assert_eq!(
            handed_back(&mut c, false)[EFFECTS_KEY],
            json!([{"kind": "remove", "vmid": 100, "node": "pve1"}])
        );
        assert!(
            handed_back(&mut c, true).get(EFFECTS_KEY).is_none(),
            "a failure returns only a refusal"
        );
        let mut real = state(json!({PLAN_ARG: plan}), false).unwrap();
        assert!(as_run(&mut real).plan.is_none(), "a real run reads no plan");
        assert!(handed_back(&mut real, false).is_empty());
        let msg = state(json!({PLAN_ARG: {"effects": 3}}), true).err().unwrap();
        assert!(msg.contains("_ferrox_plan"), "{msg}");
    }

    #[test]
    fn the_name_index_is_not_read_while_a_plan_changes_the_cluster() {
        let names = json!({"max_age": 60, "clusters": {}});
        let mut c = state(json!({name_index::NAMES_ARG: names}), false).unwrap();
        assert!(as_run(&mut c).names.is_some());
        let plan = json!({"effects": [{"kind": "remove", "vmid": 100, "node": "pve1"}]});
        let mut c = state(json!({name_index::NAMES_ARG: names, PLAN_ARG: plan}), true).unwrap();
        assert!(as_run(&mut c).names.is_none());
    }
}
