//! The caller's privileges as PVE reports them (`GET /access/permissions`, one call,
//! privilege separation of tokens already applied) held against what a plan needs.
//!
//! The answer without `path` lists the paths that have ACL entries (and the top-level
//! ones), each with its privileges and whether they propagate. A path not listed gets
//! what propagates from its deepest listed parent that passes anything down — which is
//! how PVE resolves it when no ACL sits in between. The privileges come from the
//! cluster, never from a list of ours, so they follow the PVE version (9.0 removed
//! `VM.Monitor`; a privilege PVE no longer has is never demanded).

use std::collections::BTreeMap;

use serde_json::Value;

use super::needs::{Check, Need};
use ferrox_pve_client::connection::ConnectionParams;

/// Who the API sees: `user@realm`, or `user@realm!token` for an API token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// `user@realm` or `user@realm!token`.
    pub id: String,
}

impl Caller {
    /// Who the API sees for these connection options: the token when it alone authenticates, else the user;
    /// in local mode (no host: pvesh on the node) `root@pam`, whatever `api_user` says.
    pub fn of(conn: &ConnectionParams) -> Caller {
        if conn.host.is_empty() {
            return Caller {
                id: crate::connection::LOCAL_USER.into(),
            };
        }
        let id = match (&conn.password, &conn.token_id) {
            (None, Some(t)) => format!("{}!{t}", conn.user),
            _ => conn.user.clone(),
        };
        Caller { id }
    }
    /// `root@pam` logged in with a password, or pvesh on a node (local mode): PVE checks nothing for it.
    pub fn is_root(&self) -> bool {
        self.id == "root@pam"
    }
}

/// Privileges per ACL path, with their propagate flags.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Privileges {
    paths: BTreeMap<String, BTreeMap<String, bool>>,
}

impl Privileges {
    /// From the data of `GET /access/permissions`.
    pub fn from_answer(data: &Value) -> Privileges {
        let mut paths = BTreeMap::new();
        for (path, privs) in data.as_object().into_iter().flatten() {
            let privs = privs
                .as_object()
                .into_iter()
                .flatten()
                .map(|(p, v)| (p.clone(), v.as_i64().unwrap_or(0) != 0 || v == &Value::Bool(true)))
                .collect();
            paths.insert(path.clone(), privs);
        }
        Privileges { paths }
    }

    /// Whether the caller holds `privilege` on `path`.
    pub fn has(&self, path: &str, privilege: &str) -> bool {
        if let Some(here) = self.paths.get(path) {
            return here.contains_key(privilege);
        }
        let mut parent = path;
        while let Some(cut) = parent.rfind('/') {
            parent = if cut == 0 { "/" } else { &parent[..cut] };
            if let Some(privs) = self.paths.get(parent) {
                if privs.values().any(|p| *p) {
                    return privs.get(privilege) == Some(&true);
                }
            }
            if parent == "/" {
                break;
            }
        }
        false
    }

    /// Whether the caller holds `privilege` on `path` with propagation (what it may hand
    /// out on a propagating ACL entry).
    pub fn propagates(&self, path: &str, privilege: &str) -> bool {
        match self.paths.get(path) {
            Some(here) => here.get(privilege) == Some(&true),
            // Not listed: what it has there came down from a parent, propagating.
            None => self.has(path, privilege),
        }
    }

    /// The first of `needs` the caller does not meet; a tag counts as allowed (see
    /// [`Privileges::first_refused_by`]).
    pub fn first_refused<'a>(&self, caller: &Caller, needs: &'a [Need]) -> Option<Refusal<'a>> {
        self.first_refused_by(caller, needs, &|_| true)
    }

    /// The first of `needs` the caller does not meet; `tag_allowed` says whether the
    /// cluster's tag rules let a caller without `Sys.Modify` on `/` use a tag (true
    /// when they are not known: then PVE decides).
    pub fn first_refused_by<'a>(
        &self,
        caller: &Caller,
        needs: &'a [Need],
        tag_allowed: &dyn Fn(&str) -> bool,
    ) -> Option<Refusal<'a>> {
        if caller.is_root() {
            return None;
        }
        needs.iter().find_map(|need| match &need.check {
            Check::Tag { tag } => (!self.has("/", "Sys.Modify") && !tag_allowed(tag)).then(|| Refusal {
                need,
                missing: vec!["Sys.Modify"],
                path: Some("/".into()),
            }),
            Check::Handout {
                role,
                privileges,
                path,
                propagating,
            } => {
                if self.has(path, "Permissions.Modify") {
                    return None;
                }
                let lacking = role == "NoAccess"
                    || privileges
                        .iter()
                        .any(|p| !self.has(path, p) || (*propagating && !self.propagates(path, p)));
                lacking.then(|| Refusal {
                    need,
                    missing: vec!["Permissions.Modify"],
                    path: Some(path.clone()),
                })
            }
            Check::RootOnly => Some(Refusal {
                need,
                missing: Vec::new(),
                path: None,
            }),
            Check::All {
                privileges,
                path,
                or_path,
            } => {
                if or_path
                    .as_deref()
                    .is_some_and(|p| privileges.iter().all(|x| self.has(p, x)))
                {
                    return None;
                }
                let missing: Vec<&str> = privileges.iter().copied().filter(|x| !self.has(path, x)).collect();
                (!missing.is_empty()).then(|| Refusal {
                    need,
                    missing,
                    path: Some(path.clone()),
                })
            }
            Check::Either {
                privileges,
                path,
                or_privileges,
                or_path,
            } => {
                if or_privileges.iter().all(|x| self.has(or_path, x)) {
                    return None;
                }
                let missing: Vec<&str> = privileges.iter().copied().filter(|x| !self.has(path, x)).collect();
                (!missing.is_empty()).then(|| Refusal {
                    need,
                    missing,
                    path: Some(path.clone()),
                })
            }
            Check::Any { privileges, path } => (!privileges.iter().any(|x| self.has(path, x))).then(|| Refusal {
                need,
                missing: privileges.clone(),
                path: Some(path.clone()),
            }),
        })
    }
}

/// A need PVE would refuse, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal<'a> {
    /// The need refused.
    pub need: &'a Need,
    /// The privileges missing (for an any-of check: all of them, one would do).
    pub missing: Vec<&'static str>,
    /// `None` for a root-only key.
    pub path: Option<String>,
}

impl Refusal<'_> {
    /// `needs Datastore.AllocateSpace on /storage/vmdata, which ansible@pve!automation
    /// does not have`.
    pub fn reason(&self, caller: &Caller) -> String {
        let Some(path) = &self.path else {
            return format!(
                "only root@pam may set {} (Proxmox VE refuses it to every other user and to API tokens, root's included), and the task runs as {}",
                self.need.what, caller.id
            );
        };
        if let Check::Handout {
            role,
            privileges,
            propagating,
            ..
        } = &self.need.check
        {
            let why = if role == "NoAccess" {
                "the role NoAccess can only be handed out with it".to_string()
            } else {
                let how = if *propagating { "propagating " } else { "" };
                format!(
                    "without it a caller may only hand out a role whose privileges it holds there itself ({how}{}), and {role} has more",
                    privileges.join(", ")
                )
            };
            return format!(
                "needs Permissions.Modify on {path} to hand out the role {role} ({why}), which {} does not have",
                caller.id
            );
        }
        if let Check::Tag { tag } = &self.need.check {
            return format!(
                "needs Sys.Modify on {path} to add or remove the tag '{tag}' (datacenter.cfg's user-tag-access does not let other users use it, or its registered-tags holds it), which {} does not have",
                caller.id
            );
        }
        let joiner = match self.need.check {
            Check::Any { .. } => " or ",
            _ => " and ",
        };
        let alternative = match &self.need.check {
            Check::Either {
                or_privileges, or_path, ..
            } => format!(" (or {} on {or_path})", or_privileges.join(" and ")),
            _ => String::new(),
        };
        format!(
            "needs {} on {path}{alternative}, which {} does not have",
            self.missing.join(joiner),
            caller.id
        )
    }

    /// The privilege words for a plan record: `Datastore.AllocateSpace`, `A|B`, `root@pam`.
    pub fn privilege(&self) -> String {
        match (&self.path, &self.need.check) {
            (None, _) => "root@pam".into(),
            (Some(_), Check::Any { .. }) => self.missing.join("|"),
            _ => self.missing.join(","),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrox_pve_rules::privileges::needs::{needs, Write};
    use serde_json::json;

    fn token() -> Caller {
        Caller {
            id: "ansible@pve!automation".into(),
        }
    }

    /// The token of PVE's docs: a role on / without storage and network privileges,
    /// which it holds on one storage and one bridge.
    fn answer() -> Privileges {
        Privileges::from_answer(&json!({
            "/": {"VM.Allocate": 1, "VM.Config.Disk": 1, "VM.Config.Network": 1, "VM.Audit": 1, "Datastore.Audit": 1},
            "/storage/local-lvm": {"Datastore.AllocateSpace": 1, "Datastore.Audit": 1},
            "/sdn/zones/localnetwork/vmbr0": {"SDN.Use": 1, "SDN.Audit": 1},
            "/vms/100": {"VM.Audit": 0},
        }))
    }

    #[test]
    fn unlisted_paths_inherit_what_propagates() {
        let p = answer();
        assert!(p.has("/vms/101", "VM.Allocate"));
        assert!(p.has("/storage/vmdata", "Datastore.Audit") && !p.has("/storage/vmdata", "Datastore.AllocateSpace"));
        assert!(
            p.has("/sdn/zones/localnetwork/vmbr0/20", "SDN.Use"),
            "a bridge's privileges reach its VLANs"
        );
        assert!(!p.has("/sdn/zones/localnetwork/vmbr1", "SDN.Use"));
        assert!(
            p.has("/vms/100", "VM.Audit") && !p.has("/vms/100", "VM.Allocate"),
            "a listed path answers for itself"
        );
        assert!(
            !p.has("/vms/100/x", "VM.Allocate") || p.has("/", "VM.Allocate"),
            "below a path without propagation: from further up"
        );
    }

    #[test]
    fn the_first_refusal_names_privilege_path_and_caller() {
        let w = Write::Config {
            vmid: 101,
            set: vec![("scsi1".into(), "vmdata:32".into(), None)],
            delete: vec![],
        };
        let n = needs(&w);
        let r = answer().first_refused(&token(), &n).unwrap();
        assert_eq!(r.need.what, "scsi1");
        assert_eq!(
            r.reason(&token()),
            "needs Datastore.AllocateSpace on /storage/vmdata, which ansible@pve!automation does not have"
        );
        let ok = Write::Config {
            vmid: 101,
            set: vec![("scsi1".into(), "local-lvm:32".into(), None)],
            delete: vec![],
        };
        assert!(answer().first_refused(&token(), &needs(&ok)).is_none());
        let root = Caller { id: "root@pam".into() };
        assert!(Privileges::default().first_refused(&root, &n).is_none());
        let hook = Write::Config {
            vmid: 101,
            set: vec![("hookscript".into(), "local:snippets/h.sh".into(), None)],
            delete: vec![],
        };
        let root_token = Caller {
            id: "root@pam!ci".into(),
        };
        let all = Privileges::from_answer(&json!({"/": {"VM.Config.Options": 1, "VM.Config.Disk": 1}}));
        let hn = needs(&hook);
        let r = all.first_refused(&root_token, &hn).unwrap();
        assert!(
            r.reason(&root_token).starts_with("only root@pam may set hookscript"),
            "{}",
            r.reason(&root_token)
        );
    }

    #[test]
    fn a_download_needs_the_nodes_network_or_sys_modify_on_root() {
        let write = Write::DownloadUrl {
            node: "pve1".into(),
            storage: "local".into(),
        };
        let all = needs(&write);
        let templates = json!({"/storage": {"Datastore.AllocateTemplate": 1}});
        let mut with_network = templates.clone();
        with_network["/nodes/pve1"] = json!({"Sys.AccessNetwork": 1});
        assert_eq!(
            Privileges::from_answer(&with_network).first_refused(&token(), &all),
            None
        );
        let mut with_root = templates.clone();
        with_root["/"] = json!({"Sys.Audit": 1, "Sys.Modify": 1});
        assert_eq!(Privileges::from_answer(&with_root).first_refused(&token(), &all), None);
        let refused = Privileges::from_answer(&templates);
        let r = refused.first_refused(&token(), &all).expect("refused");
        assert_eq!(
            r.reason(&token()),
            "needs Sys.Audit and Sys.Modify on / (or Sys.AccessNetwork on /nodes/pve1), which ansible@pve!automation does not have"
        );
    }

    #[test]
    fn local_mode_is_root_whatever_api_user_says() {
        let local = ConnectionParams {
            user: "ansible@pve".into(),
            token_id: Some("automation".into()),
            ..ConnectionParams::default()
        };
        assert!(Caller::of(&local).is_root());
        let over_https = ConnectionParams {
            host: "pve1".into(),
            ..local
        };
        assert_eq!(Caller::of(&over_https).id, "ansible@pve!automation");
    }
}
