//! The `ferrox.proxmox.proxmox_kvm` module: QEMU/KVM virtual machines.
//!
//! Shape: declare the options ([`options`]), read them once into the typed task and its
//! wanted config keys ([`task`]); then each operation runs observe → decide → execute →
//! report: [`observe`] makes every read the decision needs (a read needed only in some
//! cases stays conditional: the API call counts are pinned), [`decide`] decides without
//! I/O (the actions, or the refusal in 1.6's words; each decision a table of tests),
//! [`execute`] writes unless in check mode, [`report`] words 1.6's result.
//!
//! - [`options`] and [`docs`]: the options, declared once (the choices of `state`,
//!   `apply_pending`, ... are [`task`]'s enums), and the docs' prose, notes, examples,
//!   returns.
//! - [`task`]: the task read once (`KvmTask`, `State`, `Operation`, the clone, restore,
//!   migration, removal and guest-wait parts; the only reader of parameters, with its
//!   declaration test); `task/config.rs`: options to the VM config keys PVE expects
//!   (1.6's transformations, `extra_config` checked against the schema).
//! - [`context`]: what a run shares: the task, the client, the listing, the warnings,
//!   the effects buffer and the privilege gate, the run's name index.
//! - The operations, each a short flow over the four steps: [`states`] (power states,
//!   `current`, `template`, `absent`), [`present`] (create or restore; an existing VM left
//!   alone with what differs named, or with `update: true` converged by [`update`], the one
//!   update path, also of a clone that exists), [`clone`] and [`clone_move`] (a clone to
//!   another node's local storage, and a rerun continuing a move left undone),
//!   [`config_keys`] (`delete` and `revert`, one flow), [`migrate`], [`guest_wait`]
//!   (`wait_for_agent`/`wait_for_ip`).
//! - [`observe`]: the cluster's listing, read once (`observe/listing.rs`), the VM the task
//!   names located in it (`observe/locate.rs`), and what each decision reads of it, one
//!   value per operation.
//! - [`decide`]: pure decisions: `power`, `existing`, `update`, `create`, `clone`,
//!   `config_keys`, `migrate`, each with its `*_tests.rs` table.
//! - [`checks`]: refusals that read the cluster, run on a decision before any write:
//!   bridges, drive references, pool (and the pure EFI-without-OVMF check).
//! - [`converge`]: current vs wanted config, keeping only what differs and losing nothing
//!   (disks change in place and only grow; NICs keep their MACs).
//! - [`plan`]: the actions a decision holds; a check run's plan as the effects later
//!   tasks see; the plan's actions as the writes the privilege check reads.
//! - [`execute`]: `execute::execute`, the one way a flow writes (the plan held to the
//!   privilege gate, run, its check-mode effects buffered); one method per action, each
//!   with its own recovery of a lost answer
//!   (create and clone with a vmid taken meanwhile or a busy lock, config, pool move,
//!   power, migrate, remove, template).
//! - [`report`]: the results: messages, `changes`, `pending`, `actions`, the diff, `mac`
//!   and `devices`.
//! - [`name_race`] (the re-look after a create that warns of a racer), [`vmid_range`] (the
//!   vmid a name takes: FNV-1a start, upward, wrapping; a stable interface, since a rerun
//!   must pick the same id), [`placement`] (the node of a VM created without `node`).
//! - [`api`]: every PVE call of the module, paths built once; `schema_coverage.rs`
//!   (test): every key of PVE's schema is an option or goes through `extra_config`.

pub mod api;
pub mod checks;
pub mod clone;
pub mod clone_move;
pub mod config_keys;
pub mod context;
pub mod converge;
pub mod decide;
pub mod docs;
pub mod execute;
pub mod guest_wait;
pub mod migrate;
pub mod name_race;
pub mod observe;
pub mod options;
pub mod placement;
pub mod plan;
pub mod present;
pub mod report;
#[cfg(test)]
mod schema_coverage;
pub mod states;
pub mod task;
pub mod update;
pub mod vmid_range;

use ferrox_common::ansible::options::{ModuleSpec, Support};
use ferrox_common::ansible::protocol::{Failure, Module, Output};
use ferrox_common::run::connection::{ConnectionParams, FromOptions};
use ferrox_common::run::SharedRunState;

use context::Ctx;
use decide::config_keys::KeyEdit;
use task::{KvmTask, Operation, State};

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_kvm",
        short_description: docs::SHORT,
        description: docs::description(),
        version_added: "0.1.0",
        options: options::all(),
        rules: options::rules(),
        check_mode: (
            Support::Full,
            "Reads the live cluster and reports exactly the actions a real run would take, writing nothing.",
        ),
        diff_mode: (
            Support::Full,
            "Before and after of the config keys (or power state) that change; secrets masked.",
        ),
        notes: docs::notes(),
        seealso: vec![
            "ferrox.proxmox.proxmox_disk",
            "ferrox.proxmox.proxmox_nic",
            "ferrox.proxmox.proxmox_vm_info",
        ],
        examples: docs::EXAMPLES,
        returns: docs::RETURNS,
    }
}

/// One run: the task read once, then its operation (see [`task::Operation`]).
pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let conn = ConnectionParams::from_params(&m.params)?;
    let task = KvmTask::read(m.params.clone(), &conn, m.check_mode)?;
    let client = m.connect(&conn)?;
    client.set_retry_budget(task.timeout);
    for warning in settle_newer_keys(&client, &task)? {
        m.warn(warning);
    }
    let mut ctx = Ctx::new(m, &task, &conn, &client)?;
    // Without `node`, the node of a VM this task creates is chosen here.
    let reservations = m.placements().to_vec();
    let placed_task = placement::place(&mut ctx, &reservations)?;
    if let Some(placed) = &placed_task {
        ctx.task = placed;
    }
    let result = match &ctx.task.operation {
        Operation::Clone => clone::clone(&mut ctx),
        Operation::DeleteKeys(keys) => config_keys::edit(&mut ctx, KeyEdit::Delete, keys),
        Operation::RevertKeys(keys) => config_keys::edit(&mut ctx, KeyEdit::Revert, keys),
        Operation::Migrate => migrate::migrate(&mut ctx),
        Operation::State(State::Present) => present::present(&mut ctx),
        Operation::State(state) => states::handle(&mut ctx, *state),
    };
    for w in ctx
        .warnings
        .drain(..)
        .chain(ctx.task.assume.warnings())
        .chain(ctx.tag_case.warning())
    {
        m.warn(w);
    }
    // A failed run keeps only a refusal it predicted (see protocol).
    ctx.effects.hand_to(m);
    if let Some((index, listed_at)) = ctx.listed.take() {
        m.refresh_name_index(index, listed_at);
    }
    match (result, &ctx.placement) {
        (Ok(out), Some(placed)) => {
            let group = task.placement.as_ref().and_then(|p| p.group.as_deref());
            let (out, reservation) = placement::finish(out, placed, group, task.given_name());
            if let Some(r) = reservation {
                m.reserve_placement(r);
            }
            Ok(out)
        }
        (result, _) => result,
    }
}

/// The task's keys newer than the schema, decided by the cluster's release before any
/// write (check mode too): `GET /version` read once, and only when there is such a key.
fn settle_newer_keys(client: &ferrox_common::api::client::Client, task: &KvmTask) -> Result<Vec<String>, Failure> {
    let Some(first) = task.newer_keys.first() else {
        return Ok(Vec::new());
    };
    let version = api::cluster_version(client).map_err(|e| {
        Failure::new(format!(
            "Failed to read the cluster's version (GET /version), which decides whether {}: {} may be sent: {e}",
            first.at, first.key
        ))
    })?;
    ferrox_common::pve::propstring::versions::settle(&task.newer_keys, &version).map_err(Failure::new)
}
