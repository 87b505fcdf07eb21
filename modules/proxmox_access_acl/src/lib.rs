//! The `ferrox.proxmox.proxmox_access_acl` module: one role of a user, group or token on
//! an ACL path, or every entry of a path removed.
//!
//! Option-compatible with community.proxmox 1.6, with check mode, `--diff` and a place in
//! the run's plan (1.6 had none), `propagate` that converges both ways, `state: absent`
//! by path that removes every entry of the path, and `old_acls`/`new_acls` that list
//! only the task's path (1.6 listed every entry the caller could see).
//!
//! - [`plan`]: the decision, pure, with its table tests.
//! - [`task`]: the options in typed form, the path checked as PVE checks it.
//!
//! Cost: one `GET /access/acl` when nothing changes; a change adds `GET /access/roles`
//! (what the role holds, for the privilege prediction), the user or group listing when
//! the caller may see every one, one `PUT /access/acl` per subject and one read back.

mod docs;
mod plan;
mod task;

use std::collections::BTreeMap;

use ferrox_ansible::diff::Diff;
use ferrox_ansible::options::{ModuleSpec, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_dryrun::Effect;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::driver::{self, Cx, Decided, Guard, Outcome, Prediction, Subject, Task};
use serde_json::Value;

use plan::{Entry, Plan, Want};
use task::AclTask;

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_access_acl",
        short_description: "Manage ACL entries of a Proxmox VE cluster",
        description: docs::description(),
        version_added: "0.2.0",
        options: task::options(),
        rules: task::rules(),
        check_mode: (
            Support::Full,
            "Reads the path's entries and reports exactly what a real run would change, writing nothing; later tasks of a check run see the entries it plans.",
        ),
        diff_mode: (Support::Full, "Shows the entries of the task's path before and after."),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_user_info", "ferrox.proxmox.proxmox_kvm"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = AclTask::from_params(&m.params)?;
    driver::run(m, task)
}

/// What the task read: the path's entries, and for a change the roles' privileges.
#[derive(Debug)]
pub struct Seen {
    /// `ACL path /vms/100`, as a refusal names the subject.
    label: String,
    entries: Vec<Entry>,
    /// Role → its privileges; read only when something changes.
    roles: Option<BTreeMap<String, Vec<String>>>,
}

/// The decision as the driver sees it.
#[derive(Debug)]
pub struct Decision(Plan);

impl Decided for Decision {
    fn changes(&self) -> bool {
        !self.0.puts.is_empty()
    }
}

fn acl_failure(path: &str, e: &dyn std::fmt::Display) -> Failure {
    Failure::new(format!("Reading the ACL of {path} failed: {e}"))
}

fn read_entries(cx: &Cx<'_>, path: &str) -> Result<Vec<Entry>, Failure> {
    let listing = cx.client.get("/access/acl", &[]).map_err(|e| acl_failure(path, &e))?;
    Ok(listing
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Entry::from_listing)
        .filter(|e| e.path == path)
        .collect())
}

fn read_roles(cx: &Cx<'_>) -> Result<BTreeMap<String, Vec<String>>, Failure> {
    let roles = cx
        .client
        .get("/access/roles", &[])
        .map_err(|e| Failure::new(format!("Reading the roles failed: {e}")))?;
    Ok(roles
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let id = r["roleid"].as_str()?.to_string();
            let privs = r["privs"]
                .as_str()
                .unwrap_or("")
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            Some((id, privs))
        })
        .collect())
}

impl Task for AclTask {
    type Seen = Seen;
    type Plan = Decision;
    type Done = Vec<Entry>;

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let entries = read_entries(cx, &self.path)?;
        // The roles only when something is to change: a no-op is one read.
        let roles = if plan::plan(&self.path, &self.want, &entries).puts.is_empty() {
            None
        } else {
            Some(read_roles(cx)?)
        };
        Ok(Seen {
            label: format!("ACL path {}", self.path),
            entries,
            roles,
        })
    }

    fn plan(&self, seen: &Seen) -> Result<Decision, Failure> {
        if let (Want::Grant { roleid, .. }, Some(roles)) = (&self.want, &seen.roles) {
            if !roles.contains_key(roleid) {
                let known: Vec<&str> = roles.keys().map(String::as_str).collect();
                return Err(Failure::new(format!(
                    "roleid '{roleid}': Proxmox VE would refuse it (role '{roleid}' does not exist); the roles are: {}",
                    known.join(", ")
                )));
            }
        }
        Ok(Decision(plan::plan(&self.path, &self.want, &seen.entries)))
    }

    fn guard<'s>(&self, seen: &'s Seen, plan: &Decision) -> Guard<'s> {
        let privileges = |role: &str| {
            seen.roles
                .as_ref()
                .and_then(|r| r.get(role).cloned())
                .unwrap_or_default()
        };
        let writes = plan
            .0
            .puts
            .iter()
            .flat_map(|put| {
                put.roles.iter().map(|role| Write::Acl {
                    path: self.path.clone(),
                    role: role.clone(),
                    role_privileges: privileges(role),
                    propagate: put.propagate.unwrap_or(true),
                    delete: put.propagate.is_none(),
                })
            })
            .collect();
        Guard {
            subject: Subject::Named(&seen.label),
            lock: None,
            writes,
        }
    }

    /// A user, group or token that does not exist is refused before any write, with
    /// PVE's words, when the caller may see them all (root, or `Sys.Audit` or
    /// `User.Modify` on `/access/groups`); otherwise PVE's own refusal, which changes
    /// nothing, is the answer.
    fn check(&self, cx: &mut Cx<'_>, _seen: &Seen, _plan: &Decision) -> Result<(), Failure> {
        let Want::Grant { kind, ugid, .. } = &self.want else {
            return Ok(());
        };
        let sees_all = cx.gate.caller().is_root()
            || cx
                .gate
                .privileges()
                .is_some_and(|p| p.has("/access/groups", "Sys.Audit") || p.has("/access/groups", "User.Modify"));
        if !sees_all {
            return Ok(());
        }
        let refusal = match kind.as_str() {
            "group" => {
                let groups = cx
                    .client
                    .get("/access/groups", &[])
                    .map_err(|e| Failure::new(format!("Reading the groups failed: {e}")))?;
                let known = groups
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|g| g["groupid"] == ugid.as_str());
                (!known).then(|| format!("group '{ugid}' does not exist"))
            }
            _ => {
                let users = cx
                    .client
                    .get("/access/users", &[("full", "1".into())])
                    .map_err(|e| Failure::new(format!("Reading the users failed: {e}")))?;
                let (userid, token) = match ugid.split_once('!') {
                    Some((u, t)) => (u, Some(t)),
                    None => (ugid.as_str(), None),
                };
                let user = users.as_array().into_iter().flatten().find(|u| u["userid"] == userid);
                match (user, token) {
                    (None, None) => Some(format!("user '{userid}' does not exist")),
                    (None, Some(_)) => Some(format!("no such user ('{userid}')")),
                    (Some(u), Some(t)) => {
                        let has = u["tokens"].as_array().into_iter().flatten().any(|x| x["tokenid"] == t);
                        (!has).then(|| format!("no such token '{t}' for user '{userid}'"))
                    }
                    (Some(_), None) => None,
                }
            }
        };
        match refusal {
            None => Ok(()),
            Some(why) => Err(Failure::new(format!(
                "ugid '{ugid}' (type {kind}): Proxmox VE would refuse the ACL entry on {} ({why}); create the {kind} first, or check its spelling and realm",
                self.path
            ))),
        }
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &Seen, plan: &Decision) -> Result<Prediction, Failure> {
        let effects = plan
            .0
            .puts
            .iter()
            .flat_map(|put| {
                put.roles.iter().map(|role| Effect::Acl {
                    path: self.path.clone(),
                    kind: put.kind.clone(),
                    ugid: put.ugid.clone(),
                    roleid: role.clone(),
                    propagate: put.propagate,
                })
            })
            .collect();
        Ok(Prediction {
            effects,
            warnings: Vec::new(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, _seen: &Seen, plan: &Decision) -> Result<Vec<Entry>, Failure> {
        for put in &plan.0.puts {
            let mut form: Vec<(&str, String)> = vec![
                ("path", self.path.clone()),
                ("roles", put.roles.join(",")),
                (subject_field(&put.kind), put.ugid.clone()),
            ];
            match put.propagate {
                Some(p) => form.push(("propagate", if p { "1" } else { "0" }.into())),
                None => form.push(("delete", "1".into())),
            }
            cx.client.put("/access/acl", &form).map_err(|e| {
                Failure::new(format!("Updating the ACL of {} failed: {e}", self.path))
                    .with("old_acls", listing(&plan.0.before))
            })?;
        }
        read_entries(cx, &self.path)
    }

    fn report(
        self,
        _cx: &mut Cx<'_>,
        _seen: &Seen,
        plan: &Decision,
        outcome: Outcome<Vec<Entry>>,
    ) -> Result<Output, Failure> {
        let plan = &plan.0;
        let after = match &outcome {
            Outcome::Unchanged => None,
            Outcome::Predicted => Some(plan.after.clone()),
            Outcome::Done(read_back) => Some(read_back.clone()),
        };
        let changes = plan.changes();
        let msg = match &after {
            None => format!("ACL of {} unchanged", self.path),
            Some(_) => format!("ACL of {} updated: {}", self.path, changes.join("; ")),
        };
        let mut out = Output::new(after.is_some(), msg)
            .with("path", &self.path)
            .with("old_acls", listing(&plan.before))
            .with("changes", &changes);
        if let Some(after) = &after {
            out = out.with("new_acls", listing(after));
        }
        Ok(out.with_diff(diff(&self.path, &plan.before, after.as_deref().unwrap_or(&plan.before))))
    }
}

/// The form field naming the subject: `users`, `groups` or `tokens`.
fn subject_field(kind: &str) -> &'static str {
    match kind {
        "group" => "groups",
        "token" => "tokens",
        _ => "users",
    }
}

fn listing(entries: &[Entry]) -> Vec<Value> {
    entries.iter().map(Entry::to_value).collect()
}

/// The path's entries before and after, one key per subject and role.
fn diff(path: &str, before: &[Entry], after: &[Entry]) -> Diff {
    let mut d = Diff::new(format!("ACL path {path}"));
    let flag = |e: &Entry| Value::String(if e.propagate { "propagate" } else { "no propagate" }.into());
    d.before = before.iter().map(|e| (e.key(), flag(e))).collect();
    d.after = after.iter().map(|e| (e.key(), flag(e))).collect();
    d
}
