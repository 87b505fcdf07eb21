//! The `ferrox.proxmox.proxmox_kvm` module: QEMU/KVM virtual machines.
//!
//! Shape: declare the options ([`options`]), read them once into the typed task and its
//! wanted config keys ([`task`]); then each operation is a task of the one driver, whose
//! steps call: [`observe`], every read the decision needs (a read needed only in some
//! cases stays conditional: the API call counts are pinned), [`decide`] decides without
//! I/O (the actions, or the refusal in 1.6's words; each decision a table of tests),
//! [`execute`](mod@execute) writes unless in check mode, [`report`] words 1.6's result.
//!
//! Each operation is its own task of the one driver ([`ferrox_run::driver`]), which
//! refuses the lock, holds the writes to the privilege gate and keeps the effects,
//! rather than one task whose plan is per operation: what each reads, plans and reports
//! differs (a migration's view has nothing of an update's), so one task would match on
//! the operation in every step. Every operation runs on the driver's context
//! ([`driver::within`]): [`run`] lists the cluster once and places a new VM, then runs
//! the operation: `migrate` ([`migrate`]), `delete`/`revert` ([`config_keys`]), the
//! power states, `current`, `template` and `absent` ([`power_state`]), `present` on a
//! VM that exists ([`update`],
//! also the convergence of a clone that exists) and on a VM not there ([`create`], which
//! continues as the update when it adopts the VM a racing run made) and `clone`
//! ([`clone`]: the making of a clone, the move of one a run left undone, then the
//! update), tasks of the driver run with `driver::steps` on that context.
//!
//! An edited `memory:` on a VM that exists, with `update: true`, crosses six files, one
//! per step: `task/config.rs` (option → config key), this file (`run` → `present`),
//! `update.rs` (the task `UpdateExisting`: observe → plan → guard → check → predict or
//! execute → report), `observe/mod.rs` (the VM, its config and what is pending),
//! `decide/update.rs` (the warnings, what differs, the actions, the lock's wording),
//! `execute/mod.rs` (the plan run, the PUT and the read-back of what stays pending) and
//! `report/update.rs` (the message, `changes`, the diff, `mac`, `devices`).
//! [`converge`], [`checks`], [`plan`] and [`api`] are the libraries the steps call.
//!
//! The files stand in floors, top first, each importing only the floors below it, so
//! nothing imports this file. The internals are `pub(crate)` (only [`spec`] and [`run`]
//! leave the crate; the crate's lints warn of `unreachable_pub`), so what nothing uses is
//! a compile warning.
//!
//! - This file: [`run`] (the run: the listing, the placement, the dispatch; `present`
//!   goes to [`create`] or, for a VM that exists, to [`update`]).
//! - [`migrate`], [`config_keys`] (`delete`/`revert`), [`power_state`] (the power
//!   states, `current`, `template`, `absent`, and the guest wait after them), [`create`]
//!   (create or restore; a racer's VM adopted, then updated) and [`update`]: tasks of
//!   the one driver.
//! - [`clone`]: the clone's tasks of the driver (a new clone, or a rerun continuing a
//!   move to another node's local storage left undone), then converging the clone with
//!   the update task, whose result starts with the move's message.
//! - [`update`]: an existing VM left alone with what differs named, or with `update: true`
//!   converged by the task `update::UpdateExisting`, the one update path, also of a clone
//!   that exists.
//! - [`report`]: the results: messages, `changes`, `pending`, `actions`, the diff, `mac`
//!   and `devices` (from the config in hand: no I/O).
//! - [`placement`]: the node of a VM created without `node` (reads the listing, and a
//!   node's bridges and storages where the listing cannot tell).
//! - [`decide`]: pure decisions from the task and what [`observe`] read: `power`,
//!   `update` (a VM that exists), `create`, `clone`, `config_keys`, `migrate`, `efi`,
//!   each with its `*_tests.rs` table.
//! - [`execute`](mod@execute): `Op::carry_out`, how a task of the driver writes (the
//!   driver held the plan to the privilege gate and keeps its effects), and
//!   `Op::predict`, what check mode hands the driver instead; the config
//!   writes every create, clone and update ends with; one method per action, each with
//!   its own recovery of a lost answer (create and clone with a vmid taken meanwhile or
//!   a busy lock, config, pool move, power, migrate, remove, template).
//! - [`checks`]: refusals that read the cluster, run on a decision before any write:
//!   bridges, drive references, pool.
//! - [`observe`]: the cluster's listing, read once (`observe/listing.rs`), the VM the task
//!   names located in it, what each decision reads of it, one value per operation, the
//!   vmid of a new VM (`observe/vmid.rs`). What to read only in some cases is observe's
//!   own data (`observe/reads.rs`, pure; the decisions' tables hold the same
//!   conditions), so observe imports no decision: decide reads observe's values.
//! - [`plan`]: the actions a decision holds; a check run's plan as the effects later
//!   tasks see; the plan's actions as the writes the privilege check reads.
//! - [`guest_wait`]: `wait_for_agent`/`wait_for_ip`: what the wait relies on, read (and
//!   refused) with the power state's observation, and the wait after the power action.
//!   Both halves are one file below [`observe`], which calls the first.
//! - [`name_race`] (the re-look after a create that warns of a racer, and the listing
//!   that showed the new VM as the run's name index).
//! - [`options`] and [`docs`]: the options, declared once (the choices of `state`,
//!   `apply_pending`, ... are the enums of `task/choices.rs`, below both the declaration
//!   and the task that reads it), and the module's declaration
//!   ([`spec`]) with the docs' prose, notes, examples, returns.
//! - [`converge`]: the library of PVE's value comparisons the decisions call: current vs
//!   wanted config, keeping only what differs and losing nothing (disks change in place
//!   and only grow; NICs keep their MACs).
//! - [`step`]: [`step::Run`] (the task, the client, the privilege gate, the tag
//!   comparison: what every step is handed), [`step::Op`] (the task and the tag
//!   comparison: what every task of the driver holds) and [`step::Learned`] (the warnings and
//!   name index the run hands back to the module, failed or not), below every step that
//!   reads them.
//! - [`task`]: the task read once (`KvmTask`, `State`, `Operation`, `KeyEdit`, the clone,
//!   restore, migration, removal and guest-wait parts; the only reader of parameters,
//!   handed the declared options by [`run`]); `task/config.rs`: options to the VM config
//!   keys PVE expects (1.6's transformations, `extra_config` checked against the schema).
//! - [`vmid_range`] (the vmid a name takes: FNV-1a start, upward, wrapping; a stable
//!   interface, since a rerun must pick the same id).
//!
//! One arrow runs back up, in tests only: the task's tests (`task/testing.rs`, the
//! decision tables' fixture, and the declaration test) validate their options against
//! the module's declaration ([`docs::spec`]) as Ansible does before the task is read.
//! - [`api`]: every PVE call of the module, paths built once; `schema_coverage.rs`
//!   (test): every key of PVE's schema is an option or goes through `extra_config`.

// The crate doc maps the private modules (read with `cargo doc --document-private-items`).
#![allow(rustdoc::private_intra_doc_links)]

mod api;
mod checks;
mod clone;
mod config_keys;
mod converge;
mod create;
mod decide;
mod docs;
mod execute;
mod guest_wait;
mod migrate;
mod name_race;
mod observe;
mod options;
mod placement;
mod plan;
mod power_state;
mod report;
#[cfg(test)]
mod schema_coverage;
mod step;
mod task;
mod update;
mod vmid_range;

use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::tags::TagCase;
use ferrox_run::connection::{ConnectionParams, FromOptions};
use ferrox_run::driver;
use ferrox_run::driver::Cx;
use ferrox_run::name_index;
use ferrox_run::SharedRunState;

use observe::listing::Listing;
use step::{Learned, Op, Run};
use task::{KeyEdit, KvmTask, Operation, State};

pub use docs::spec;

/// One run: the task read once, then, on the driver's context ([`driver::within`]), the
/// cluster listed once, the node placed, and the operation (see [`task::Operation`]).
pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let conn = ConnectionParams::from_params(&m.params)?;
    let task = KvmTask::read(m.params.clone(), &options::all(), &conn, m.check_mode)?;
    driver::within(m, &conn, |cx| steps(cx, task))
}

/// The operation of `task`: the cluster listed once, the node placed (a VM
/// created without `node`), then the operation, a task of the driver (or two: a create
/// that adopts a racer's VM, a clone made or moved, continue as the update); the
/// warnings and the name index go back to the module, failed or not.
fn steps(cx: &mut Cx<'_>, task: KvmTask) -> Result<Output, Failure> {
    cx.client.set_retry_budget(task.timeout);
    // Sent, never refused on a version: the node that parses them decides.
    for warning in ferrox_pve_rules::propstring::versions::notes(&task.newer_keys, task.check_mode) {
        cx.warn(warning);
    }
    let mut listing = observe::listing::read(cx.m, &task, cx.conn, cx.client)?;
    let tag_case = TagCase::of_options(cx.gate.cluster_options());
    let reservations = cx.m.placements().to_vec();
    let placed = placement::place(&Run::on(cx, &task, &tag_case), &mut listing, &reservations)?;
    let placed_task = placed.as_ref().map_or(&task, |(t, _)| t);
    let mut learned = Learned::default();
    let result = operation(cx, placed_task, &mut listing, &tag_case, &mut learned);
    let Learned { warnings, listed } = learned;
    for w in warnings
        .into_iter()
        .chain(placed_task.assume.warnings())
        .chain(tag_case.warning())
    {
        cx.warn(w);
    }
    if let Some((cluster, listed_at)) = listed {
        cx.m.refresh_name_index(
            name_index::refreshed(&name_index::cluster_key(cx.conn), &cluster),
            listed_at,
        );
    }
    match (result, &placed) {
        (Ok(out), Some((_, placed))) => {
            let group = task.placement.as_ref().and_then(|p| p.group.as_deref());
            let listed = placement::listed_node(&out, &listing);
            let (out, reservation) = placement::finish(out, placed, listed, group, task.given_name());
            if let Some(r) = reservation {
                cx.m.reserve_placement(r);
            }
            Ok(out)
        }
        (Ok(out), None) if task.chooses_node() => {
            let listed = placement::listed_node(&out, &listing);
            Ok(placement::found_existing(out, listed))
        }
        (result, _) => result,
    }
}

/// The operation of `task` (placed) on the run's `listing`.
fn operation<'a>(
    cx: &mut Cx<'_>,
    task: &'a KvmTask,
    listing: &'a mut Listing,
    tag_case: &TagCase<'a>,
    learned: &mut Learned,
) -> Result<Output, Failure> {
    let op = || Op {
        task,
        tag_case: tag_case.clone(),
    };
    let keys = |edit, wanted: &'a [String], listing: &'a Listing| config_keys::ConfigKeys {
        op: op(),
        listing,
        edit,
        wanted,
    };
    match &task.operation {
        Operation::DeleteKeys(wanted) => driver::steps(cx, keys(KeyEdit::Delete, wanted, listing)),
        Operation::RevertKeys(wanted) => driver::steps(cx, keys(KeyEdit::Revert, wanted, listing)),
        Operation::Migrate => driver::steps(cx, migrate::Migrate { op: op(), listing }),
        Operation::Clone => clone::clone(cx, task, tag_case, listing, learned),
        Operation::State(State::Present) => present(cx, task, tag_case, listing, learned),
        Operation::State(state) => driver::steps(
            cx,
            power_state::PowerState {
                op: op(),
                listing,
                state: *state,
            },
        ),
    }
}

/// `state: present`: create (or restore) the VM ([`create`]); one that exists is
/// converged with `update: true`, else left alone with what differs named ([`update`]).
fn present<'a>(
    cx: &mut Cx<'_>,
    task: &'a KvmTask,
    tag_case: &TagCase<'a>,
    listing: &mut Listing,
    learned: &mut Learned,
) -> Result<Output, Failure> {
    match observe::target(&Run::on(cx, task, tag_case), listing)? {
        Some(guest) => {
            let to = update::To::Present(&guest);
            driver::steps(cx, update::UpdateExisting::new(task, listing, tag_case.clone(), to))
        }
        None => driver::steps(cx, create::Create::new(task, listing, tag_case.clone(), learned)),
    }
}
