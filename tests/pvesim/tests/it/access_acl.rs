//! Users, groups, roles and the ACL tree through the API: `GET`/`PUT /access/acl` with
//! pve-access-control's checks and texts, `GET /access/users[/{userid}]`, and pools made
//! and removed (`POST`/`DELETE /pools`) in both forms with their version gate.

use crate::common::*;
use pvesim::state::{GroupDef, RealmDef, UserDef};
use serde_json::{json, Value};

/// The default cluster plus an AD realm with `jdoe@ad` (in group `owners`) and a user
/// who may only hand out VM rights (`VM.Allocate` on `/vms`, no `Sys.Audit`).
fn scenario() -> pvesim::Scenario {
    let mut s = pvesim::Scenario::default_cluster();
    s.realms.push(RealmDef {
        realm: "ad".into(),
        kind: "ad".into(),
        case_sensitive: true,
    });
    for id in ["jdoe@ad", "vmadmin@pve"] {
        s.users.push(UserDef {
            userid: id.into(),
            password: Some("pw".into()),
            enable: true,
            totp_secret: None,
            tokens: vec![],
        });
    }
    // A token with its user's rights (no privilege separation): none on /access/groups.
    let vmadmin = s.users.last_mut().expect("vmadmin@pve");
    vmadmin.tokens.push(pvesim::state::TokenDef {
        id: "vm".into(),
        secret: VMADMIN_TOKEN_SECRET.into(),
        privsep: false,
    });
    s.groups.push(GroupDef {
        groupid: "owners".into(),
        comment: Some("VM owners".into()),
        users: vec!["jdoe@ad".into()],
    });
    s.acls.push(pvesim::state::AclDef {
        path: "/vms".into(),
        ugid: "vmadmin@pve".into(),
        roles: vec!["PVEVMAdmin".into()],
        propagate: true,
    });
    s
}

const VMADMIN_TOKEN_SECRET: &str = "3c1f7a52-9d0e-4b6a-8e21-7f5d0c9b2a64";

fn start() -> Api {
    Api::start(pvesim::SimConfig {
        scenario: scenario(),
        ..quick()
    })
}

fn login(api: &mut Api, user: &str, password: &str) {
    let t = api.post("/access/ticket", &[("username", user), ("password", password)]);
    let ticket = format!("PVEAuthCookie={}", t.data()["ticket"].as_str().expect("ticket"));
    let csrf = t.data()["CSRFPreventionToken"].as_str().unwrap().to_string();
    api.with_auth(vec![("Cookie", &ticket), ("CSRFPreventionToken", &csrf)]);
}

fn on_path(api: &Api, path: &str) -> Vec<Value> {
    let r = api.get("/access/acl");
    assert_eq!(r.status, 200, "{}", r.raw);
    r.data()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"] == path)
        .cloned()
        .collect()
}

#[test]
fn acl_entries_are_added_changed_and_removed_with_their_propagate_flag() {
    let mut api = start();
    api.login_root();
    let r = api.put(
        "/access/acl",
        &[
            ("path", "/vms/100"),
            ("users", "jdoe@ad"),
            ("roles", "PVEVMUser"),
            ("propagate", "0"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(
        on_path(&api, "/vms/100"),
        [json!({"path": "/vms/100", "type": "user", "ugid": "jdoe@ad", "roleid": "PVEVMUser", "propagate": 0})]
    );
    // Setting it again with the default propagate changes the flag in place.
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("users", "jdoe@ad"), ("roles", "PVEVMUser")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(on_path(&api, "/vms/100")[0]["propagate"], 1);
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("groups", "owners"), ("roles", "PVEAuditor")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let types: Vec<String> = on_path(&api, "/vms/100")
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(types, ["user", "group"], "users before groups at one path");
    // A delete ignores the flag and removes the role of that subject only.
    let r = api.put(
        "/access/acl",
        &[
            ("path", "/vms/100"),
            ("users", "jdoe@ad"),
            ("roles", "PVEVMUser"),
            ("delete", "1"),
            ("propagate", "0"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(on_path(&api, "/vms/100").len(), 1);
    assert_eq!(on_path(&api, "/vms/100")[0]["ugid"], "owners");
}

#[test]
fn acl_refusals_in_pve_order_and_words() {
    let mut api = start();
    api.login_root();
    let r = api.put("/access/acl", &[("path", "/vms/100"), ("roles", "PVEVMUser")]);
    assert_eq!(r.status, 400);
    assert_eq!(r.error("users"), "either 'users', 'groups' or 'tokens' is required.");
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/9"), ("users", "jdoe@ad"), ("roles", "PVEVMUser")],
    );
    assert_eq!((r.status, r.error("path")), (400, "invalid ACL path '/vms/9'".into()));
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("users", "nobody@ad"), ("roles", "PVEVMUser")],
    );
    assert_eq!(
        (r.status, r.message()),
        (500, "ACL update failed: user 'nobody@ad' does not exist\n".into())
    );
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("users", "jdoe@ad"), ("roles", "Owner")],
    );
    assert_eq!(r.message(), "ACL update failed: role 'Owner' does not exist\n");
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("groups", "nogroup"), ("roles", "PVEVMUser")],
    );
    assert_eq!(r.message(), "ACL update failed: group 'nogroup' does not exist\n");
    let r = api.put(
        "/access/acl",
        &[
            ("path", "/vms/100"),
            ("tokens", "ansible@pve!nope"),
            ("roles", "PVEVMUser"),
        ],
    );
    assert_eq!(
        r.message(),
        "ACL update failed: no such token 'nope' for user 'ansible@pve'\n"
    );
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("users", "jdoe"), ("roles", "PVEVMUser")],
    );
    assert_eq!(
        (r.status, r.error("users")),
        (
            400,
            "invalid format - value 'jdoe' does not look like a valid user name\n".into()
        )
    );
    assert!(on_path(&api, "/vms/100").is_empty(), "nothing was written");
}

/// `update_acl` tests its subjects with Perl's truth: an empty list names nobody.
#[test]
fn an_empty_subject_list_is_no_subject() {
    let mut api = start();
    api.login_root();
    let r = api.send_json(
        "PUT",
        "/access/acl",
        &json!({"path": "/vms/100", "users": "", "groups": "", "roles": "PVEVMUser"}),
    );
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.message(), "Parameter verification failed.\n");
    for key in ["users", "groups", "tokens"] {
        assert_eq!(r.error(key), "either 'users', 'groups' or 'tokens' is required.");
    }
    let r = api.send_json(
        "PUT",
        "/access/acl",
        &json!({"path": "/vms/100", "users": "", "groups": "owners", "roles": "PVEVMUser"}),
    );
    assert_eq!(r.status, 200, "one list names someone: {}", r.raw);
    assert_eq!(on_path(&api, "/vms/100").len(), 1);
}

#[test]
fn without_permissions_modify_only_a_subset_of_ones_own_privileges_is_handed_out() {
    let mut api = start();
    // The automation token has VM.Allocate (so perm-modify on /vms/<id>) but no VM.Console.
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("users", "jdoe@ad"), ("roles", "PVEVMUser")],
    );
    assert_eq!(r.status, 500, "{}", r.raw);
    assert_eq!(
        r.message(),
        "ACL update failed: 400 Parameter verification failed.\nrole: Cannot add role 'PVEVMUser' - requires 'Permissions.Modify' or superset of privileges.\n"
    );
    let r = api.put(
        "/access/acl",
        &[
            ("path", "/vms/100"),
            ("users", "jdoe@ad"),
            ("roles", "PVESimAutomation"),
        ],
    );
    assert_eq!(r.status, 200, "a subset of its own: {}", r.raw);
    let r = api.put(
        "/access/acl",
        &[
            ("path", "/storage/local"),
            ("users", "jdoe@ad"),
            ("roles", "PVEAuditor"),
        ],
    );
    assert_eq!(
        (r.status, r.message()),
        (
            403,
            "Permission check failed (/storage/local, Permissions.Modify|Datastore.Allocate)\n".into()
        )
    );
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("users", "jdoe@ad"), ("roles", "NoAccess")],
    );
    assert!(
        r.message()
            .ends_with("role: Cannot add role 'NoAccess' - requires 'Permissions.Modify'\n"),
        "{}",
        r.raw
    );

    // A user with VM.Allocate on /vms but no Sys.Audit sees only the entries it may modify.
    login(&mut api, "vmadmin@pve", "pw");
    let paths: Vec<String> = api
        .get("/access/acl")
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p.starts_with("/vms/")),
        "{paths:?}"
    );
}

/// The role-subset rule by `pve_version`: none before 8.0 (pve-access-control 46bfd59),
/// then skipped only for a propagating `Permissions.Modify` until 8.3 (7d05a23 in
/// pve-access-control 8.2.0), then for any.
#[test]
fn the_role_subset_rule_follows_the_pve_version() {
    let at = |version: &str| {
        let mut s = scenario();
        s.pve_version = Some(version.into());
        s.roles
            .insert("ACLKeeper".into(), vec!["Permissions.Modify".into(), "VM.Audit".into()]);
        s.acls.push(pvesim::state::AclDef {
            path: "/vms/100".into(),
            ugid: "jdoe@ad".into(),
            roles: vec!["ACLKeeper".into()],
            propagate: false,
        });
        let mut api = Api::start(pvesim::SimConfig { scenario: s, ..quick() });
        login(&mut api, "jdoe@ad", "pw");
        let add = |api: &Api, role: &str| {
            let r = api.put(
                "/access/acl",
                &[
                    ("path", "/vms/100"),
                    ("users", "vmadmin@pve"),
                    ("roles", role),
                    ("propagate", "0"),
                ],
            );
            (r.status, r.message())
        };
        let keeper = [add(&api, "PVEVMUser"), add(&api, "NoAccess")];
        // The automation token: VM.Allocate (so perm-modify) but no VM.Console.
        api.with_auth(vec![("Authorization", TOKEN)]);
        (keeper, add(&api, "PVEVMUser"))
    };
    let refused = |role: &str| {
        (
            500,
            format!("ACL update failed: 400 Parameter verification failed.\nrole: Cannot add role '{role}' - requires 'Permissions.Modify' or superset of privileges.\n"),
        )
    };
    let no_access = (
        500,
        "ACL update failed: 400 Parameter verification failed.\nrole: Cannot add role 'NoAccess' - requires 'Permissions.Modify'\n".to_string(),
    );
    let ok = (200, String::new());
    assert_eq!(
        at("7.4.17"),
        ([ok.clone(), ok.clone()], ok.clone()),
        "no subset rule before 8.0"
    );
    assert_eq!(
        at("8.2.7"),
        ([refused("PVEVMUser"), no_access], refused("PVEVMUser")),
        "a Permissions.Modify that does not propagate is false to Perl"
    );
    assert_eq!(at("8.3.0"), ([ok.clone(), ok], refused("PVEVMUser")));
}

#[test]
fn a_group_grant_gives_its_members_the_roles() {
    let mut api = start();
    api.login_root();
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("groups", "owners"), ("roles", "PVEVMUser")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = api.get("/access/permissions?userid=jdoe%40ad&path=%2Fvms%2F100");
    assert!(r.data()["/vms/100"]["VM.PowerMgmt"].is_number(), "{}", r.raw);
    // The user's own entry at the same level overrides the group's.
    let r = api.put(
        "/access/acl",
        &[("path", "/vms/100"), ("users", "jdoe@ad"), ("roles", "PVEAuditor")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = api.get("/access/permissions?userid=jdoe%40ad&path=%2Fvms%2F100");
    assert!(r.data()["/vms/100"].get("VM.PowerMgmt").is_none(), "{}", r.raw);
}

#[test]
fn users_read_and_list_as_pve_does() {
    let mut api = start();
    let r = api.get("/access/users/jdoe%40ad");
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(
        r.data(),
        &json!({"enable": 1, "expire": 0, "groups": ["owners"], "tokens": null})
    );
    let r = api.get("/access/users/nobody%40ad");
    assert_eq!((r.status, r.message()), (500, "no such user ('nobody@ad')\n".into()));
    let r = api.get("/access/users?full=1");
    let ansible = r
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["userid"] == "ansible@pve")
        .cloned()
        .unwrap();
    assert_eq!(ansible["groups"], "");
    assert_eq!(ansible["realm-type"], "pve");
    assert_eq!(ansible["tokens"][0]["tokenid"], "automation");
    assert_eq!(ansible["tokens"][0]["privsep"], 1);

    // Without User.Modify or Sys.Audit on /access/groups: an existing user is a 403, a
    // missing one still `no such user` (the user is looked up first).
    login(&mut api, "vmadmin@pve", "pw");
    let r = api.get("/access/users/jdoe%40ad");
    assert_eq!((r.status, r.message()), (403, "Permission check failed\n".into()));
    let r = api.get("/access/users/nobody%40ad");
    assert_eq!(r.status, 500);
    // `check_user_exist` runs `verify_username` first, before any privilege.
    let r = api.get("/access/users/x");
    assert_eq!((r.status, r.message()), (500, "user name 'x' is too short\n".into()));
    let r = api.get("/access/users/jdoe");
    assert_eq!(
        (r.status, r.message()),
        (500, "value 'jdoe' does not look like a valid user name\n".into())
    );
    let listed: Vec<Value> = api.get("/access/users").data().as_array().unwrap().clone();
    assert_eq!(listed.len(), 1, "only itself: {listed:?}");
    assert_eq!(listed[0]["userid"], "vmadmin@pve");
    // A token is not its owner (`$user eq $authuser` with the token id): without rights
    // on /access/groups it lists nobody.
    let token = format!("PVEAPIToken=vmadmin@pve!vm={VMADMIN_TOKEN_SECRET}");
    api.with_auth(vec![("Authorization", &token)]);
    let r = api.get("/access/users");
    assert_eq!((r.status, r.data()), (200, &json!([])), "{}", r.raw);
    let r = api.get("/access/roles");
    assert!(
        r.data()
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["roleid"] == "PVEVMUser" && x["special"] == 1),
        "{}",
        r.raw
    );
}

#[test]
fn pools_are_made_and_removed_refusing_members_and_child_pools() {
    let mut api = start();
    api.login_root();
    assert_eq!(
        api.post("/pools", &[("poolid", "team"), ("comment", "Team")]).status,
        200
    );
    let r = api.post("/pools", &[("poolid", "team")]);
    assert_eq!(r.message(), "create pool failed: pool 'team' already exists\n");
    let r = api.post("/pools", &[("poolid", "nope/child")]);
    assert_eq!(
        r.message(),
        "create pool failed: parent 'nope' of pool 'nope/child' does not exist\n"
    );
    let r = api.post("/pools", &[("poolid", "1team")]);
    assert_eq!(r.message(), "create pool failed: pool name must start with a letter\n");
    assert_eq!(api.post("/pools", &[("poolid", "team/web")]).status, 200);
    let r = api.delete("/pools", &[("poolid", "team")]);
    assert_eq!(
        r.message(),
        "delete pool failed: pool 'team' is not empty (contains pool 'team/web')\n"
    );
    assert_eq!(api.put("/pools", &[("poolid", "team/web"), ("vms", "100")]).status, 200);
    let r = api.delete("/pools", &[("poolid", "team/web")]);
    assert_eq!(
        r.message(),
        "delete pool failed: pool 'team/web' is not empty (contains VM 100)\n"
    );
    assert_eq!(
        api.put("/pools", &[("poolid", "team/web"), ("vms", "100"), ("delete", "1")])
            .status,
        200
    );
    assert_eq!(api.delete("/pools", &[("poolid", "team/web")]).status, 200);
    assert_eq!(api.delete("/pools/team", &[]).status, 200);
    let r = api.delete("/pools", &[("poolid", "team")]);
    assert_eq!(r.message(), "delete pool failed: pool 'team' does not exist\n");
}

/// `delete_pool_acl` removes the tree node `/pool/<id>` with everything below it; a
/// nested id (`a/b`) is no node of that tree, so its entries stay.
#[test]
fn deleting_a_pool_removes_its_acl_subtree_and_a_nested_pool_removes_none() {
    let mut api = start();
    api.login_root();
    for poolid in ["team", "team/web", "teamwork"] {
        assert_eq!(api.post("/pools", &[("poolid", poolid)]).status, 200);
    }
    for (path, groups) in [
        ("/pool/team", None),
        ("/pool/team/web", None),
        ("/pool/team/web", Some("owners")),
        ("/pool/teamwork", None),
    ] {
        let subject = match groups {
            Some(g) => ("groups", g),
            None => ("users", "jdoe@ad"),
        };
        let r = api.put("/access/acl", &[("path", path), subject, ("roles", "PVEAuditor")]);
        assert_eq!(r.status, 200, "{}", r.raw);
    }
    assert_eq!(api.delete("/pools", &[("poolid", "team/web")]).status, 200);
    assert_eq!(
        on_path(&api, "/pool/team/web").len(),
        2,
        "a nested id names no ACL node"
    );
    assert_eq!(api.delete("/pools/team", &[]).status, 200);
    assert!(on_path(&api, "/pool/team").is_empty());
    assert!(
        on_path(&api, "/pool/team/web").is_empty(),
        "below /pool/team, users and groups"
    );
    assert_eq!(on_path(&api, "/pool/teamwork").len(), 1, "another pool's entries stay");
}

#[test]
fn before_pve_8_1_only_the_path_forms_of_pools_exist() {
    let mut s = scenario();
    s.pve_version = Some("8.0.9".into());
    let mut api = Api::start(pvesim::SimConfig { scenario: s, ..quick() });
    api.login_root();
    let r = api.put("/pools", &[("poolid", "prod"), ("vms", "100")]);
    assert_eq!(
        (r.status, r.message()),
        (501, "Method 'PUT /pools' not implemented".into())
    );
    let r = api.delete("/pools", &[("poolid", "prod")]);
    assert_eq!(r.status, 501);
    // 8.0's `GET /pools` has no parameters: `poolid` and `type` are both refused, in one
    // answer, by the schema's validation.
    let r = api.get("/pools?poolid=prod&type=qemu");
    assert_eq!(r.status, 400, "{}", r.raw);
    let not_defined = "property is not defined in schema and the schema does not allow additional properties";
    assert_eq!(
        r.body["errors"],
        json!({"poolid": not_defined, "type": not_defined}),
        "{}",
        r.raw
    );
    let r = api.get("/pools?type=qemu");
    assert_eq!((r.status, r.error("type")), (400, not_defined.to_string()));
    assert_eq!(api.put("/pools/prod", &[("vms", "100")]).status, 200);
    assert_eq!(api.get("/pools/prod").data()["members"][0]["vmid"], 100);
}

#[test]
fn destroying_a_vm_drops_its_acl_entries_and_pool_membership() {
    let mut api = start();
    api.login_root();
    assert_eq!(
        api.put(
            "/access/acl",
            &[("path", "/vms/100"), ("users", "jdoe@ad"), ("roles", "PVEVMUser")]
        )
        .status,
        200
    );
    assert_eq!(
        api.put(
            "/access/acl",
            &[("path", "/vms/100"), ("groups", "owners"), ("roles", "PVEAuditor")]
        )
        .status,
        200
    );
    assert_eq!(api.put("/pools", &[("poolid", "prod"), ("vms", "100")]).status, 200);
    assert_eq!(api.run_task("DELETE", "/nodes/pve1/qemu/100", &[]), "OK");
    assert!(
        on_path(&api, "/vms/100").is_empty(),
        "remove_vm_access drops the ACL node"
    );
    assert_eq!(api.get("/pools/prod").data()["members"], json!([]));
}
