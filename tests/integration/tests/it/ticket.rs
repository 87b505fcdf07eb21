//! One login per run: the tasks of one `ansible-playbook` run that log in with a
//! password share the first task's ticket (kept by the action plugin in the run's temp
//! dir). A ticket near its lifetime is renewed; one PVE refuses (expired, signed with a
//! rotated key) ends in one fresh login; another user or password never gets it, another
//! spelling of the same cluster's endpoint uses it.
//! The simulator counts logins apart from renewals, with its ticket lifetime shortened so
//! these runs take seconds. One TOTP code for a whole run: `ticket_otp`.

use ferrox_integration::{creds, Env, Play, PlayOpts};
use serde_json::{json, Value};

const RENEW_AFTER: &str = "FERROX_TICKET_RENEW_AFTER";

/// `module_defaults` for root@pam with its password (no token).
fn password_defaults(env: &Env, user: &str, password: &str) -> Value {
    let mut auth = env.auth();
    let auth_map = auth.as_object_mut().unwrap();
    auth_map.remove("api_token_id");
    auth_map.remove("api_token_secret");
    auth_map.insert("api_user".into(), json!(user));
    auth_map.insert("api_password".into(), json!(password));
    env.defaults_with(auth)
}

fn info(name: &str) -> String {
    format!("- name: {name}\n  ferrox.proxmox.proxmox_vm_info: {{vmid: 100}}\n")
}

fn pause(seconds: u64) -> String {
    format!("- name: pause\n  ansible.builtin.pause: {{seconds: {seconds}}}\n")
}

fn play(env: &Env, tasks: &str, vars: &[(&str, &str)]) -> Play {
    env.clear_requests();
    let opts = PlayOpts {
        module_defaults: Some(password_defaults(env, "root@pam", creds::ROOT_PASSWORD)),
        env: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    env.play_with(tasks, &opts)
}

fn all_found_vm_100(p: &Play) {
    for t in p.results.iter().filter(|t| t.name.starts_with("info")) {
        assert!(!t.failed, "{}: {}\n{}", t.name, t.result, p.transcript());
        assert_eq!(t.result["proxmox_vms"][0]["vmid"], json!(100), "{}", t.result);
        assert!(
            t.result.get("_ferrox_ticket").is_none(),
            "the ticket never shows in a result: {}",
            t.result
        );
    }
}

#[test]
fn a_run_of_password_tasks_logs_in_once() {
    let env = Env::start();
    let p = play(
        &env,
        &format!(
            "{}{}{}{}",
            info("info 1"),
            info("info 2"),
            info("info 3"),
            info("info 4")
        ),
        &[],
    );
    all_found_vm_100(&p);
    assert_eq!(env.logins(), (1, 0), "{}", env.requests()["counts"]);
    assert_eq!(env.requests()["counts"]["POST /api2/json/access/ticket"], json!(1));
}

#[test]
fn turned_off_every_task_logs_in() {
    let env = Env::start();
    let p = play(
        &env,
        &format!("{}{}{}", info("info 1"), info("info 2"), info("info 3")),
        &[(RENEW_AFTER, "0")],
    );
    all_found_vm_100(&p);
    assert_eq!(env.logins(), (3, 0));
}

#[test]
fn a_ticket_near_its_lifetime_is_renewed_without_a_login() {
    let env = Env::start_with(pvesim::SimConfig {
        ticket_lifetime_secs: 30,
        ..Default::default()
    });
    let p = play(
        &env,
        &format!("{}{}{}", info("info 1"), pause(3), info("info 2")),
        &[(RENEW_AFTER, "2")],
    );
    all_found_vm_100(&p);
    assert_eq!(
        env.logins(),
        (1, 1),
        "one login, then one renewal: {}",
        env.requests()["counts"]
    );
}

#[test]
fn an_expired_ticket_ends_in_one_fresh_login() {
    let env = Env::start_with(pvesim::SimConfig {
        ticket_lifetime_secs: 2,
        ..Default::default()
    });
    let p = play(
        &env,
        &format!("{}{}{}{}", info("info 1"), pause(4), info("info 2"), info("info 3")),
        &[],
    );
    all_found_vm_100(&p);
    assert_eq!(
        env.logins(),
        (2, 0),
        "the expired ticket refused once, then the new one kept: {}",
        env.requests()["counts"]
    );
    let refused = env.requests()["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["status"] == json!(401))
        .count();
    assert_eq!(refused, 1, "one request refused with the expired ticket");
}

#[test]
fn a_revoked_ticket_ends_in_one_fresh_login() {
    let env = Env::start();
    let rotate = format!(
        "- name: rotate PVE's authkey\n  ansible.builtin.uri: {{url: 'https://127.0.0.1:{}/_pvesim/rotate-authkey', method: POST, validate_certs: false}}\n",
        env.sim().port()
    );
    let p = play(
        &env,
        &format!("{}{rotate}{}{}", info("info 1"), info("info 2"), info("info 3")),
        &[],
    );
    all_found_vm_100(&p);
    assert_eq!(env.logins(), (2, 0), "{}", env.requests()["counts"]);
}

/// proxmox_template's upload and download send the kept ticket like any other task: one
/// revoked before each ends in one fresh login, and the file arrives.
#[test]
fn an_upload_and_a_download_after_a_revoked_ticket_each_log_in_once_more() {
    use pvesim::fileserver::{FileServer, Served};
    let env = Env::start();
    let files = FileServer::start().expect("the loopback file server");
    files.add("/isos/rescue.iso", Served::pattern(1 << 20));
    let src = env.dir().join("netinst.iso");
    std::fs::write(&src, vec![7u8; 1 << 20]).unwrap();
    let rotate = format!(
        "- name: rotate PVE's authkey\n  ansible.builtin.uri: {{url: 'https://127.0.0.1:{}/_pvesim/rotate-authkey', method: POST, validate_certs: false}}\n",
        env.sim().port()
    );
    let template = |name: &str, args: String| {
        format!("- name: {name}\n  ferrox.proxmox.proxmox_template: {{node: pve1, content_type: iso, {args}}}\n")
    };
    let tasks = format!(
        "{}{rotate}{}{rotate}{}",
        info("info 1"),
        template("upload", format!("storage: isos, src: {}", src.display())),
        template(
            "download",
            format!("storage: local, url: '{}'", files.url("/isos/rescue.iso"))
        ),
    );
    let p = play(&env, &tasks, &[]);
    all_found_vm_100(&p);
    for (name, volid) in [("upload", "isos:iso/netinst.iso"), ("download", "local:iso/rescue.iso")] {
        let t = p.task(name);
        assert!(t.changed && !t.failed, "{name}: {}\n{}", t.result, p.transcript());
        assert_eq!(t.result["volid"], json!(volid), "{}", t.result);
        assert!(
            t.result.get("_ferrox_ticket").is_none(),
            "the ticket never shows in a result: {}",
            t.result
        );
    }
    assert_eq!(
        env.logins(),
        (3, 0),
        "the first login, then one after each rotation: {}",
        env.requests()["counts"]
    );
}

#[test]
fn another_user_or_password_never_gets_the_ticket_and_another_host_name_tries_it() {
    let env = Env::start();
    let as_user = |name: &str, user: &str, password: &str| {
        format!("- name: {name}\n  ferrox.proxmox.proxmox_vm_info: {{vmid: 100, api_user: {user}, api_password: {password}}}\n  ignore_errors: true\n")
    };
    // The same server by another name: the run's ticket is tried there first, and PVE
    // accepting it shows the endpoint is the same cluster (the certificate names both).
    let by_localhost =
        "- name: info root via localhost\n  ferrox.proxmox.proxmox_vm_info: {vmid: 100, api_host: localhost}\n";
    let tasks = format!(
        "{}{}{}{by_localhost}{}",
        info("info root"),
        as_user("info ansible", "ansible@pve", "ansible-pass"),
        as_user("wrong password", "root@pam", "not-the-password"),
        info("info root again"),
    );
    let p = play(&env, &tasks, &[]);
    for ok in [
        "info root",
        "info ansible",
        "info root via localhost",
        "info root again",
    ] {
        assert!(!p.task(ok).failed, "{ok}: {}", p.transcript());
    }
    let wrong = p.task("wrong password");
    assert!(
        wrong.failed,
        "root's ticket must not stand in for a wrong password: {}",
        wrong.result
    );
    assert!(
        wrong.msg().starts_with("Couldn't authenticate user: root@pam"),
        "{}",
        wrong.msg()
    );
    // root, ansible, and the refused attempt; root at localhost and root's last task reuse
    // root's first ticket, without a request refused.
    assert_eq!(env.logins(), (2, 0), "{}", env.requests()["counts"]);
    assert_eq!(env.requests()["counts"]["POST /api2/json/access/ticket"], json!(3));
    let refused: Vec<_> = env.requests()["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["status"] == json!(401))
        .cloned()
        .collect();
    assert_eq!(refused.len(), 1, "only the wrong password: {refused:?}");
}

/// A user disabled during the run: PVE refuses the kept ticket, the one fresh login is
/// refused too, and the task fails with the login's clear message (no retry loop).
#[test]
fn a_disabled_user_fails_with_a_clear_authentication_error() {
    let env = Env::start();
    let state = format!("https://127.0.0.1:{}/_pvesim/state", env.sim().port());
    let disable = format!(
        r#"- name: read the cluster
  ansible.builtin.uri: {{url: '{state}', validate_certs: false, return_content: true}}
  register: cluster
- name: disable ansible@pve
  ansible.builtin.uri:
    url: '{state}'
    method: POST
    validate_certs: false
    body_format: json
    body: "{{{{ cluster.json | combine({{'users': cluster.json.users | rejectattr('userid', 'eq', 'ansible@pve') | list
      + [cluster.json.users | selectattr('userid', 'eq', 'ansible@pve') | first | combine({{'enable': false}})]}}) }}}}"
"#
    );
    env.clear_requests();
    let opts = PlayOpts {
        module_defaults: Some(password_defaults(&env, "ansible@pve", "ansible-pass")),
        ..Default::default()
    };
    let tasks = format!(
        "{}{disable}- name: info 2\n  ferrox.proxmox.proxmox_vm_info: {{vmid: 100}}\n  ignore_errors: true\n",
        info("info 1")
    );
    let p = env.play_with(&tasks, &opts);
    assert!(!p.task("info 1").failed, "{}", p.transcript());
    let refused = p.task("info 2");
    assert!(refused.failed, "{}", refused.result);
    let url = format!("https://127.0.0.1:{}/api2/json/access/ticket", env.sim().port());
    // The login happens at the task's first request, which names itself first.
    assert!(
        refused
            .msg()
            .ends_with(&format!(": Couldn't authenticate user: ansible@pve to {url}")),
        "{}",
        refused.result
    );
    assert_eq!(env.logins(), (1, 0));
    let counts = &env.requests()["counts"];
    assert_eq!(
        counts["POST /api2/json/access/ticket"],
        json!(2),
        "the first login and the one fresh login: {counts}"
    );
}
