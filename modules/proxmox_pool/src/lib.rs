//! The `ferrox.proxmox.proxmox_pool` module: a resource pool made, its comment kept, or
//! the pool removed.
//!
//! Option-compatible with community.proxmox 1.6 (messages included), with `comment`
//! that converges and a delete refused before any write while the pool has members or
//! child pools, naming them. PVE 8.1's `/pools?poolid=` API where the cluster has it,
//! `/pools/{poolid}` before (one `GET /version`).
//!
//! - [`plan`]: the decision, pure, with its table tests.

mod docs;
mod plan;

use ferrox_ansible::diff::Diff;
use ferrox_ansible::options::{ModuleSpec, Opt, Params, Rules, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_dryrun::Effect;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::connection;
use ferrox_run::driver::{self, Cx, Decided, Guard, Outcome, Prediction, Subject, Task};
use serde_json::{json, Value};

use plan::{Action, Pool};

pub fn spec() -> ModuleSpec {
    let mut options = connection::options();
    options.extend([
        Opt::str("poolid").aliases(&["name"]).required().desc("The pool ID; V(parent/child) for a nested pool (Proxmox VE 8.1 and later)."),
        Opt::str("comment").desc("The pool's description. Set on an existing pool too (community.proxmox 1.6 ignored it then); unset leaves it as it is. Ignored with O(state=absent)."),
        Opt::str("state")
            .default("present")
            .choices(&["present", "absent"])
            .desc("Whether the pool exists. A pool is removed only when it has no members and no child pools."),
    ]);
    ModuleSpec {
        name: "proxmox_pool",
        short_description: "Pool management for Proxmox VE cluster",
        description: docs::description(),
        version_added: "0.2.0",
        options,
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
    let task = PoolTask::read(&m.params);
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
    pub(crate) fn read(p: &Params) -> PoolTask {
        PoolTask {
            poolid: p.str("poolid").unwrap_or_default().to_string(),
            comment: p.str("comment").map(str::to_string),
            absent: p.str("state") == Some("absent"),
        }
    }
}

/// What the task read.
#[derive(Debug)]
pub struct Seen {
    label: String,
    query_form: bool,
    pool: Option<Pool>,
}

#[derive(Debug)]
pub struct Decision(Option<Action>);

impl Decided for Decision {
    fn changes(&self) -> bool {
        self.0.is_some()
    }
}

fn query_form(cx: &Cx<'_>) -> Result<bool, Failure> {
    let v = cx
        .client
        .get("/version", &[])
        .map_err(|e| Failure::new(format!("Reading the Proxmox VE version failed: {e}")))?;
    let mut parts = v["version"]
        .as_str()
        .unwrap_or("")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    Ok((parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (8, 1))
}

fn member_word(m: &Value) -> Option<String> {
    match m["type"].as_str()? {
        "storage" => Some(format!("storage {}", m["storage"].as_str()?)),
        _ => Some(format!("VM {}", m["vmid"])),
    }
}

impl PoolTask {
    fn read_pool(&self, cx: &Cx<'_>, query_form: bool) -> Result<Option<Pool>, Failure> {
        let id = &self.poolid;
        let answer = if query_form {
            cx.client.get("/pools", &[("poolid", id.clone())]).map(|v| v[0].clone())
        } else {
            cx.client.get(&format!("/pools/{id}"), &[])
        };
        let data = match answer {
            Ok(data) => data,
            Err(e) if e.message.contains("does not exist") => return Ok(None),
            Err(e) => return Err(Failure::new(format!("Unable to retrieve pool {id}: {e}"))),
        };
        let mut members: Vec<String> = data["members"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(member_word)
            .collect();
        members.dedup();
        // Child pools, for a deletion: the ids below this one (nested pools came with the
        // 8.1 API).
        let children = if query_form && self.absent {
            let prefix = format!("{id}/");
            let all = cx
                .client
                .get("/pools", &[])
                .map_err(|e| Failure::new(format!("Unable to list the pools: {e}")))?;
            all.as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["poolid"].as_str())
                .filter(|p| p.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('/')))
                .map(str::to_string)
                .collect()
        } else {
            Vec::new()
        };
        Ok(Some(Pool {
            comment: data["comment"].as_str().map(str::to_string),
            members,
            children,
        }))
    }
}

impl Task for PoolTask {
    type Seen = Seen;
    type Plan = Decision;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let query_form = query_form(cx)?;
        Ok(Seen {
            label: format!("pool {}", self.poolid),
            query_form,
            pool: self.read_pool(cx, query_form)?,
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

    fn predict(&self, _cx: &mut Cx<'_>, _seen: &Seen, plan: &Decision) -> Result<Prediction, Failure> {
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

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, plan: &Decision) -> Result<(), Failure> {
        let id = &self.poolid;
        let (path, mut form) = if seen.query_form {
            ("/pools".to_string(), vec![("poolid", id.clone())])
        } else {
            (format!("/pools/{id}"), Vec::new())
        };
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

    fn report(&self, _cx: &mut Cx<'_>, seen: &Seen, plan: &Decision, outcome: Outcome<()>) -> Result<Output, Failure> {
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
