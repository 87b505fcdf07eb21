//! Privileges as pve-access-control computes them (`PVE::AccessControl::roles`,
//! `PVE::RPCEnvironment::permissions`): ACL paths with propagation, `NoAccess`, roles
//! inherited from pools, privilege-separated tokens, and the built-in roles derived from
//! PVE 9's privilege groups (9.0 removed `VM.Monitor`; the guest agent has its own).

use crate::auth::Identity;
use crate::state::Cluster;
use std::collections::{BTreeMap, BTreeSet};

/// Privilege → propagate flag, as `GET /access/permissions` reports them.
pub type Privs = BTreeMap<String, bool>;

/// One category of PVE's privilege groups: (root-only, admin, user, audit).
struct Group {
    category: &'static str,
    root: &'static [&'static str],
    admin: &'static [&'static str],
    user: &'static [&'static str],
    audit: &'static [&'static str],
}

const GROUPS: &[Group] = &[
    Group {
        category: "VM",
        root: &[],
        admin: &[
            "VM.Config.Disk",
            "VM.Config.CPU",
            "VM.Config.Memory",
            "VM.Config.Network",
            "VM.Config.HWType",
            "VM.Config.Options",
            "VM.Allocate",
            "VM.Clone",
            "VM.GuestAgent.Unrestricted",
            "VM.Migrate",
            "VM.Replicate",
            "VM.Snapshot",
            "VM.Snapshot.Rollback",
        ],
        user: &[
            "VM.Config.CDROM",
            "VM.Config.Cloudinit",
            "VM.Console",
            "VM.Backup",
            "VM.GuestAgent.FileRead",
            "VM.GuestAgent.FileSystemMgmt",
            "VM.GuestAgent.FileWrite",
            "VM.PowerMgmt",
        ],
        audit: &["VM.Audit", "VM.GuestAgent.Audit"],
    },
    Group {
        category: "Sys",
        root: &["Sys.PowerMgmt", "Sys.Modify", "Sys.Incoming", "Sys.AccessNetwork"],
        admin: &["Sys.Console", "Sys.Syslog"],
        user: &[],
        audit: &["Sys.Audit"],
    },
    Group {
        category: "Datastore",
        root: &[],
        admin: &["Datastore.Allocate", "Datastore.AllocateTemplate"],
        user: &["Datastore.AllocateSpace"],
        audit: &["Datastore.Audit"],
    },
    Group {
        category: "SDN",
        root: &[],
        admin: &["SDN.Allocate", "SDN.Audit"],
        user: &["SDN.Use"],
        audit: &["SDN.Audit"],
    },
    Group {
        category: "User",
        root: &["Realm.Allocate"],
        admin: &["User.Modify", "Group.Allocate", "Realm.AllocateUser"],
        user: &[],
        audit: &[],
    },
    Group {
        category: "Pool",
        root: &[],
        admin: &["Pool.Allocate"],
        user: &["Pool.Audit"],
        audit: &["Pool.Audit"],
    },
    Group {
        category: "Mapping",
        root: &[],
        admin: &["Mapping.Modify"],
        user: &["Mapping.Use"],
        audit: &["Mapping.Audit"],
    },
];

/// Every privilege PVE 9 knows.
pub fn all_privileges() -> BTreeSet<&'static str> {
    let mut all: BTreeSet<&'static str> = ["Permissions.Modify"].into();
    for g in GROUPS {
        all.extend(g.root.iter().chain(g.admin).chain(g.user).chain(g.audit));
    }
    all
}

/// PVE's built-in roles: Administrator, NoAccess, PVEAdmin, PVE<Cat>Admin, PVE<Cat>User,
/// PVEAuditor, PVETemplateUser.
pub fn builtin_role(name: &str) -> Option<BTreeSet<&'static str>> {
    let mut out = BTreeSet::new();
    match name {
        "Administrator" => return Some(all_privileges()),
        "NoAccess" => return Some(out),
        "PVETemplateUser" => return Some(["VM.Clone", "VM.Audit"].into()),
        "PVEAdmin" => {
            for g in GROUPS {
                out.extend(g.admin.iter().chain(g.user).chain(g.audit));
            }
            out.remove("Mapping.Modify");
        }
        "PVEAuditor" => {
            for g in GROUPS {
                out.extend(g.audit);
            }
        }
        _ => {
            let g = GROUPS
                .iter()
                .find(|g| name == format!("PVE{}Admin", g.category) || name == format!("PVE{}User", g.category))?;
            if name.ends_with("Admin") {
                out.extend(g.admin.iter().chain(g.user).chain(g.audit));
            } else if g.user.is_empty() {
                return None;
            } else {
                out.extend(g.user.iter().chain(g.audit));
            }
        }
    }
    Some(out)
}

/// The names of PVE's built-in roles (`special` in `GET /access/roles`), sorted.
pub fn builtin_role_names() -> Vec<String> {
    let mut names: Vec<String> = ["Administrator", "NoAccess", "PVEAdmin", "PVEAuditor", "PVETemplateUser"]
        .map(String::from)
        .to_vec();
    for g in GROUPS {
        names.push(format!("PVE{}Admin", g.category));
        if !g.user.is_empty() {
            names.push(format!("PVE{}User", g.category));
        }
    }
    names.sort_unstable();
    names
}

/// The privileges of a role `user.cfg` knows (a scenario role, else a built-in one);
/// `None` for a role that does not exist.
pub fn role_privileges(c: &Cluster, role: &str) -> Option<Vec<String>> {
    match c.roles.get(role) {
        Some(p) => Some(p.clone()),
        None => builtin_role(role).map(|set| set.into_iter().map(String::from).collect()),
    }
}

fn role_privs(c: &Cluster, role: &str) -> Vec<String> {
    match c.roles.get(role) {
        Some(p) => p.clone(),
        None => builtin_role(role)
            .unwrap_or_default()
            .into_iter()
            .map(String::from)
            .collect(),
    }
}

/// Roles of one ACL subject (user, or token id `user@realm!name`) on `path`: walking from
/// `/` down, the deepest level with an entry that applies (the path itself, or a
/// propagating parent) replaces what the levels above gave; at one level a user's own
/// entries replace those of its groups (`PVE::AccessControl::roles`); `NoAccess` wins
/// over the rest.
fn roles(c: &Cluster, ugid: &str, path: &str) -> BTreeMap<String, bool> {
    let mut levels = vec!["/".to_string()];
    let mut acc = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        acc.push('/');
        acc.push_str(seg);
        levels.push(acc.clone());
    }
    // Tokens are in no group; a user's groups count at a level without entries of the
    // user's own ("user roles override group roles").
    let groups = if ugid.contains('!') {
        Vec::new()
    } else {
        c.groups_of(ugid)
    };
    let mut roles = BTreeMap::new();
    for (i, level) in levels.iter().enumerate() {
        let last = i == levels.len() - 1;
        let applies = |a: &&crate::state::AclDef| &a.path == level && (last || a.propagate);
        let mut new = BTreeMap::new();
        for e in c.acls.iter().filter(|a| a.ugid == ugid).filter(applies) {
            for r in &e.roles {
                new.insert(r.clone(), e.propagate);
            }
        }
        if new.is_empty() {
            for e in c.group_acls.iter().filter(|a| groups.contains(&a.ugid)).filter(applies) {
                for r in &e.roles {
                    new.insert(r.clone(), e.propagate);
                }
            }
        }
        if !new.is_empty() {
            roles = new;
        }
    }
    match roles.get("NoAccess") {
        Some(p) => BTreeMap::from([("NoAccess".to_string(), *p)]),
        None => roles,
    }
}

/// The roles a pool grants on its members (`/vms/<id>`, `/storage/<id>`), never propagating.
fn pool_roles(c: &Cluster, ugid: &str, path: &str) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    for p in &c.pools {
        let member = path
            .strip_prefix("/vms/")
            .is_some_and(|id| p.vms.iter().any(|v| v.to_string() == id))
            || path
                .strip_prefix("/storage/")
                .is_some_and(|id| p.storage.iter().any(|s| s == id));
        if member {
            for r in roles(c, ugid, &format!("/pool/{}", p.poolid)).into_keys() {
                out.insert(r, false);
            }
        }
    }
    out
}

/// Privileges of one subject on `path`, with their propagate flags.
fn subject_privs(c: &Cluster, ugid: &str, path: &str) -> Privs {
    let mut roles = roles(c, ugid, path);
    let from_pools = pool_roles(c, ugid, path);
    if !from_pools.is_empty() && !roles.contains_key("NoAccess") {
        if from_pools.contains_key("NoAccess") {
            roles = BTreeMap::from([("NoAccess".to_string(), false)]);
        } else {
            for (r, p) in from_pools {
                roles.entry(r).or_insert(p);
            }
        }
    }
    let mut privs = Privs::new();
    for (role, propagate) in roles {
        for p in role_privs(c, &role) {
            let e = privs.entry(p).or_insert(false);
            *e = *e || propagate;
        }
    }
    privs
}

/// Effective privileges of the caller on `path` (`PVE::RPCEnvironment::permissions`):
/// `root@pam` has all; a token without privilege separation has its user's; a separated
/// token has what both it and its user have.
pub fn permissions(c: &Cluster, who: &Identity, path: &str) -> Privs {
    let everything = || {
        all_privileges()
            .into_iter()
            .map(|p| (p.to_string(), true))
            .collect::<Privs>()
    };
    let user_privs = || {
        if who.userid == "root@pam" {
            everything()
        } else {
            subject_privs(c, &who.userid, path)
        }
    };
    let Some(t) = &who.tokenid else { return user_privs() };
    let Some(token) = c.user(&who.userid).and_then(|u| u.tokens.iter().find(|x| &x.id == t)) else {
        return Privs::new();
    };
    let user = user_privs();
    if !token.privsep {
        return user;
    }
    let own = subject_privs(c, &format!("{}!{}", who.userid, t), path);
    own.into_iter()
        .filter_map(|(p, prop)| user.get(&p).map(|up| (p, prop && *up)))
        .collect()
}

/// The paths of `user.cfg`'s ACL tree (`iterate_acl_tree` from `acl_root`): the path of
/// every entry, of users, tokens and groups alike, and every path above it (the tree has
/// a node for each of them).
fn acl_tree_nodes(c: &Cluster) -> BTreeSet<String> {
    let mut nodes = BTreeSet::from(["/".to_string()]);
    for a in c.acls.iter().chain(&c.group_acls) {
        let mut node = String::new();
        for seg in a.path.split('/').filter(|s| !s.is_empty()) {
            node.push('/');
            node.push_str(seg);
            nodes.insert(node.clone());
        }
    }
    nodes
}

/// `GET /access/permissions` without `path` (`get_effective_permissions`): every
/// top-level path, every node of the ACL tree and every pool member, leaving out paths
/// without any privilege.
pub fn effective(c: &Cluster, who: &Identity) -> BTreeMap<String, Privs> {
    let mut paths: BTreeSet<String> = [
        "/",
        "/access",
        "/access/groups",
        "/nodes",
        "/pool",
        "/sdn",
        "/storage",
        "/vms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    paths.extend(acl_tree_nodes(c));
    for p in &c.pools {
        paths.extend(p.vms.iter().map(|v| format!("/vms/{v}")));
        paths.extend(p.storage.iter().map(|s| format!("/storage/{s}")));
    }
    paths
        .into_iter()
        .map(|p| (permissions(c, who, &p), p))
        .filter(|(privs, _)| !privs.is_empty())
        .map(|(privs, p)| (p, privs))
        .collect()
}

/// `check_sdn_bridge`: any of `privs` on the bridge, or on one of the bridge's children in
/// the ACL tree (a VLAN with an entry, of a user, token or group, on it or below it).
pub fn bridge_visible(c: &Cluster, who: &Identity, zone: &str, bridge: &str, privs: &[&str]) -> bool {
    let path = format!("/sdn/zones/{zone}/{bridge}");
    let any = |p: &str| {
        let have = permissions(c, who, p);
        privs.iter().any(|x| have.contains_key(*x))
    };
    if any(&path) {
        return true;
    }
    let prefix = format!("{path}/");
    let vlans: BTreeSet<String> = acl_tree_nodes(c)
        .into_iter()
        .filter(|node| node.strip_prefix(&prefix).is_some_and(|v| !v.contains('/')))
        .collect();
    vlans.iter().any(|v| any(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{AclDef, PoolDef, TokenDef, UserDef};

    fn cluster() -> Cluster {
        let mut c = crate::Scenario::default_cluster().to_cluster().unwrap();
        c.users.push(UserDef {
            userid: "ops@pve".into(),
            password: None,
            enable: true,
            totp_secret: None,
            tokens: vec![
                TokenDef {
                    id: "sep".into(),
                    secret: "s".into(),
                    privsep: true,
                },
                TokenDef {
                    id: "full".into(),
                    secret: "f".into(),
                    privsep: false,
                },
            ],
        });
        c
    }
    fn acl(path: &str, ugid: &str, role: &str, propagate: bool) -> AclDef {
        AclDef {
            path: path.into(),
            ugid: ugid.into(),
            roles: vec![role.into()],
            propagate,
        }
    }
    fn who(u: &str, t: Option<&str>) -> Identity {
        Identity {
            userid: u.into(),
            tokenid: t.map(String::from),
        }
    }

    #[test]
    fn builtin_roles_follow_the_privilege_groups() {
        let vm_admin = builtin_role("PVEVMAdmin").unwrap();
        assert!(vm_admin.contains("VM.GuestAgent.Audit") && !vm_admin.contains("Datastore.AllocateSpace"));
        assert!(!all_privileges().contains("VM.Monitor"), "PVE 9 has no VM.Monitor");
        assert_eq!(
            builtin_role("PVEDatastoreUser").unwrap(),
            ["Datastore.AllocateSpace", "Datastore.Audit"].into()
        );
        assert!(
            builtin_role("PVESysUser").is_none(),
            "Sys has no user privileges, so no PVESysUser"
        );
        assert!(
            !builtin_role("PVEAdmin").unwrap().contains("Sys.Modify"),
            "root-only privileges stay out of PVEAdmin"
        );
    }

    #[test]
    fn propagation_noaccess_and_the_deepest_level() {
        let mut c = cluster();
        c.acls.push(acl("/", "ops@pve", "PVEVMUser", true));
        c.acls.push(acl("/vms/100", "ops@pve", "PVEVMAdmin", false));
        c.acls.push(acl("/storage", "ops@pve", "PVEDatastoreUser", false));
        c.acls.push(acl("/vms/101", "ops@pve", "NoAccess", true));
        let ops = who("ops@pve", None);
        assert_eq!(
            permissions(&c, &ops, "/vms/100").get("VM.Allocate"),
            Some(&false),
            "set on the path itself, not propagating"
        );
        assert_eq!(permissions(&c, &ops, "/vms/102").get("VM.PowerMgmt"), Some(&true));
        assert!(permissions(&c, &ops, "/vms/101").is_empty(), "NoAccess");
        assert!(
            !permissions(&c, &ops, "/storage/vmdata").contains_key("Datastore.AllocateSpace"),
            "a non-propagating parent gives nothing below"
        );
        assert!(permissions(&c, &ops, "/storage").contains_key("Datastore.AllocateSpace"));
    }

    #[test]
    fn tokens_with_and_without_privilege_separation() {
        let mut c = cluster();
        c.acls.push(acl("/", "ops@pve", "PVEVMAdmin", true));
        c.acls.push(acl("/", "ops@pve!sep", "PVEVMUser", true));
        c.acls.push(acl("/", "ops@pve!sep", "PVEDatastoreUser", true));
        let sep = permissions(&c, &who("ops@pve", Some("sep")), "/vms/100");
        assert!(
            sep.contains_key("VM.PowerMgmt") && !sep.contains_key("VM.Allocate"),
            "the token's own roles"
        );
        assert!(!sep.contains_key("Datastore.AllocateSpace"), "never more than the user");
        assert!(permissions(&c, &who("ops@pve", Some("full")), "/vms/100").contains_key("VM.Allocate"));
        assert!(permissions(&c, &who("ops@pve", Some("nope")), "/").is_empty());
        let root_token = who("root@pam", Some("t"));
        assert!(
            permissions(&c, &root_token, "/").is_empty(),
            "root@pam!t does not exist in the scenario"
        );
    }

    #[test]
    fn pools_grant_their_members_but_not_over_noaccess() {
        let mut c = cluster();
        c.pools.push(PoolDef {
            poolid: "team".into(),
            comment: None,
            vms: vec![100],
            storage: vec!["vmdata".into()],
        });
        c.acls.push(acl("/pool/team", "ops@pve", "PVEVMAdmin", true));
        c.acls.push(acl("/pool/team", "ops@pve", "PVEDatastoreUser", true));
        let ops = who("ops@pve", None);
        assert_eq!(
            permissions(&c, &ops, "/vms/100").get("VM.Allocate"),
            Some(&false),
            "pool roles never propagate"
        );
        assert!(permissions(&c, &ops, "/storage/vmdata").contains_key("Datastore.AllocateSpace"));
        assert!(permissions(&c, &ops, "/vms/101").is_empty());
        c.acls.push(acl("/vms/100", "ops@pve", "NoAccess", false));
        assert!(permissions(&c, &ops, "/vms/100").is_empty());
        let eff = effective(&c, &ops);
        assert!(eff.contains_key("/pool/team") && eff.contains_key("/storage/vmdata") && !eff.contains_key("/vms/100"));
    }

    #[test]
    fn group_entries_count_in_the_effective_paths_and_for_a_bridge() {
        let mut c = cluster();
        c.groups.push(crate::state::GroupDef {
            groupid: "net".into(),
            comment: None,
            users: vec!["ops@pve".into()],
        });
        c.group_acls
            .push(acl("/sdn/zones/localnetwork/vmbr1/20", "net", "PVESDNUser", true));
        c.group_acls
            .push(acl("/storage/vmdata", "net", "PVEDatastoreUser", false));
        let ops = who("ops@pve", None);
        let eff = effective(&c, &ops);
        assert!(
            eff["/storage/vmdata"].contains_key("Datastore.AllocateSpace"),
            "{eff:?}"
        );
        assert!(
            eff["/sdn/zones/localnetwork/vmbr1/20"].contains_key("SDN.Use"),
            "{eff:?}"
        );
        assert!(bridge_visible(&c, &ops, "localnetwork", "vmbr1", &["SDN.Use"]));
        // A node above an entry is a path of the tree too.
        c.group_acls.push(acl("/", "net", "PVEAuditor", true));
        assert!(effective(&c, &ops).contains_key("/sdn/zones/localnetwork"));
    }

    #[test]
    fn a_bridge_is_visible_through_one_of_its_vlans() {
        let mut c = cluster();
        c.acls
            .push(acl("/sdn/zones/localnetwork/vmbr1/20", "ops@pve", "PVESDNUser", true));
        let ops = who("ops@pve", None);
        assert!(bridge_visible(
            &c,
            &ops,
            "localnetwork",
            "vmbr1",
            &["SDN.Audit", "SDN.Use"]
        ));
        assert!(!bridge_visible(
            &c,
            &ops,
            "localnetwork",
            "vmbr0",
            &["SDN.Audit", "SDN.Use"]
        ));
    }
}
