//! The options of proxmox_access_acl, declared once, and the task read once through
//! [`Reader`] into typed form (defaults come from the declaration only): the path
//! normalised as PVE normalises it, and refused where PVE would refuse it.

use ferrox_ansible::options::read::{Choice, Reader};
use ferrox_ansible::options::{Opt, Params, Rules};
use ferrox_ansible::protocol::Failure;
use ferrox_pve_rules::acl_path;
use ferrox_run::connection;

use crate::plan::Want;

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
    opts.extend([
        Opt::str("state")
            .default(State::ALL[0].0)
            .choices(&State::names())
            .desc("V(present) gives O(roleid) to O(ugid) on O(path) with the O(propagate) asked (an entry with the other O(propagate) is changed); V(absent) removes the entries of O(path) that match the O(roleid), O(type) and O(ugid) given, whatever their O(propagate).")
            .desc("With V(absent) and only O(path), every entry of the path is removed, as community.proxmox documents it (its 1.6 removed only the propagating ones)."),
        Opt::str("path")
            .desc("The ACL path: V(/), V(/vms/<vmid>), V(/storage/<id>), V(/pool/<id>), V(/nodes/<node>), V(/access/groups/<group>), V(/sdn/...), V(/mapping/...).")
            .desc("Proxmox VE does not look the VM of a V(/vms/<vmid>) path up, so the entry can be set right after the VM's create, without a pause, or before it exists."),
        Opt::str("roleid").desc("The role, a built-in one (V(PVEVMUser), V(PVEAuditor), ...) or a custom one."),
        Opt::str("type")
            .choices(&["user", "group", "token"])
            .desc("What O(ugid) names."),
        Opt::str("ugid").desc("The user (V(name@realm)), group, or API token (V(name@realm!token)) the entry is for."),
        Opt::bool("propagate")
            .default(true)
            .desc("Whether the entry also applies below O(path). Ignored with O(state=absent)."),
    ]);
    opts
}

pub(crate) fn rules() -> Rules {
    Rules::default()
        .required_if("state", "present", &["path", "roleid", "type", "ugid"])
        .required_if("state", "absent", &["path"])
        .merge(connection::rules())
}

/// The task in typed form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AclTask {
    /// The path as PVE normalises it.
    pub path: String,
    pub want: Want,
}

impl AclTask {
    pub(crate) fn from_params(params: &Params) -> Result<AclTask, Failure> {
        let opts = options();
        Self::read(&Reader::new(params.clone(), &opts))
    }

    fn read(r: &Reader<'_>) -> Result<AclTask, Failure> {
        let state = r.choice::<State>("state");
        let raw = r.str("path").unwrap_or_default();
        let kind = r.non_empty("type");
        let ugid = r.non_empty("ugid");
        let roleid = r.non_empty("roleid");
        let propagate = r.bool_or_default("propagate");
        let path = acl_path::normalize_path(raw).ok_or_else(|| {
            Failure::new(format!(
                "path '{raw}' is not an ACL path: Proxmox VE refuses it (invalid ACL path '{raw}'); a path is made of letters, digits, '.', '-', '_' and '/', for example /vms/100"
            ))
        })?;
        if let (Some(kind), Some(ugid)) = (&kind, &ugid) {
            check_ugid(kind, ugid)?;
        }
        if state == State::Absent {
            return Ok(AclTask {
                path,
                want: Want::Remove { kind, ugid, roleid },
            });
        }
        if !acl_path::check_path(&path) {
            return Err(Failure::new(format!(
                "path '{raw}' is not a path Proxmox VE sets ACL entries on (invalid ACL path '{raw}'): use /, /vms/<vmid> (a VMID of at least 3 digits), /storage/<id>, /pool/<id>, /nodes/<node>, /access/groups/<group>, /access/realm/<realm>, /sdn/..., or /mapping/..."
            )));
        }
        Ok(AclTask {
            path,
            want: Want::Grant {
                kind: kind.unwrap_or_default(),
                ugid: ugid.unwrap_or_default(),
                roleid: roleid.unwrap_or_default(),
                propagate,
            },
        })
    }
}

/// What PVE's formats accept for each `type` (`pve-userid`, `pve-tokenid`,
/// `pve-groupid`), refused in the user's terms before anything is read.
fn check_ugid(kind: &str, ugid: &str) -> Result<(), Failure> {
    let name_ok = |s: &str| !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == ':' || c == '/');
    let realm_ok = |s: &str| {
        s.len() >= 2
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    let user_ok = |u: &str| u.rsplit_once('@').is_some_and(|(n, r)| name_ok(n) && realm_ok(r));
    let ok = match kind {
        "user" => user_ok(ugid) && !ugid.contains('!'),
        "token" => ugid.split_once('!').is_some_and(|(u, t)| user_ok(u) && realm_ok(t)),
        _ => {
            !ugid.is_empty()
                && ugid
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        }
    };
    if ok {
        return Ok(());
    }
    let form = match kind {
        "user" => "a user ID, name@realm (for example jdoe@ad)",
        "token" => "an API token ID, name@realm!token (for example ansible@pve!automation)",
        _ => "a group name (letters, digits, '.', '-', '_')",
    };
    Err(Failure::new(format!(
        "ugid '{ugid}' is not {form}, which type: {kind} needs"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The task's options, unset ones as validation leaves them (the declared default,
    /// else null), read; with the declared options no getter read.
    fn read_task(args: Value) -> (Result<AclTask, Failure>, Vec<&'static str>) {
        let opts = options();
        let r = Reader::new(Params::with_defaults(&opts, &args), &opts);
        let task = AclTask::read(&r);
        (task, r.unread())
    }

    fn read(args: Value) -> Result<AclTask, Failure> {
        read_task(args).0
    }

    #[test]
    fn every_declared_option_of_the_module_is_read() {
        let (task, unread) = read_task(json!({"path": "/vms/101", "state": "absent"}));
        assert!(task.is_ok());
        let unread = connection::task_options_unread(unread);
        assert!(unread.is_empty(), "options without a reader: {unread:?}");
    }

    #[test]
    fn propagate_takes_the_declared_default() {
        let grant = |args: Value| match read(args).unwrap().want {
            Want::Grant { propagate, .. } => propagate,
            other => panic!("not a grant: {other:?}"),
        };
        let task = json!({"path": "/", "roleid": "R", "type": "group", "ugid": "owners"});
        assert!(grant(task.clone()));
        let mut off = task;
        off["propagate"] = json!(false);
        assert!(!grant(off));
    }

    #[test]
    fn the_path_is_normalised_and_checked_as_pve_does() {
        let t = read(json!({"path": "//vms/101/", "roleid": "PVEVMUser", "type": "user", "ugid": "jdoe@ad"})).unwrap();
        assert_eq!(t.path, "/vms/101");
        let e = read(json!({"path": "/vms/99", "roleid": "PVEVMUser", "type": "user", "ugid": "jdoe@ad"})).unwrap_err();
        assert!(
            e.msg.starts_with(
                "path '/vms/99' is not a path Proxmox VE sets ACL entries on (invalid ACL path '/vms/99')"
            ),
            "{}",
            e.msg
        );
        let e = read(json!({"path": "/vms/1 01", "state": "absent"})).unwrap_err();
        assert!(e.msg.starts_with("path '/vms/1 01' is not an ACL path"), "{}", e.msg);
        // Removing skips check_path, as PVE's does.
        assert!(read(json!({"path": "/vms/99", "state": "absent"})).is_ok());
    }

    #[test]
    fn the_subject_must_have_the_form_its_type_needs() {
        let e = read(json!({"path": "/vms/101", "roleid": "R", "type": "user", "ugid": "jdoe"})).unwrap_err();
        assert_eq!(
            e.msg,
            "ugid 'jdoe' is not a user ID, name@realm (for example jdoe@ad), which type: user needs"
        );
        let e = read(json!({"path": "/vms/101", "roleid": "R", "type": "token", "ugid": "jdoe@ad"})).unwrap_err();
        assert!(e.msg.starts_with("ugid 'jdoe@ad' is not an API token ID"), "{}", e.msg);
        assert!(read(json!({"path": "/", "roleid": "R", "type": "token", "ugid": "ansible@pve!automation"})).is_ok());
        assert!(read(json!({"path": "/", "roleid": "R", "type": "group", "ugid": "owners"})).is_ok());
    }
}
