//! `delete` and `revert`, one flow: of the keys the task names, those the VM has (set,
//! or pending) are dropped; the rest are skipped, so both converge. Pure: the table is
//! `config_keys_tests.rs`.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Failure;
use ferrox_pve_rules::hotplug;
use ferrox_run::vm_task::{self, LockWording};
use serde_json::{Map, Value};

use crate::converge::text_of;
use crate::observe::KeysObserved;
use crate::plan::Action;
use crate::task::KeyEdit;

/// What the task does with the keys it names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// None of the keys is set (`delete`) or pending (`revert`): nothing to do.
    Unchanged(String),
    /// The one config write, and what the result says of it.
    Act(Box<KeysWrite>),
}

/// The config write of `delete` or `revert`, and what the result says of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeysWrite {
    pub(crate) action: Action,
    pub(crate) msg: String,
    pub(crate) diff: Diff,
    /// The keys the write drops.
    pub(crate) keys: Vec<String>,
    /// `delete` on a running VM: the deletions PVE's hotplug rules keep pending.
    pub(crate) predicted: Map<String, Value>,
}

/// The decision for `edit` of the keys `wanted` on the VM observed.
pub(crate) fn decide(
    edit: KeyEdit,
    wanted: &[String],
    skiplock: bool,
    observed: &KeysObserved,
) -> Result<Decision, Failure> {
    let (id, name) = (observed.vm.vmid, observed.name.as_str());
    let found = &observed.found;
    let keys: Vec<String> = wanted
        .iter()
        .filter(|k| found.contains_key(k.as_str()))
        .cloned()
        .collect();
    if keys.is_empty() {
        let wanted = wanted.join(", ");
        return Ok(Decision::Unchanged(match edit {
            KeyEdit::Delete => format!("Settings {wanted} are not set on VM {name} with vmid {id}"),
            KeyEdit::Revert => format!("No pending changes of {wanted} on VM {name} with vmid {id}"),
        }));
    }
    vm_task::refuse_locked(
        id,
        observed.lock.as_deref(),
        skiplock,
        LockWording::Action {
            prefix: &format!("{} {name} with vmid {id}: ", edit.unable()),
        },
    )?;
    let (diff, action, predicted) = match edit {
        KeyEdit::Delete => {
            let mut diff = Diff::new(format!("VM {id}"));
            for k in &keys {
                diff.change(k, found.get(k).map(|v| Value::String(text_of(v))), None);
            }
            let predicted = pending_deletes(&keys, found, observed.running);
            (diff, Action::DeleteKeys(keys.clone()), predicted)
        }
        KeyEdit::Revert => {
            let mut diff = Diff::new(format!("VM {id} pending"));
            for k in &keys {
                diff.change(k, found.get(k).cloned(), None);
            }
            (diff, Action::RevertKeys(keys.clone()), Map::new())
        }
    };
    Ok(Decision::Act(Box::new(KeysWrite {
        action,
        msg: format!("Settings has {} on VM {name} with vmid {id}", edit.done()),
        diff,
        keys,
        predicted,
    })))
}

/// The deletions of `keys` a running VM keeps pending until it restarts (PVE's hotplug
/// rules, read from the config's `hotplug`).
fn pending_deletes(keys: &[String], config: &Map<String, Value>, running: bool) -> Map<String, Value> {
    let features = hotplug::features(config.get("hotplug").map(text_of).as_deref());
    keys.iter()
        .filter(|k| {
            running && hotplug::stays_pending(k, config.get(k.as_str()).map(text_of).as_deref(), None, &features)
        })
        .map(|k| (k.clone(), Value::String("(delete)".into())))
        .collect()
}

/// Whether the pending changes are read back after the write: a real run reads what a
/// running VM keeps pending (`delete`), or what is left pending (`revert`); a check run
/// of `delete` reads what was pending already, to add its predictions to.
pub(crate) fn reads_back(edit: KeyEdit, running: bool, check_mode: bool) -> bool {
    match edit {
        KeyEdit::Delete => running,
        KeyEdit::Revert => !check_mode,
    }
}

/// What waits for a restart after the write: `read_back` (see [`reads_back`]) with, in
/// check mode, what the run predicts.
pub(crate) fn pending_after(
    edit: KeyEdit,
    decision_keys: &[String],
    predicted: Map<String, Value>,
    observed: &KeysObserved,
    read_back: Option<Map<String, Value>>,
    check_mode: bool,
) -> Map<String, Value> {
    match (edit, read_back) {
        (KeyEdit::Delete, Some(mut all)) if check_mode => {
            // A real run reads back what was already pending too.
            all.extend(predicted);
            all.retain(|k, v| !(decision_keys.contains(k) && v != "(delete)"));
            all.sort_keys();
            all
        }
        (_, Some(read)) => read,
        (KeyEdit::Delete, None) => predicted,
        // The pending changes the task leaves alone stay pending.
        (KeyEdit::Revert, None) => observed
            .found
            .iter()
            .filter(|(k, _)| !decision_keys.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}
