//! The decision, pure: the pool's members (VMs and storages, as the cluster and the
//! run's plan show them) and the members the task names give the `PUT /pools` calls.
//!
//! A member already there is no change (2.0.0 compared string vmids with integer ones
//! and re-added every VM); a VM in another pool moves only with `allow_move`, refused
//! before any write otherwise, naming the pool and the option.

use std::collections::{BTreeMap, BTreeSet};

pub(crate) use ferrox_cluster::pools::Member;

/// A member as 2.0's `members` result shows it: `{vm: "101"}` / `{storage: "local"}`.
pub(crate) fn member_value(member: &Member) -> serde_json::Value {
    match member {
        Member::Vm(id) => serde_json::json!({"vm": id.to_string()}),
        Member::Storage(s) => serde_json::json!({"storage": s}),
    }
}

/// The pool now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Current {
    pub members: BTreeSet<Member>,
    /// The pool each listed VM is in, if any (to see a move).
    pub pool_of: BTreeMap<u32, String>,
}

/// What the task asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Want {
    pub poolid: String,
    pub members: Vec<Member>,
    /// `state: absent` (ignored with `exclusive`).
    pub absent: bool,
    pub exclusive: bool,
    pub allow_move: bool,
}

/// The calls: members added (VMs with the pool they leave), members removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    pub add: Vec<Member>,
    /// VM → the pool it leaves, for each VM added that is in another pool.
    pub moved_from: BTreeMap<u32, String>,
    pub remove: Vec<Member>,
    pub before: BTreeSet<Member>,
    pub after: BTreeSet<Member>,
}

impl Plan {
    pub(crate) fn changes(&self) -> bool {
        !self.add.is_empty() || !self.remove.is_empty()
    }
}

/// The plan, or the refusal of a move without `allow_move`.
pub(crate) fn plan(want: &Want, current: &Current) -> Result<Plan, String> {
    let wanted: BTreeSet<Member> = want.members.iter().cloned().collect();
    let (add, remove): (Vec<Member>, Vec<Member>) = if want.exclusive {
        (
            wanted.difference(&current.members).cloned().collect(),
            current.members.difference(&wanted).cloned().collect(),
        )
    } else if want.absent {
        (Vec::new(), wanted.intersection(&current.members).cloned().collect())
    } else {
        (wanted.difference(&current.members).cloned().collect(), Vec::new())
    };
    let mut moved_from = BTreeMap::new();
    for m in &add {
        let Member::Vm(vmid) = m else { continue };
        let Some(other) = current.pool_of.get(vmid).filter(|p| **p != want.poolid) else {
            continue;
        };
        if !want.allow_move {
            return Err(format!(
                "VM {vmid} is in pool '{other}': Proxmox VE moves a VM into pool '{}' only when asked (VM {vmid} belongs already to pool '{other}' and 'allow-move' is not set); set allow_move: true to move it",
                want.poolid
            ));
        }
        moved_from.insert(*vmid, other.clone());
    }
    let mut after = current.members.clone();
    after.extend(add.iter().cloned());
    for m in &remove {
        after.remove(m);
    }
    Ok(Plan {
        add,
        moved_from,
        remove,
        before: current.members.clone(),
        after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current(vms: &[u32], storages: &[&str], elsewhere: &[(u32, &str)]) -> Current {
        let mut members: BTreeSet<Member> = vms.iter().map(|v| Member::Vm(*v)).collect();
        members.extend(storages.iter().map(|s| Member::Storage(s.to_string())));
        let mut pool_of: BTreeMap<u32, String> = vms.iter().map(|v| (*v, "prod".to_string())).collect();
        pool_of.extend(elsewhere.iter().map(|(v, p)| (*v, p.to_string())));
        Current { members, pool_of }
    }

    fn want(members: Vec<Member>) -> Want {
        Want {
            poolid: "prod".into(),
            members,
            absent: false,
            exclusive: false,
            allow_move: false,
        }
    }

    #[test]
    fn a_member_already_there_is_no_change() {
        let c = current(&[100], &["local"], &[]);
        let p = plan(&want(vec![Member::Vm(100), Member::Storage("local".into())]), &c).unwrap();
        assert!(!p.changes(), "2.0.0 re-added VM 100 and failed: {p:?}");
        let p = plan(&want(vec![Member::Storage("vmdata".into())]), &c).unwrap();
        assert_eq!(p.add, [Member::Storage("vmdata".into())]);
    }

    #[test]
    fn a_vm_in_another_pool_moves_only_with_allow_move() {
        let c = current(&[], &[], &[(101, "dev")]);
        let e = plan(&want(vec![Member::Vm(101)]), &c).unwrap_err();
        assert!(e.starts_with("VM 101 is in pool 'dev'"), "{e}");
        assert!(e.ends_with("set allow_move: true to move it"), "{e}");
        let mut w = want(vec![Member::Vm(101)]);
        w.allow_move = true;
        let p = plan(&w, &c).unwrap();
        assert_eq!(p.moved_from, BTreeMap::from([(101, "dev".to_string())]));
    }

    #[test]
    fn absent_and_exclusive() {
        let c = current(&[100, 102], &["local"], &[]);
        let mut w = want(vec![Member::Vm(100), Member::Vm(105)]);
        w.absent = true;
        let p = plan(&w, &c).unwrap();
        assert_eq!(p.remove, [Member::Vm(100)], "a member not there is nothing to remove");
        let mut w = want(vec![Member::Vm(100), Member::Storage("vmdata".into())]);
        w.exclusive = true;
        w.absent = true; // ignored with exclusive
        let p = plan(&w, &c).unwrap();
        assert_eq!(p.add, [Member::Storage("vmdata".into())]);
        assert_eq!(p.remove, [Member::Vm(102), Member::Storage("local".into())]);
        assert_eq!(p.after, [Member::Vm(100), Member::Storage("vmdata".into())].into());
    }
}
