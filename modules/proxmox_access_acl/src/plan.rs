//! The decision, pure: the entries of one ACL path as PVE lists them, and the task,
//! give the `PUT /access/acl` calls that make the path what the task asks.
//!
//! An entry is (path, type, ugid, role) with one `propagate` flag: PVE keeps one flag
//! per role and subject, so a grant with the other flag changes it in place (1.6
//! compared `propagate` only when true and so never converged onto `false`). `absent`
//! removes every entry of the path that matches what the task gives (`roleid`, `type`,
//! `ugid`), whatever its flag: with only `path`, every entry of the path.

use serde_json::{json, Value};

/// One ACL entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub path: String,
    /// `user`, `group` or `token`.
    pub kind: String,
    pub ugid: String,
    pub roleid: String,
    pub propagate: bool,
}

impl Entry {
    /// From one item of `GET /access/acl`.
    pub(crate) fn from_listing(v: &Value) -> Option<Entry> {
        Some(Entry {
            path: v["path"].as_str()?.to_string(),
            kind: v["type"].as_str()?.to_string(),
            ugid: v["ugid"].as_str()?.to_string(),
            roleid: v["roleid"].as_str()?.to_string(),
            propagate: match &v["propagate"] {
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_i64() != Some(0),
                Value::String(s) => s != "0",
                _ => true,
            },
        })
    }

    /// As PVE lists it (`propagate` an integer), for `old_acls`/`new_acls`.
    pub(crate) fn to_value(&self) -> Value {
        json!({"path": self.path, "type": self.kind, "ugid": self.ugid, "roleid": self.roleid,
            "propagate": u8::from(self.propagate)})
    }

    /// `user jdoe@ad: PVEVMUser`, the diff's key.
    pub(crate) fn key(&self) -> String {
        format!("{} {}: {}", self.kind, self.ugid, self.roleid)
    }

    fn same_grant(&self, kind: &str, ugid: &str, roleid: &str) -> bool {
        self.kind == kind && self.ugid == ugid && self.roleid == roleid
    }
}

/// What the task wants of the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Want {
    /// The role granted to the subject with this flag.
    Grant {
        kind: String,
        ugid: String,
        roleid: String,
        propagate: bool,
    },
    /// Every entry of the path matching what is given removed.
    Remove {
        kind: Option<String>,
        ugid: Option<String>,
        roleid: Option<String>,
    },
}

/// One `PUT /access/acl`: roles of one subject set (with `propagate`) or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Put {
    pub kind: String,
    pub ugid: String,
    pub roles: Vec<String>,
    /// `None`: `delete=1`.
    pub propagate: Option<bool>,
}

/// The decision: the calls, and the path's entries before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub puts: Vec<Put>,
    pub before: Vec<Entry>,
    pub after: Vec<Entry>,
}

/// The calls that bring the entries of `path` (`entries`: the whole listing or the
/// path's) to what `want` asks.
pub(crate) fn plan(path: &str, want: &Want, entries: &[Entry]) -> Plan {
    let before: Vec<Entry> = entries.iter().filter(|e| e.path == path).cloned().collect();
    let mut after = before.clone();
    let mut puts = Vec::new();
    match want {
        Want::Grant {
            kind,
            ugid,
            roleid,
            propagate,
        } => {
            let current = before.iter().find(|e| e.same_grant(kind, ugid, roleid));
            if current.is_none_or(|e| e.propagate != *propagate) {
                after.retain(|e| !e.same_grant(kind, ugid, roleid));
                after.push(Entry {
                    path: path.to_string(),
                    kind: kind.clone(),
                    ugid: ugid.clone(),
                    roleid: roleid.clone(),
                    propagate: *propagate,
                });
                puts.push(Put {
                    kind: kind.clone(),
                    ugid: ugid.clone(),
                    roles: vec![roleid.clone()],
                    propagate: Some(*propagate),
                });
            }
        }
        Want::Remove { kind, ugid, roleid } => {
            let matches = |e: &Entry| {
                kind.as_deref().is_none_or(|k| e.kind == k)
                    && ugid.as_deref().is_none_or(|u| e.ugid == u)
                    && roleid.as_deref().is_none_or(|r| e.roleid == r)
            };
            for e in before.iter().filter(|e| matches(e)) {
                match puts
                    .iter_mut()
                    .find(|p: &&mut Put| p.kind == e.kind && p.ugid == e.ugid)
                {
                    Some(put) => put.roles.push(e.roleid.clone()),
                    None => puts.push(Put {
                        kind: e.kind.clone(),
                        ugid: e.ugid.clone(),
                        roles: vec![e.roleid.clone()],
                        propagate: None,
                    }),
                }
            }
            after.retain(|e| !matches(e));
        }
    }
    Plan { puts, before, after }
}

impl Plan {
    /// What the plan does, in words: `grant PVEVMUser to user jdoe@ad (propagating)`.
    pub(crate) fn changes(&self) -> Vec<String> {
        self.puts
            .iter()
            .map(|p| {
                let roles = p.roles.join(", ");
                match p.propagate {
                    Some(prop) => format!(
                        "grant {roles} to {} {} ({})",
                        p.kind,
                        p.ugid,
                        if prop { "propagating" } else { "not propagating" }
                    ),
                    None => format!("remove {roles} from {} {}", p.kind, p.ugid),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: &str, ugid: &str, roleid: &str, propagate: bool) -> Entry {
        Entry {
            path: "/vms/101".into(),
            kind: kind.into(),
            ugid: ugid.into(),
            roleid: roleid.into(),
            propagate,
        }
    }

    fn grant(propagate: bool) -> Want {
        Want::Grant {
            kind: "user".into(),
            ugid: "jdoe@ad".into(),
            roleid: "PVEVMUser".into(),
            propagate,
        }
    }

    #[test]
    fn a_grant_converges_on_the_propagate_flag_both_ways() {
        let on = [entry("user", "jdoe@ad", "PVEVMUser", true)];
        let off = [entry("user", "jdoe@ad", "PVEVMUser", false)];
        assert!(plan("/vms/101", &grant(true), &on).puts.is_empty());
        assert!(plan("/vms/101", &grant(false), &off).puts.is_empty());
        let p = plan("/vms/101", &grant(false), &on);
        assert_eq!(
            p.puts[0].propagate,
            Some(false),
            "1.6 never made a propagating entry non-propagating"
        );
        assert_eq!(p.after, off);
        let p = plan("/vms/101", &grant(true), &off);
        assert_eq!(p.puts[0].propagate, Some(true));
        assert_eq!(p.changes(), ["grant PVEVMUser to user jdoe@ad (propagating)"]);
    }

    #[test]
    fn a_grant_leaves_other_entries_and_other_paths_alone() {
        let mut other_path = entry("user", "jdoe@ad", "PVEVMUser", true);
        other_path.path = "/vms/102".into();
        let entries = [entry("group", "owners", "PVEVMUser", true), other_path];
        let p = plan("/vms/101", &grant(true), &entries);
        assert_eq!(p.before, [entry("group", "owners", "PVEVMUser", true)]);
        assert_eq!(p.after.len(), 2);
        assert_eq!(p.puts.len(), 1);
    }

    #[test]
    fn absent_with_only_the_path_removes_every_entry_whatever_its_flag() {
        let entries = [
            entry("user", "jdoe@ad", "PVEVMUser", false),
            entry("user", "jdoe@ad", "PVEAuditor", true),
            entry("group", "owners", "PVEVMUser", true),
        ];
        let all = Want::Remove {
            kind: None,
            ugid: None,
            roleid: None,
        };
        let p = plan("/vms/101", &all, &entries);
        assert!(p.after.is_empty());
        assert_eq!(
            p.puts,
            [
                Put {
                    kind: "user".into(),
                    ugid: "jdoe@ad".into(),
                    roles: vec!["PVEVMUser".into(), "PVEAuditor".into()],
                    propagate: None
                },
                Put {
                    kind: "group".into(),
                    ugid: "owners".into(),
                    roles: vec!["PVEVMUser".into()],
                    propagate: None
                }
            ]
        );
        let one = Want::Remove {
            kind: Some("user".into()),
            ugid: Some("jdoe@ad".into()),
            roleid: Some("PVEAuditor".into()),
        };
        let p = plan("/vms/101", &one, &entries);
        assert_eq!(p.after.len(), 2);
        assert_eq!(p.changes(), ["remove PVEAuditor from user jdoe@ad"]);
        assert!(plan("/vms/102", &all, &entries).puts.is_empty(), "nothing on that path");
    }
}
