//! The check-mode plan of one `ansible-playbook` run: the effects earlier check-mode
//! tasks would have had, so every later task plans against the cluster as they would
//! leave it (the disk task finds the VM the create task only pretended to make).
//!
//! A layer of its own because what an effect means is decided once, here, and tested
//! without Ansible or a cluster: the controller-side shim appends effects without
//! understanding them, and the modules only record them. It knows neither Ansible nor the
//! run layer: it reads the cluster only through the [`ReadThrough`](ferrox_pve_client::client::ReadThrough)
//! it implements for the client ([`PlanView`]), and what PVE would decide comes from the
//! rules.
//!
//! Invariants: applying the plan is pure ([`overlay`]: PVE's answer in, the answer with
//! the plan applied out); a vmid a planned create used stays reserved for the whole run,
//! even when the VM is planned away again; values only PVE decides stay
//! [`UNKNOWN`] rather than guessed. A real run never reads a plan (the run layer takes
//! `_ferrox_plan` in check mode only), and a client reading through one refuses writes.
//!
//! Entry points: [`RunPlan::from_value`] (the `_ferrox_plan` argument), [`PlanView::new`]
//! (handed to the client's `seeing`), [`PlanView::of`] (the view a client reads through),
//! and [`Effect`] for what a task records.
//!
//! - [`effect`]: one planned effect (create, config change, power, template, migrate,
//!   remove, pool membership, a snapshot, a pool and its storages), the JSON the controller keeps.
//! - [`state`]: the [`RunPlan`] (effects in order) folded into each VM's planned state,
//!   and the vmids it reserved.
//! - [`overlay`]: PVE's answers with the plan applied (pure).
//!   A file put on a storage or removed (`proxmox_template`) is a [`PlannedVolume`],
//!   shown in the storage's content listing.
//! - `pools`: a pool's read and the pool listing with the plan's pools, VM members and
//!   storages (pure).
//! - [`snapshots`]: a VM's snapshot list with the plan's snapshots taken, removed and
//!   rolled back to (pure).
//! - [`view`]: the reads of a check-mode run routed through the overlay.
//! - [`unknown`]: values only PVE decides, reported as `(known after apply)`.
//!
//! The wire contract with the controller-side action plugins: the plan comes in the
//! private module argument `_ferrox_plan` (check mode only); the effects a run plans go
//! back in the private result key `_ferrox_plan_effects`, which the action plugin adds
//! to the plan and removes from the result. Without them, nothing here is used.

#![deny(missing_docs)]

pub mod effect;
pub mod overlay;
mod pools;
pub mod snapshots;
pub mod state;
pub mod view;

pub use effect::{Effect, SnapshotAction};
pub use ferrox_pve_rules::unknown;
pub use state::{PlannedVm, PlannedVolume, RunPlan};
pub use unknown::UNKNOWN;
pub use view::PlanView;

/// The module argument carrying the plan.
pub const PLAN_ARG: &str = "_ferrox_plan";
/// The result key carrying the effects a check-mode run planned.
pub const EFFECTS_KEY: &str = "_ferrox_plan_effects";
