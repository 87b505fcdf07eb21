//! The `ferrox.proxmox.proxmox_kvm` module: QEMU/KVM virtual machines.
//!
//! Shape: declare the options ([`options`]), read them once into the typed task and its
//! wanted config keys ([`task`]); then each operation runs observe → decide → execute →
//! report: [`observe`] makes every read the decision needs (a read needed only in some
//! cases stays conditional: the API call counts are pinned), [`decide`] decides without
//! I/O (the actions, or the refusal in 1.6's words; each decision a table of tests),
//! [`execute`](mod@execute) writes unless in check mode, [`report`] words 1.6's result.
//!
//! `migrate: true` is a task of the one driver ([`ferrox_run::driver`]; [`migrate`]): the
//! driver connects, refuses the lock, holds the writes to the privilege gate and keeps
//! the effects. Each operation is to be its own `driver::Task` rather than one task
//! whose plan is per operation: what each reads, plans and reports differs (a
//! migration's view has nothing of an update's), so one task would match on the
//! operation in every step. The other operations still run in the steps of this file
//! (the clone's in [`clone`], the update of a VM that exists in [`update`]), each write
//! through `execute::execute`, which holds its plan to the gate and buffers its effects
//! itself. What keeps them there is what the driver does not do yet: a check run reads
//! after the plan (a running VM's pending changes, the guest agent's answer), one task
//! holds several plans to the gate (a clone moved to its node, then converged; a create
//! that finds its racer's VM, then converges it), and the run's name index and
//! placement reservation are handed to the module after the result.
//!
//! An edited `memory:` on a VM that exists, with `update: true`, crosses six files, one
//! per step: `task/config.rs` (option → config key), this file (`run` → `present`),
//! `update.rs` (`existing` → `converge_existing` → `apply`), `observe/mod.rs` (the VM, its config
//! and what is pending), `decide/update.rs` (the warnings, what differs, the actions),
//! `execute/mod.rs` (the gate, the plan run, the PUT and the read-back of what stays
//! pending) and `report/update.rs` (the message, `changes`, the diff, `mac`, `devices`).
//! [`converge`], [`checks`], [`plan`] and [`api`] are the libraries the steps call.
//!
//! The files stand in floors, top first, each importing only the floors below it, so
//! nothing imports this file. The internals are `pub(crate)` (only [`spec`] and [`run`]
//! leave the crate; the crate's lints warn of `unreachable_pub`), so what nothing uses is
//! a compile warning.
//!
//! - This file: [`run`] (the run and its dispatch) and the drivers of `present` (create or
//!   restore; a VM that exists goes to [`update`]), the power states (`current`,
//!   `template`, `absent`), `delete`/`revert` and `migrate`.
//! - [`clone`]: the clone's driver (a new clone, or a rerun continuing a move to another
//!   node's local storage left undone, then converging the clone; the update's clauses
//!   reach its message as a value, [`update::Converged`]).
//! - [`update`]: an existing VM left alone with what differs named, or with `update: true`
//!   converged by `update::converge_existing`, the one update path, also of a clone that
//!   exists.
//! - [`report`]: the results: messages, `changes`, `pending`, `actions`, the diff, `mac`
//!   and `devices` (from the config in hand: no I/O).
//! - [`placement`]: the node of a VM created without `node` (reads the listing, and a
//!   node's bridges and storages where the listing cannot tell).
//! - [`decide`]: pure decisions from the task and what [`observe`] read: `power`,
//!   `update` (a VM that exists), `create`, `clone`, `config_keys`, `migrate`, `efi`,
//!   each with its `*_tests.rs` table.
//! - [`execute`](mod@execute): `execute::execute`, the one way a driver writes (the plan
//!   held to the privilege gate, run, its check-mode effects kept), and the config
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
//!   comparison: what every step is handed) and [`step::Learned`] (the warnings,
//!   check-mode effects and name index the run hands back to the module, failed or not),
//!   below every step that reads them.
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
mod converge;
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
use ferrox_run::name_index;
use ferrox_run::privileges::Gate;
use ferrox_run::SharedRunState;

use api::Vm;
use checks::{check_bridges, check_drives, check_pool};
use decide::config_keys::KeysWrite;
use execute::execute;
use observe::listing::Listing;
use plan::{Allocation, Plan};
use report::update::with_mac_and_devices;
use step::{Learned, Run};
use task::{KeyEdit, KvmTask, Operation, State};

pub use docs::spec;

/// One run: the task read once, then its operation (see [`task::Operation`]): `migrate`
/// a task of the one driver ([`migrate`]), the others the steps of this file.
pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let conn = ConnectionParams::from_params(&m.params)?;
    let task = KvmTask::read(m.params.clone(), &options::all(), &conn, m.check_mode)?;
    match task.operation {
        Operation::Migrate => driver::run(m, migrate::Migrate(task)),
        _ => steps(m, &conn, task),
    }
}

/// The operations not yet run by the driver: the cluster listed once, the node placed
/// (a VM created without `node`), then the operation; the warnings, the check-mode
/// effects and the name index go back to the module, failed or not.
fn steps(m: &mut Module, conn: &ConnectionParams, task: KvmTask) -> Result<Output, Failure> {
    let client = m.connect(conn)?;
    client.set_retry_budget(task.timeout);
    // Sent, never refused on a version: the node that parses them decides.
    for warning in ferrox_pve_rules::propstring::versions::notes(&task.newer_keys, task.check_mode) {
        m.warn(warning);
    }
    let mut listing = observe::listing::read(m, &task, conn, &client)?;
    let gate = Gate::new(&client, conn);
    let tag_case = TagCase::of_options(gate.cluster_options());
    let mut run = Run {
        client: &client,
        gate: &gate,
        task: &task,
        tag_case,
    };
    let mut learned = Learned::default();
    let reservations = m.placements().to_vec();
    let placed = placement::place(&run, &mut listing, &reservations)?;
    if let Some((placed_task, _)) = &placed {
        run.task = placed_task;
    }
    let l = &mut learned;
    let result = match &run.task.operation {
        Operation::Clone => clone::clone(&run, &mut listing, l),
        Operation::DeleteKeys(keys) => config_keys(&run, &listing, l, KeyEdit::Delete, keys),
        Operation::RevertKeys(keys) => config_keys(&run, &listing, l, KeyEdit::Revert, keys),
        Operation::Migrate => unreachable!("migrate runs on the driver (run)"),
        Operation::State(State::Present) => present(&run, &mut listing, l),
        Operation::State(state) => power_state(&run, &listing, l, *state),
    };
    let Learned {
        warnings,
        mut effects,
        listed,
    } = learned;
    for w in warnings
        .into_iter()
        .chain(run.task.assume.warnings())
        .chain(run.tag_case.warning())
    {
        m.warn(w);
    }
    // A failed run keeps only a refusal it predicted (see protocol).
    effects.hand_to(m);
    if let Some((cluster, listed_at)) = listed {
        m.refresh_name_index(
            name_index::refreshed(&name_index::cluster_key(conn), &cluster),
            listed_at,
        );
    }
    match (result, &placed) {
        (Ok(out), Some((_, placed))) => {
            let group = task.placement.as_ref().and_then(|p| p.group.as_deref());
            let listed = placement::listed_node(&out, &listing);
            let (out, reservation) = placement::finish(out, placed, listed, group, task.given_name());
            if let Some(r) = reservation {
                m.reserve_placement(r);
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

/// `state: present`: create (or restore) the VM; one that exists is converged with
/// `update: true`, else left alone with what differs named.
fn present(run: &Run, listing: &mut Listing, learned: &mut Learned) -> Result<Output, Failure> {
    match observe::target(run, listing)? {
        Some(guest) => update::existing(run, listing, learned, &guest),
        None => create(run, listing, learned),
    }
}

/// A new VM (or a restore from `archive`).
fn create(run: &Run, listing: &mut Listing, learned: &mut Learned) -> Result<Output, Failure> {
    let task = run.task;
    let node = decide::create::node(task, &listing.nodes)?;
    learned.warnings.extend(decide::create::warning(task));
    check_bridges(run, &node, task.config.iter())?;
    check_drives(run, listing, &node, task.config.iter())?;
    check_pool(run)?;
    let (vmid, allocation) = observe::vmid::choose(run, listing, task.vmid)?;
    let may_race = allocation == Allocation::NextId;
    let (mut plan, diff) = decide::create::plan(task, Vm { node, vmid }, allocation)?;
    let name = observe::name_of(task, None);
    let mut outcome = execute(run, listing, learned, &mut plan, name.clone())?;
    if let Some(found) = outcome.adopted {
        // Another run created this name at the same moment: that VM is the one.
        listing.learn_name(&found, &name, task.pool.as_ref());
        return present(run, listing, learned);
    }
    let vm = plan.vm.clone();
    name_race::after_create(run, may_race, &vm, outcome.listing.take(), learned);
    let out = Output::changed(format!("VM {name} with vmid {} deployed", vm.vmid))
        .with("vmid", vm.vmid)
        .with("actions", plan.describe())
        .with_diff(diff);
    let out = outcome.with_pending(out);
    let config = observe::made_config(run, listing, &vm, outcome.config.take())?;
    Ok(with_mac_and_devices(
        out,
        &learned.effects,
        task.check_mode,
        vm.vmid,
        config.as_ref(),
    ))
}

/// A power state, `current`, `template` or `absent`; then, with `wait_for_agent` or
/// `wait_for_ip`, the wait for the guest.
fn power_state(run: &Run, listing: &Listing, learned: &mut Learned, state: State) -> Result<Output, Failure> {
    use decide::power::{self, Decision};
    let Some(observed) = observe::power_state(run, listing, state, &mut learned.warnings)? else {
        return power::not_found(run.task, state).map(report::power::already_absent);
    };
    let decision = power::decide(run.task, state, &observed)?;
    let (acted, waits) = match &decision {
        Decision::Act { .. } => (true, true),
        Decision::AlreadyThere(_) => (false, true),
        _ => (false, false),
    };
    let done = match &decision {
        Decision::Act { actions, .. } => {
            let mut plan = Plan::of(observed.vm.clone(), actions.clone());
            execute(run, listing, learned, &mut plan, observed.name.clone())?;
            plan.describe()
        }
        _ => Vec::new(),
    };
    let out = report::power::output(state, &observed, decision, done);
    if !waits {
        return Ok(out);
    }
    guest_wait::after_power(
        run,
        observed.waiting.as_ref(),
        out,
        acted,
        acted && state == State::Restarted,
    )
}

/// `delete` and `revert`: drops the keys `wanted` of the VM the task names, deleted from
/// its config or their pending changes reverted; what stays pending read back.
fn config_keys(
    run: &Run,
    listing: &Listing,
    learned: &mut Learned,
    edit: KeyEdit,
    wanted: &[String],
) -> Result<Output, Failure> {
    use decide::config_keys::{self as keys, Decision};
    let observed = observe::config_keys(run, listing, edit)?;
    let (id, check_mode) = (observed.vm.vmid, run.task.check_mode);
    let KeysWrite {
        action,
        msg,
        diff,
        keys,
        predicted,
    } = match keys::decide(edit, wanted, run.task.skiplock, &observed)? {
        Decision::Unchanged(msg) => return Ok(report::config_keys::unchanged(msg, id)),
        Decision::Act(write) => *write,
    };
    let mut plan = Plan::new(observed.vm.clone());
    plan.push(action);
    if edit == KeyEdit::Delete {
        plan.known.current = Some(observed.found.clone());
        plan.known.pending_deletes = predicted.keys().cloned().collect();
    }
    execute(run, listing, learned, &mut plan, observed.name.clone())?;
    let read_back = if keys::reads_back(edit, observed.running, check_mode) {
        Some(observe::pending_after_keys(run, edit, &observed)?)
    } else {
        None
    };
    let pending = keys::pending_after(edit, &keys, predicted, &observed, read_back, check_mode);
    Ok(report::config_keys::changed(msg, id, plan.describe(), diff, pending))
}
