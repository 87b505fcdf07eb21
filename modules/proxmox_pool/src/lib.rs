//! The `ferrox.proxmox.proxmox_pool` module: a resource pool made, its comment kept, or
//! the pool removed.
//!
//! Option-compatible with community.proxmox 1.6 (messages included), with `comment`
//! that converges and a delete refused before any write while the pool has members or
//! child pools, naming them. The pool is read and written as `ferrox_cluster::pools`
//! names it (`/pools?poolid=` for a nested pool, `/pools/{poolid}` for any other).
//!
//! - [`plan`]: the decision, pure, with its table tests.

mod docs;
mod plan;

use ferrox_ansible::diff::Diff;
use ferrox_ansible::options::read::{Choice, Reader};
use ferrox_ansible::options::{ModuleSpec, Opt, Params, Rules, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::pools;
use ferrox_dryrun::Effect;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::connection;
use ferrox_run::driver::{self, Cx, Decided, Guard, Outcome, Prediction, Subject, Task};
use serde_json::json;

use plan::{Action, Pool};

/// `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Present,
    Absent,
}

impl Choice for State {
    const ALL: &'static [(&'static str, State)] = &[("present", State::Present), ("absent", State::Absent)];
}

/// The module's options, declared once.
fn options() -> Vec<Opt> {
    let mut options = connection::options();
    options.extend([
        Opt::str("poolid").aliases(&["name"]).required().desc("The pool ID; V(parent/child) for a nested pool (Proxmox VE 8.1 and later)."),
        Opt::str("comment").desc("The pool's description. Set on an existing pool too (community.proxmox 1.6 ignored it then); unset leaves it as it is. Ignored with O(state=absent)."),
        Opt::str("state")
            .default(State::ALL[0].0)
            .choices(&State::names())
            .desc("Whether the pool exists. A pool is removed only when it has no members and no child pools."),
    ]);
    options
}

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_pool",
        short_description: "Pool management for Proxmox VE cluster",
        description: docs::description(),
        version_added: "0.2.0",
        options: options(),
        rules: Rules::default().merge(connection::rules()),
        check_mode: (
            Support::Full,
            "Reads the pool and reports exactly what a real run would change, writing nothing.",
        ),
        diff_mode: (
            Support::Full,
            "Shows whether the pool exists and its comment, before and after.",
        ),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_pool_member"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = PoolTask::from_params(&m.params);
    driver::run(m, task)
}

/// The task in typed form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PoolTask {
    pub poolid: String,
    pub comment: Option<String>,
    pub absent: bool,
}

impl PoolTask {
    /// The task's options, read once through [`Reader`] (defaults come from the
    /// declaration only).
    pub(crate) fn from_params(params: &Params) -> PoolTask {
        let opts = options();
        Self::read(&Reader::new(params.clone(), &opts))
    }

    fn read(r: &Reader<'_>) -> PoolTask {
        PoolTask {
            poolid: r.str("poolid").unwrap_or_default().to_string(),
            comment: r.str("comment").map(str::to_string),
            absent: r.choice::<State>("state") == State::Absent,
        }
    }
}

/// What the task read.
#[derive(Debug)]
pub struct Seen {
    label: String,
    pool: Option<Pool>,
}

#[derive(Debug)]
pub struct Decision(Option<Action>);

impl Decided for Decision {
    fn changes(&self) -> bool {
        self.0.is_some()
    }
}

impl PoolTask {
    /// The pool, `None` when it does not exist; for a deletion, its child pools too.
    fn read_pool(&self, cx: &Cx<'_>) -> Result<Option<Pool>, Failure> {
        let id = &self.poolid;
        let Some(pool) =
            pools::read(cx.client, id).map_err(|e| Failure::new(format!("Unable to retrieve pool {id}: {e}")))?
        else {
            return Ok(None);
        };
        let children = if self.absent {
            let ids = pools::ids(cx.client).map_err(|e| Failure::new(format!("Unable to list the pools: {e}")))?;
            pools::children(&ids, id).into_iter().map(str::to_string).collect()
        } else {
            Vec::new()
        };
        Ok(Some(Pool {
            comment: pool.comment,
            members: pool.members,
            children,
        }))
    }
}

impl Task for PoolTask {
    type Seen = Seen;
    type Plan = Decision;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        Ok(Seen {
            label: format!("pool {}", self.poolid),
            pool: self.read_pool(cx)?,
        })
    }

    fn plan(&self, seen: &Seen) -> Result<Decision, Failure> {
        plan::plan(&self.poolid, self.absent, self.comment.as_deref(), seen.pool.as_ref())
            .map(Decision)
            .map_err(|e| Failure::new(e).with("poolid", &self.poolid))
    }

    fn guard<'s>(&self, seen: &'s Seen, plan: &Decision) -> Guard<'s> {
        let what = match plan.0 {
            Some(Action::Create { .. }) => "create",
            Some(Action::Comment(_)) => "comment",
            _ => "remove",
        };
        Guard {
            subject: Subject::Named(&seen.label),
            lock: None,
            writes: vec![Write::Pool {
                poolid: self.poolid.clone(),
                what,
            }],
        }
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &Seen, plan: &Decision) -> Result<Prediction, Failure> {
        let (comment, removed) = match &plan.0 {
            Some(Action::Create { comment }) => (comment.clone(), false),
            Some(Action::Comment(c)) => (Some(c.clone()), false),
            _ => (None, true),
        };
        Ok(Prediction {
            effects: vec![Effect::PoolConfig {
                poolid: self.poolid.clone(),
                comment,
                removed,
            }],
            warnings: Vec::new(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, _seen: &Seen, plan: &Decision) -> Result<(), Failure> {
        let id = &self.poolid;
        let (path, mut form) = pools::address(id);
        let result = match &plan.0 {
            Some(Action::Create { comment }) => {
                let mut form = vec![("poolid", id.clone())];
                if let Some(c) = comment {
                    form.push(("comment", c.clone()));
                }
                cx.client
                    .post("/pools", &form)
                    .map_err(|e| format!("Failed to create pool with ID {id}: {e}"))
            }
            Some(Action::Comment(c)) => {
                form.push(("comment", c.clone()));
                cx.client
                    .put(&path, &form)
                    .map_err(|e| format!("Failed to update pool with ID {id}: {e}"))
            }
            Some(Action::Delete) => {
                let query: Vec<(&str, String)> = form;
                cx.client
                    .delete(&path, &query)
                    .map_err(|e| format!("Failed to delete pool with ID {id}: {e}"))
            }
            None => return Ok(()),
        };
        result.map(|_| ()).map_err(|e| Failure::new(e).with("poolid", id))
    }

    fn report(self, _cx: &mut Cx<'_>, seen: &Seen, plan: &Decision, outcome: Outcome<()>) -> Result<Output, Failure> {
        let id = &self.poolid;
        let changed = !matches!(outcome, Outcome::Unchanged);
        let msg = match (&plan.0, self.absent) {
            (Some(Action::Create { .. }), _) => format!("Pool {id} successfully created"),
            (Some(Action::Comment(_)), _) => format!("Pool {id} comment updated"),
            (Some(Action::Delete), _) => format!("Pool {id} successfully deleted"),
            (None, false) => format!("Pool {id} already exists"),
            (None, true) => format!("Pool {id} doesn't exist"),
        };
        let state = |exists: bool, comment: Option<&str>| {
            let mut m = serde_json::Map::new();
            m.insert("state".into(), json!(if exists { "present" } else { "absent" }));
            if let Some(c) = comment.filter(|_| exists) {
                m.insert("comment".into(), json!(c));
            }
            m
        };
        let before_comment = seen.pool.as_ref().and_then(|p| p.comment.as_deref());
        let after = match &plan.0 {
            Some(Action::Create { comment }) => state(true, comment.as_deref()),
            Some(Action::Comment(c)) => state(true, Some(c)),
            Some(Action::Delete) => state(false, None),
            None => state(seen.pool.is_some(), before_comment),
        };
        let mut diff = Diff::new(format!("pool {id}"));
        diff.before = state(seen.pool.is_some(), before_comment);
        diff.after = after;
        let changes: Vec<String> = match &plan.0 {
            Some(Action::Create { .. }) => vec![format!("create pool {id}")],
            Some(Action::Comment(c)) => vec![format!("comment: {:?} -> {c:?}", before_comment.unwrap_or(""))],
            Some(Action::Delete) => vec![format!("remove pool {id}")],
            None => Vec::new(),
        };
        Ok(Output::new(changed, msg)
            .with("poolid", id)
            .with("changes", changes)
            .with_diff(diff))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The task's options, unset ones as validation leaves them (the declared default,
    /// else null), read; with the declared options no getter read.
    fn read(args: Value) -> (PoolTask, Vec<&'static str>) {
        let opts = options();
        let r = Reader::new(Params::with_defaults(&opts, &args), &opts);
        let task = PoolTask::read(&r);
        (task, r.unread())
    }

    #[test]
    fn every_declared_option_of_the_module_is_read() {
        let (_, unread) = read(json!({"poolid": "prod"}));
        let unread = connection::task_options_unread(unread);
        assert!(unread.is_empty(), "options without a reader: {unread:?}");
    }

    #[test]
    fn the_task_as_given_and_the_declared_default() {
        let (task, _) = read(json!({"poolid": "prod"}));
        assert_eq!(
            task,
            PoolTask {
                poolid: "prod".into(),
                comment: None,
                absent: false
            }
        );
        let (task, _) = read(json!({"poolid": "prod", "comment": "", "state": "absent"}));
        assert_eq!((task.comment.as_deref(), task.absent), (Some(""), true));
    }
}
