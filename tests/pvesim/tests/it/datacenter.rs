//! datacenter.cfg through `/cluster/options`: what each user reads, what `PUT` sets,
//! and `tag-style`, which decides how a guest's tags are stored on create and update.

use crate::common::*;
use pvesim::state::{AclDef, TokenDef, UserDef};
use serde_json::json;

const ADMIN: &str = "PVEAPIToken=admin@pve!all=11111111-2222-3333-4444-555555555555";
const NARROW: &str = "PVEAPIToken=narrow@pve!vm=66666666-7777-8888-9999-000000000000";

fn user(userid: &str, token: &str, secret: &str, path: &str, role: &str) -> (UserDef, AclDef) {
    (
        UserDef {
            userid: userid.into(),
            password: None,
            enable: true,
            totp_secret: None,
            tokens: vec![TokenDef {
                id: token.into(),
                secret: secret.into(),
                privsep: false,
            }],
        },
        AclDef {
            path: path.into(),
            ugid: userid.into(),
            roles: vec![role.into()],
            propagate: true,
        },
    )
}

fn cluster(tag_style: Option<&str>) -> Api {
    let mut cfg = quick();
    cfg.scenario.tag_style = tag_style.map(String::from);
    for (u, acl) in [
        user(
            "admin@pve",
            "all",
            "11111111-2222-3333-4444-555555555555",
            "/",
            "Administrator",
        ),
        // VM rights on one VM only: no Sys.Audit on `/`.
        user(
            "narrow@pve",
            "vm",
            "66666666-7777-8888-9999-000000000000",
            "/vms/100",
            "PVEVMAdmin",
        ),
    ] {
        cfg.scenario.users.push(u);
        cfg.scenario.acls.push(acl);
    }
    Api::start(cfg)
}

fn tags(api: &Api, vmid: u32) -> serde_json::Value {
    api.config("pve1", vmid)["tags"].clone()
}

#[test]
fn options_are_read_by_everyone_the_whole_config_with_sys_audit() {
    let mut api = cluster(Some("case-sensitive=1,shape=dense"));
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "120"), ("tags", "Web;prod")]),
        "OK"
    );
    assert_eq!(api.put("/nodes/pve1/qemu/100/config", &[("tags", "db")]).status, 200);

    let r = api.get("/cluster/options");
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(
        r.data()["tag-style"],
        json!({"case-sensitive": 1, "shape": "dense"}),
        "parsed, as datacenter.cfg is read"
    );
    assert_eq!(
        r.data()["allowed-tags"],
        json!(["Web", "db", "prod"]),
        "every auditable guest's tags"
    );

    api.with_auth(vec![("Authorization", NARROW)]);
    let r = api.get("/cluster/options");
    assert_eq!(r.status, 200, "open to every user: {}", r.raw);
    assert_eq!(
        r.data(),
        &json!({"tag-style": {"case-sensitive": 1, "shape": "dense"}, "allowed-tags": ["db"]}),
        "only console and tag-style, and the tags of VM 100"
    );
    let r = api.put("/cluster/options", &[("tag-style", "case-sensitive=0")]);
    assert_eq!((r.status, r.raw.contains("Sys.Modify")), (403, true), "{}", r.raw);
}

#[test]
fn put_sets_and_deletes_options() {
    let mut api = cluster(None);
    api.with_auth(vec![("Authorization", ADMIN)]);
    assert_eq!(api.get("/cluster/options").data(), &json!({"allowed-tags": []}));
    let r = api.put(
        "/cluster/options",
        &[
            ("tag-style", "ordering=config,case-sensitive=true"),
            ("mac_prefix", "02:AA:BB"),
            ("keyboard", "de"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = api.get("/cluster/options");
    assert_eq!(
        r.data()["tag-style"],
        json!({"case-sensitive": 1, "ordering": "config"})
    );
    assert_eq!(
        (&r.data()["mac_prefix"], &r.data()["keyboard"]),
        (&json!("02:AA:BB"), &json!("de"))
    );
    let r = api.put("/cluster/options", &[("tag-style", "ordering=random")]);
    assert_eq!(r.status, 400, "the format is checked: {}", r.raw);
    let r = api.put("/cluster/options", &[("delete", "tag-style,keyboard")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = api.get("/cluster/options");
    assert!(
        r.data().get("tag-style").is_none() && r.data().get("keyboard").is_none(),
        "{}",
        r.raw
    );
    assert_eq!(r.data()["mac_prefix"], "02:AA:BB");
}

#[test]
fn tags_are_stored_by_the_tag_style() {
    let api = cluster(None);
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "120"), ("tags", "Web;prod;web")]),
        "OK"
    );
    assert_eq!(tags(&api, 120), "prod;web", "default: lower case, sorted, unique");

    let mut api = cluster(Some("case-sensitive=1"));
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "120"), ("tags", "prod,Web")]),
        "OK"
    );
    assert_eq!(tags(&api, 120), "Web;prod", "kept as given, sorted bytewise");
    assert_eq!(
        api.put("/nodes/pve1/qemu/120/config", &[("tags", "web;prod;Web")])
            .status,
        200
    );
    assert_eq!(tags(&api, 120), "Web;prod;web", "Web and web are two tags");

    // Changed later: existing tags stay as stored, new writes follow the new style.
    api.with_auth(vec![("Authorization", ADMIN)]);
    assert_eq!(
        api.put("/cluster/options", &[("tag-style", "ordering=config")]).status,
        200
    );
    assert_eq!(tags(&api, 120), "Web;prod;web");
    assert_eq!(
        api.put("/nodes/pve1/qemu/120/config", &[("tags", "Web;b;WEB;a")])
            .status,
        200
    );
    assert_eq!(tags(&api, 120), "web;b;a");
}

#[test]
fn user_tag_access_and_registered_tags_bind_create_and_update_without_sys_modify() {
    let mut api = cluster(None);
    api.with_auth(vec![("Authorization", ADMIN)]);
    let r = api.put(
        "/cluster/options",
        &[
            ("user-tag-access", "user-allow=list,user-allow-list=web;db"),
            ("registered-tags", "prod"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    // The automation token has the VM privileges but not Sys.Modify on `/`.
    api.with_auth(vec![("Authorization", TOKEN)]);
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "120"), ("tags", "web")]),
        "OK",
        "a tag of the list"
    );
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "121"), ("tags", "web;other")]),
        "unable to create VM 121 - 403 Permission check failed (/, Sys.Modify for modifying tag 'other')"
    );
    assert_eq!(api.get("/nodes/pve1/qemu/121/config").status, 500, "nothing is left");
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "122"), ("tags", "prod")]),
        "unable to create VM 122 - 403 Permission check failed (/, Sys.Modify for modifying tag 'prod')",
        "a registered tag needs Sys.Modify"
    );
    let r = api.put("/nodes/pve1/qemu/120/config", &[("tags", "web;db")]);
    assert_eq!(r.status, 200, "adding a listed tag: {}", r.raw);
    let r = api.put("/nodes/pve1/qemu/120/config", &[("tags", "web;db;other")]);
    assert_eq!(r.status, 403, "{}", r.raw);
    assert_eq!(
        r.message().trim_end(),
        "Permission check failed (/, Sys.Modify for modifying tag 'other')"
    );
    // With Sys.Modify on `/` every tag goes.
    api.with_auth(vec![("Authorization", ADMIN)]);
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "123"), ("tags", "prod;other")]),
        "OK"
    );
}
