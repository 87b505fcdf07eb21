//! A new clone, decided: refused when PVE would refuse it (a linked clone of a VM that
//! is not a template), the clone call's form, and its actions: the clone, waiting until
//! it is listed, the move a route to another node's local storage needs, then the rest
//! of the task, compared again once the clone exists. Pure: the table is
//! `clone_tests.rs`; the source's config, the route and the vmid are read by the driver
//! ([`crate::clone`]).

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Failure;
use ferrox_cluster::vm::Guest;
use serde_json::Value;

use crate::api::Vm;
use crate::converge::Changes;
use crate::decide::clone_route::{self, Route};
use crate::observe::vm_of;
use crate::plan::{Action, Allocation, Plan};
use crate::task::{Config, KvmTask};

/// PVE makes linked clones of templates only; found out before anything is written.
pub(crate) fn refuse_linked_of_non_template(task: &KvmTask, source: &Guest) -> Result<(), Failure> {
    if task.clone.full || source.template {
        return Ok(());
    }
    Err(Failure::new(format!(
        "Unable to clone vm {} from vmid {}: VM {} is not a template, and a linked clone (full: false) needs one. Convert it first (state: template), or make a full clone (full: true)",
        task.name.as_deref().unwrap_or_default(),
        source.vmid,
        source.vmid
    ))
    .with("vmid", source.vmid))
}

/// Whether the source's config must be read: the clone's start in check mode, where its
/// disks are for a clone to another node, what the rest of the task is compared with.
pub(crate) fn reads_source_config(task: &KvmTask, check_mode: bool, node: &str, source_node: &str) -> bool {
    check_mode || node != source_node || task.config.keys().any(|k| k != "name")
}

/// The config keys applied to the clone once it exists (its name is the clone call's).
pub(crate) fn wanted(task: &KvmTask) -> Config {
    let mut wanted = task.config.clone();
    wanted.remove("name");
    wanted
}

/// The plan of a new clone `newid` of `source` and its diff; `changes`: the rest of the
/// task ([`wanted`]) compared with the source's config, when there is any.
pub(crate) fn plan(
    task: &KvmTask,
    source: &Guest,
    newid: u32,
    allocation: Allocation,
    route: Option<&Route>,
    changes: Option<Changes>,
) -> (Plan, Diff) {
    let made_on = route.map_or_else(
        || task.clone.target.clone().unwrap_or_else(|| source.node.to_string()),
        |r| r.via.clone(),
    );
    let mut plan = Plan::new(Vm {
        node: made_on,
        vmid: newid,
    });
    let mut diff = Diff::new(format!("VM {newid}"));
    diff.change("clone of", None, Some(Value::from(source.vmid)));
    let form = match route {
        Some(r) => clone_route::form(form(task), r),
        None => form(task),
    };
    plan.push(Action::Clone {
        source: vm_of(source),
        form,
        allocation,
    });
    plan.push(Action::WaitListed);
    if let Some(r) = route {
        diff.change("node", None, Some(Value::from(r.to.clone())));
        plan.push(Action::MoveClone {
            from: r.via.clone(),
            to: r.to.clone(),
            targetstorage: r.targetstorage.clone(),
        });
    }
    let Some(changes) = changes else {
        return (plan, diff);
    };
    for (k, v) in &changes.set {
        diff.change(
            k,
            changes.before.get(k).cloned().flatten().map(Value::String),
            Some(Value::String(v.clone())),
        );
    }
    plan.push(Action::Converge {
        wanted: wanted(task),
        changes,
        digest: None,
        recompute: true,
    });
    (plan, diff)
}

/// The clone call's own parameters (besides `newid`).
pub(crate) fn form(task: &KvmTask) -> Vec<(String, String)> {
    let clone = &task.clone;
    let mut form = vec![("full".to_string(), u8::from(clone.full).to_string())];
    if let Some(n) = task.given_name() {
        form.push(("name".into(), n.into()));
    }
    for (param, value) in [
        ("pool", &task.pool),
        ("snapname", &clone.snapname),
        ("target", &clone.target),
    ] {
        if let Some(v) = value {
            form.push((param.into(), v.clone()));
        }
    }
    // PVE refuses storage and format for linked clones, with a message that says so.
    if let Some(st) = &task.storage {
        form.push(("storage".into(), st.clone()));
    }
    if let Some(f) = &clone.format {
        form.push(("format".into(), f.clone()));
    }
    if let Some(limit) = task.bwlimit {
        form.push(("bwlimit".into(), limit.to_string()));
    }
    form
}
