//! proxmox_user_info, proxmox_access_acl, proxmox_pool and proxmox_pool_member in process
//! against the simulator (`Env::run`): what community.proxmox 1.6 and 2.0 got wrong
//! (a refused read taken for a missing user, `propagate` that never converges, `absent`
//! by path that keeps entries, members re-added, a storage that cannot be added), bad
//! input refused before any write, check mode and `--diff`, and the API calls each task
//! costs.

use ferrox_integration::{Env, PlayOpts};
use pvesim::state::{GroupDef, RealmDef, UserDef};
use serde_json::{json, Value};

use crate::disk_scenario::{calls, writes, SimState};

/// The default cluster plus an AD realm with the owners of the field report's VMs
/// (`jdoe@ad`, and `jdoe@pve` of the same login name), a group, and `vmadmin@pve`, who
/// may hand out rights on VMs (`PVEVMAdmin` on `/vms`) but sees no users.
pub fn access_env() -> Env {
    let mut cfg = pvesim::SimConfig::default();
    let s = &mut cfg.scenario;
    s.realms.push(RealmDef {
        realm: "ad".into(),
        kind: "ad".into(),
        case_sensitive: true,
    });
    for id in ["jdoe@ad", "jdoe@pve", "vmadmin@pve"] {
        s.users.push(UserDef {
            userid: id.into(),
            password: Some("vmadmin-pass".into()),
            enable: true,
            totp_secret: None,
            tokens: vec![],
        });
    }
    s.groups.push(GroupDef {
        groupid: "owners".into(),
        comment: None,
        users: vec!["jdoe@ad".into()],
    });
    s.acls.push(pvesim::state::AclDef {
        path: "/vms".into(),
        ugid: "vmadmin@pve".into(),
        roles: vec!["PVEVMAdmin".into()],
        propagate: true,
    });
    Env::start_with(cfg)
}

/// `module_defaults` that log in as `vmadmin@pve` with its password.
pub fn as_vmadmin(env: &Env) -> PlayOpts {
    let mut auth = env.auth();
    let a = auth.as_object_mut().unwrap();
    a.remove("api_token_id");
    a.remove("api_token_secret");
    a.insert("api_user".into(), json!("vmadmin@pve"));
    a.insert("api_password".into(), json!("vmadmin-pass"));
    PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    }
}

fn task(module: &str, options: &str) -> String {
    format!("- name: t\n  ferrox.proxmox.{module}: {options}\n")
}

fn run(env: &Env, module: &str, options: &str) -> ferrox_integration::TaskOutcome {
    env.run(&task(module, options)).task("t").clone()
}

fn run_with(env: &Env, module: &str, options: &str, opts: &PlayOpts) -> ferrox_integration::TaskOutcome {
    env.run_with(&task(module, options), opts).task("t").clone()
}

fn user_ids(result: &Value) -> Vec<String> {
    result["proxmox_users"]
        .as_array()
        .unwrap_or_else(|| panic!("no proxmox_users: {result}"))
        .iter()
        .map(|u| u["userid"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn user_info_reads_one_user_and_gives_an_empty_list_for_a_missing_one() {
    let env = access_env();
    env.clear_requests();
    let found = run(&env, "proxmox_user_info", "{userid: jdoe@ad}");
    assert!(!found.failed && !found.changed, "{}", found.result);
    eprintln!("API calls, user_info by id: {:?}", calls(&env));
    assert_eq!(
        found.result["proxmox_users"],
        json!([{"enabled": true, "expire": 0, "groups": ["owners"], "tokens": [],
            "userid": "jdoe@ad", "user": "jdoe", "domain": "ad"}])
    );
    let missing = run(&env, "proxmox_user_info", "{user: nobody, domain: ad}");
    assert!(!missing.failed, "{}", missing.result);
    assert_eq!(missing.result["proxmox_users"], json!([]));
}

#[test]
fn user_info_fails_a_refused_read_instead_of_calling_the_user_missing() {
    let env = access_env();
    let opts = as_vmadmin(&env);
    let refused = run_with(&env, "proxmox_user_info", "{userid: jdoe@ad}", &opts);
    assert!(refused.failed, "{}", refused.result);
    assert!(
        refused.msg().starts_with("Getting specific user 'jdoe@ad' failed: 403 Forbidden: Permission check failed")
            && refused.msg().contains("The user exists, but Proxmox VE shows it only to callers with User.Modify or Sys.Audit on /access/groups"),
        "{}",
        refused.msg()
    );
    assert!(
        refused.msg().contains("which vmadmin@pve does not have"),
        "{}",
        refused.msg()
    );
    // PVE looks the user up before the privilege: a missing one is still "no such user".
    let missing = run_with(&env, "proxmox_user_info", "{userid: nobody@ad}", &opts);
    assert!(!missing.failed, "{}", missing.result);
    assert_eq!(missing.result["proxmox_users"], json!([]));
    let bad = run(&env, "proxmox_user_info", "{userid: jdoe}");
    assert!(bad.failed);
    assert!(
        bad.msg()
            .starts_with("userid 'jdoe' is not a user ID: give it as name@realm"),
        "{}",
        bad.msg()
    );
}

#[test]
fn user_info_user_without_domain_matches_the_login_name_in_every_realm() {
    let env = access_env();
    let both = run(&env, "proxmox_user_info", "{user: jdoe}");
    assert_eq!(user_ids(&both.result), ["jdoe@ad", "jdoe@pve"]);
    let ad = run(&env, "proxmox_user_info", "{domain: ad}");
    assert_eq!(user_ids(&ad.result), ["jdoe@ad"]);
    let all = run(&env, "proxmox_user_info", "{}");
    assert!(user_ids(&all.result).len() >= 5, "{}", all.result);
    let ansible = all.result["proxmox_users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["userid"] == "ansible@pve")
        .unwrap();
    assert_eq!(ansible["tokens"][0]["privsep"], json!(true));
    assert_eq!(ansible["groups"], json!([]));
    let exclusive = run(&env, "proxmox_user_info", "{user: jdoe, userid: jdoe@ad}");
    assert_eq!(exclusive.msg(), "parameters are mutually exclusive: user|userid");
}

#[allow(dead_code)]
fn unchanged_cluster(env: &Env, before: &Value) {
    assert_eq!(&env.sim_state(), before, "the cluster changed");
    assert_eq!(writes(&calls(env)), 0);
}
