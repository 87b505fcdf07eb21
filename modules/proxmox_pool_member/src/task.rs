//! The options of proxmox_pool_member, declared once: community.proxmox 1.6's shape
//! (`member` and `type`) and 2.0's (`members`, `exclusive`), plus `allow_move`; a task
//! gives one shape, never both. The task reads them once, through [`Reader`] (defaults
//! come from the declaration only).

use ferrox_ansible::options::read::{Choice, Reader};
use ferrox_ansible::options::{Kind, Opt, Params, Rules};
use ferrox_ansible::protocol::Failure;
use ferrox_run::connection;
use serde_json::Value;

/// What `member` names (`type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemberType {
    Vm,
    Storage,
}

impl Choice for MemberType {
    const ALL: &'static [(&'static str, MemberType)] = &[("vm", MemberType::Vm), ("storage", MemberType::Storage)];
}

/// `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Present,
    Absent,
}

impl Choice for State {
    const ALL: &'static [(&'static str, State)] = &[("present", State::Present), ("absent", State::Absent)];
}

pub(crate) fn options() -> Vec<Opt> {
    let mut opts = connection::options();
    let mut members = Opt::list("members", Kind::Dict)
        .desc("The members, each a dict with either C(vm) (a VMID or a VM name) or C(storage) (a storage ID): community.proxmox 2.0's shape.")
        .desc("Give either O(members) or O(member), never both.");
    members.suboptions = Some(vec![
        Opt::str("vm").desc("A VMID or the name of exactly one guest."),
        Opt::str("storage").desc("A storage ID."),
    ]);
    opts.extend([
        Opt::str("poolid").aliases(&["name"]).required().desc("The pool ID."),
        Opt::str("member")
            .desc("One member: a storage ID with O(type=storage), else a VMID or the name of exactly one guest: community.proxmox 1.6's shape.")
            .desc("Give either O(member) or O(members), never both."),
        Opt::str("type")
            .default(MemberType::ALL[0].0)
            .choices(&MemberType::names())
            .desc("What O(member) names. Used only with O(member)."),
        members,
        Opt::str("state")
            .default(State::ALL[0].0)
            .choices(&State::names())
            .desc("Whether the members are in the pool. Ignored with O(exclusive=true)."),
        Opt::bool("exclusive")
            .default(false)
            .desc("With V(true), the pool's members become exactly the members given: members not given are removed."),
        Opt::bool("allow_move")
            .default(false)
            .desc("Whether a VM in another pool is moved into this one. Without it, such a VM fails the task before any write, naming its pool."),
    ]);
    opts
}

pub(crate) fn rules() -> Rules {
    Rules::default()
        .mutually_exclusive(&["member", "members"])
        .required_one_of(&["member", "members"])
        .merge(connection::rules())
}

/// A member as the task names it, before it is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Named {
    /// A VMID or a guest name.
    Vm(String),
    Storage(String),
}

/// The task in typed form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemberTask {
    pub poolid: String,
    pub members: Vec<Named>,
    /// Given as 1.6's `member` (its result shape and messages).
    pub single: Option<String>,
    pub absent: bool,
    pub exclusive: bool,
    pub allow_move: bool,
}

impl MemberTask {
    pub(crate) fn from_params(params: &Params) -> Result<MemberTask, Failure> {
        let opts = options();
        Self::read(&Reader::new(params.clone(), &opts))
    }

    fn read(r: &Reader<'_>) -> Result<MemberTask, Failure> {
        let poolid = r.str("poolid").unwrap_or_default().to_string();
        let member = r.str("member").map(str::to_string);
        let kind = r.choice::<MemberType>("type");
        let listed = r.list("members");
        let (members, single) = match member {
            Some(m) => {
                let named = match kind {
                    MemberType::Storage => Named::Storage(m.clone()),
                    MemberType::Vm => Named::Vm(m.clone()),
                };
                (vec![named], Some(m))
            }
            None => (members(listed.map(Vec::as_slice).unwrap_or_default())?, None),
        };
        Ok(MemberTask {
            poolid,
            members,
            single,
            absent: r.choice::<State>("state") == State::Absent,
            exclusive: r.bool_or_default("exclusive"),
            allow_move: r.bool_or_default("allow_move"),
        })
    }
}

fn members(items: &[Value]) -> Result<Vec<Named>, Failure> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let text = |k: &str| match item.get(k) {
                Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            };
            let unknown: Vec<&String> = item
                .as_object()
                .map(|o| o.keys().filter(|k| *k != "vm" && *k != "storage").collect())
                .unwrap_or_default();
            let bad = |why: &str| {
                Failure::new(format!(
                    "members[{i}] ({item}): {why}; each member is a dict with either vm (a VMID or VM name) or storage (a storage ID), for example {{vm: 101}} or {{storage: local}}"
                ))
            };
            if !unknown.is_empty() {
                let names: Vec<&str> = unknown.iter().map(|k| k.as_str()).collect();
                return Err(bad(&format!("unknown key {}", names.join(", "))));
            }
            match (text("vm"), text("storage")) {
                (Some(vm), None) => Ok(Named::Vm(vm)),
                (None, Some(s)) => Ok(Named::Storage(s)),
                (Some(_), Some(_)) => Err(bad("both vm and storage given")),
                (None, None) => Err(bad("neither vm nor storage given")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The task's options, unset ones as validation leaves them (the declared default,
    /// else null), read; with the declared options no getter read.
    fn read_task(args: Value) -> (Result<MemberTask, Failure>, Vec<&'static str>) {
        let opts = options();
        let r = Reader::new(Params::with_defaults(&opts, &args), &opts);
        let task = MemberTask::read(&r);
        (task, r.unread())
    }

    fn read(args: Value) -> Result<MemberTask, Failure> {
        read_task(args).0
    }

    #[test]
    fn every_declared_option_of_the_module_is_read() {
        let (task, unread) = read_task(json!({"poolid": "prod", "member": "101"}));
        assert!(task.is_ok());
        let unread = connection::task_options_unread(unread);
        assert!(unread.is_empty(), "options without a reader: {unread:?}");
    }

    #[test]
    fn unset_options_take_the_declared_defaults() {
        let task = read(json!({"poolid": "prod", "member": "101"})).unwrap();
        assert_eq!(task.members, [Named::Vm("101".into())]);
        assert!(!task.absent && !task.exclusive && !task.allow_move);
        let task =
            read(json!({"poolid": "prod", "members": [{"vm": 101}], "state": "absent", "allow_move": true})).unwrap();
        assert!(task.absent && task.allow_move);
    }

    #[test]
    fn both_shapes_read_alike() {
        let old = read(json!({"poolid": "prod", "member": "local", "type": "storage"})).unwrap();
        assert_eq!(old.members, [Named::Storage("local".into())]);
        assert_eq!(old.single.as_deref(), Some("local"));
        let new = read(json!({"poolid": "prod", "members": [{"vm": 101}, {"storage": "local"}]})).unwrap();
        assert_eq!(new.members, [Named::Vm("101".into()), Named::Storage("local".into())]);
        assert_eq!(new.single, None);
    }

    #[test]
    fn a_member_must_name_one_thing() {
        let e = read(json!({"poolid": "p", "members": [{"vm": "a", "storage": "b"}]})).unwrap_err();
        assert!(e.msg.starts_with("members[0] ("), "{}", e.msg);
        assert!(e.msg.contains("both vm and storage given"), "{}", e.msg);
        let e = read(json!({"poolid": "p", "members": [{"vmid": 100}]})).unwrap_err();
        assert!(e.msg.contains("unknown key vmid"), "{}", e.msg);
    }
}
