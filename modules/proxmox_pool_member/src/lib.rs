//! The `ferrox.proxmox.proxmox_pool_member` module: VMs and storages in a resource pool.
//!
//! Both option shapes of community.proxmox: 1.6's `member` + `type` (its results and
//! messages) and 2.0's `members` + `exclusive` (its results), never both in one task;
//! plus `allow_move`. A member already there is no change (2.0.0 re-added VMs and failed
//! on PVE's `VM N is already a pool member`); a storage can be added (1.6.0 could not);
//! a VM in another pool fails before any write without `allow_move`.
//!
//! - [`plan`]: the decision, pure, with its table tests.
//! - [`task`]: the options in typed form.
//!
//! Cost: one `GET /cluster/resources` (names, the pool a VM is in, the storages), one
//! pool read (`ferrox_cluster::pools`, which names the pool as every release takes it);
//! a change adds one `PUT` to add and one to remove.

mod docs;
mod plan;
mod task;

use std::collections::{BTreeMap, BTreeSet};

use ferrox_ansible::diff::Diff;
use ferrox_ansible::options::{ModuleSpec, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_cluster::pools;
use ferrox_cluster::vm::{self, ListingQuery};
use ferrox_dryrun::Effect;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::driver::{self, Cx, Decided, Guard, Outcome, Prediction, Subject, Task};
use serde_json::{json, Value};

use plan::{Current, Member, Plan, Want};
use task::{MemberTask, Named};

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_pool_member",
        short_description: "Add or delete members from Proxmox VE cluster pools",
        description: docs::description(),
        version_added: "0.2.0",
        options: task::options(),
        rules: task::rules(),
        check_mode: (
            Support::Full,
            "Reads the pool and reports exactly what a real run would change, writing nothing; a VM planned by an earlier task of the check run can be a member, and later tasks see the members (VMs and storages) it plans into the pool or out of it.",
        ),
        diff_mode: (Support::Full, "Shows the pool's members before and after."),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_pool", "ferrox.proxmox.proxmox_kvm"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = MemberTask::from_params(&m.params)?;
    driver::run(m, task)
}

/// What the task read.
#[derive(Debug)]
pub struct Seen {
    /// `pool prod`, as a refusal names the subject.
    label: String,
    current: Current,
    /// The members the task names, looked up.
    wanted: Vec<Member>,
    /// The node of each listed VM.
    nodes: BTreeMap<u32, String>,
    /// The storages the cluster lists.
    storages: BTreeSet<String>,
}

#[derive(Debug)]
pub struct Decision(Plan);

impl Decided for Decision {
    fn changes(&self) -> bool {
        self.0.changes()
    }
}

/// The pool's members as PVE lists them; a missing pool is the task's refusal.
fn read_members(cx: &Cx<'_>, poolid: &str) -> Result<BTreeSet<Member>, Failure> {
    match pools::read(cx.client, poolid) {
        Ok(Some(pool)) => Ok(pool.members.into_iter().collect()),
        Ok(None) => Err(Failure::new(format!(
            "poolid '{poolid}': pool '{poolid}' does not exist; create it first (ferrox.proxmox.proxmox_pool) or check its spelling"
        ))),
        Err(e) => Err(Failure::new(format!("Unable to retrieve pool {poolid} information: {e}"))),
    }
}

impl Task for MemberTask {
    type Seen = Seen;
    type Plan = Decision;
    type Done = ();

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let by_name = self
            .members
            .iter()
            .any(|m| matches!(m, Named::Vm(v) if v.parse::<u32>().is_err()));
        let listing = vm::read(cx.client, &ListingQuery::whole_cluster().with_name_unbroadcast(by_name))
            .map_err(|e| Failure::new(format!("Unable to retrieve list of VMs: {e}")))?
            .cluster;
        let mut members = read_members(cx, &self.poolid)?;
        let mut pool_of = BTreeMap::new();
        let mut nodes = BTreeMap::new();
        for g in &listing.guests {
            nodes.insert(g.vmid, g.node.to_string());
            match &g.pool {
                // What the listing (and the run's plan in a check run) says wins.
                Some(p) if *p == self.poolid => {
                    members.insert(Member::Vm(g.vmid));
                }
                Some(_) => {
                    members.remove(&Member::Vm(g.vmid));
                }
                None => {}
            }
            if let Some(p) = &g.pool {
                pool_of.insert(g.vmid, p.clone());
            }
        }
        let wanted = self
            .members
            .iter()
            .map(|m| match m {
                Named::Storage(s) => Ok(Member::Storage(s.clone())),
                Named::Vm(v) => match v.parse::<u32>() {
                    Ok(id) => Ok(Member::Vm(id)),
                    Err(_) => {
                        let found: Vec<u32> = listing
                            .guests
                            .iter()
                            .filter(|g| g.name.as_deref() == Some(v.as_str()))
                            .map(|g| g.vmid)
                            .collect();
                        match found.as_slice() {
                            [one] => Ok(Member::Vm(*one)),
                            [] => Err(Failure::new(format!("No VM with name {v} found"))),
                            _ => Err(Failure::new(format!(
                                "Multiple VMs with name {v} found, provide vmid instead"
                            ))),
                        }
                    }
                },
            })
            .collect::<Result<Vec<Member>, Failure>>()?;
        Ok(Seen {
            label: format!("pool {}", self.poolid),
            current: Current { members, pool_of },
            wanted,
            nodes,
            storages: listing.storages.iter().map(|s| s.storage.clone()).collect(),
        })
    }

    fn plan(&self, seen: &Seen) -> Result<Decision, Failure> {
        let want = Want {
            poolid: self.poolid.clone(),
            members: seen.wanted.clone(),
            absent: self.absent,
            exclusive: self.exclusive,
            allow_move: self.allow_move,
        };
        let plan = plan::plan(&want, &seen.current).map_err(|e| self.failure(e))?;
        // A member added must exist (PVE itself adds any id).
        for m in &plan.add {
            match m {
                Member::Vm(id) if !seen.nodes.contains_key(id) => {
                    return Err(self.failure(format!("VM with vmid {id} does not exist in cluster")))
                }
                Member::Storage(s) if !seen.storages.contains(s) => {
                    return Err(self.failure(format!("Storage {s} doesn't exist in the cluster")))
                }
                _ => {}
            }
        }
        Ok(Decision(plan))
    }

    fn guard<'s>(&self, seen: &'s Seen, plan: &Decision) -> Guard<'s> {
        let plan = &plan.0;
        let write = |m: &Member, from: Option<String>| match m {
            // update_pool checks the same for adding and removing a VM: Pool.Allocate on
            // the pool, perm-modify on the VM (and Pool.Allocate on a pool it leaves).
            Member::Vm(vmid) => Write::PoolMove {
                vmid: *vmid,
                from,
                to: self.poolid.clone(),
            },
            Member::Storage(storage) => Write::PoolStorage {
                poolid: self.poolid.clone(),
                storage: storage.clone(),
            },
        };
        let mut writes: Vec<Write> = plan
            .add
            .iter()
            .map(|m| {
                let from = match m {
                    Member::Vm(id) => plan.moved_from.get(id).cloned(),
                    Member::Storage(_) => None,
                };
                write(m, from)
            })
            .collect();
        writes.extend(plan.remove.iter().map(|m| write(m, None)));
        Guard {
            subject: Subject::Named(&seen.label),
            lock: None,
            writes,
        }
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, seen: &Seen, plan: &Decision) -> Result<Prediction, Failure> {
        let plan = &plan.0;
        // What a later task of the run reads: each VM in the pool or in none, each
        // storage in the pool or out of it.
        let effect = |m: &Member, removed: bool| match m {
            Member::Vm(vmid) => Effect::Pool {
                vmid: *vmid,
                node: seen.nodes.get(vmid).cloned().unwrap_or_default(),
                pool: (!removed).then(|| self.poolid.clone()),
            },
            Member::Storage(storage) => Effect::PoolStorage {
                poolid: self.poolid.clone(),
                storage: storage.clone(),
                removed,
            },
        };
        let effects = plan
            .add
            .iter()
            .map(|m| effect(m, false))
            .chain(plan.remove.iter().map(|m| effect(m, true)))
            .collect();
        Ok(Prediction {
            effects,
            warnings: Vec::new(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, _seen: &Seen, plan: &Decision) -> Result<(), Failure> {
        let plan = &plan.0;
        let (path, base) = pools::address(&self.poolid);
        for (members, delete) in [(&plan.add, false), (&plan.remove, true)] {
            if members.is_empty() {
                continue;
            }
            let mut form = base.clone();
            let vms: Vec<String> = members
                .iter()
                .filter_map(|m| match m {
                    Member::Vm(id) => Some(id.to_string()),
                    Member::Storage(_) => None,
                })
                .collect();
            let storages: Vec<String> = members
                .iter()
                .filter_map(|m| match m {
                    Member::Storage(s) => Some(s.clone()),
                    Member::Vm(_) => None,
                })
                .collect();
            if !vms.is_empty() {
                form.push(("vms", vms.join(",")));
            }
            if !storages.is_empty() {
                form.push(("storage", storages.join(",")));
            }
            if delete {
                form.push(("delete", "1".into()));
            } else if !plan.moved_from.is_empty() {
                form.push(("allow-move", "1".into()));
            }
            cx.client
                .put(&path, &form)
                .map_err(|e| self.failure(format!("Failed to update pool {} membership: {e}", self.poolid)))?;
        }
        Ok(())
    }

    fn report(self, _cx: &mut Cx<'_>, _seen: &Seen, plan: &Decision, outcome: Outcome<()>) -> Result<Output, Failure> {
        let plan = &plan.0;
        let changed = !matches!(outcome, Outcome::Unchanged);
        let listed = |set: &BTreeSet<Member>| -> Vec<Value> {
            // 1.6's diff: storages, then vmids as numbers.
            let mut out: Vec<Value> = set
                .iter()
                .filter_map(|m| match m {
                    Member::Storage(s) => Some(json!(s)),
                    Member::Vm(_) => None,
                })
                .collect();
            out.extend(set.iter().filter_map(|m| match m {
                Member::Vm(id) => Some(json!(id)),
                Member::Storage(_) => None,
            }));
            out
        };
        let mut diff = Diff::new(format!("pool {}", self.poolid));
        diff.before.insert("members".into(), Value::Array(listed(&plan.before)));
        diff.after.insert("members".into(), Value::Array(listed(&plan.after)));
        let out = match &self.single {
            Some(member) => Output::new(changed, self.single_msg(member, changed))
                .with("poolid", &self.poolid)
                .with("member", member),
            None => {
                let msg = if changed {
                    format!("Pool {} membership updated", self.poolid)
                } else {
                    format!("Pool {} membership already up-to-date", self.poolid)
                };
                let mut members: Vec<&Member> = plan.after.iter().collect();
                members.sort_by_key(|m| matches!(m, Member::Storage(_)));
                let members: Vec<Value> = members.iter().map(|m| plan::member_value(m)).collect();
                Output::new(changed, msg)
                    .with("poolid", &self.poolid)
                    .with("members", members)
            }
        };
        Ok(out.with("changes", changes(plan)).with_diff(diff))
    }
}

/// What the plan does, in words: `add VM 101`, `remove storage local`.
fn changes(plan: &Plan) -> Vec<String> {
    let mut out: Vec<String> = plan
        .add
        .iter()
        .map(|m| match m {
            Member::Vm(id) if plan.moved_from.contains_key(id) => {
                format!("move {m} from pool {}", plan.moved_from[id])
            }
            _ => format!("add {m}"),
        })
        .collect();
    out.extend(plan.remove.iter().map(|m| format!("remove {m}")));
    out
}

impl MemberTask {
    /// A refusal: with 1.6's `member`, its keys too.
    fn failure(&self, msg: String) -> Failure {
        let f = Failure::new(msg).with("poolid", &self.poolid);
        match &self.single {
            Some(m) => f.with("member", m),
            None => f,
        }
    }

    /// 1.6's messages for one member.
    fn single_msg(&self, member: &str, changed: bool) -> String {
        let pool = &self.poolid;
        let storage = matches!(self.members.first(), Some(Named::Storage(_)));
        match (self.absent, changed, storage) {
            (false, true, _) => format!("New member {member} added to the pool {pool}"),
            (true, true, _) => format!("Member {member} deleted from the pool {pool}"),
            (false, false, true) => format!("Member {member} is already part of the pool {pool}"),
            (false, false, false) => format!("VM {member} is already part of the pool {pool}"),
            (true, false, true) => format!("Member {member} is not part of the pool {pool}"),
            (true, false, false) => format!("VM {member} is not part of the pool {pool}"),
        }
    }
}
