//! Connection options: module_defaults, token, password and
//! environment auth, TLS trust (CA file, fingerprint pinning, the one-message failure),
//! bad credentials, AnsibleModule's validation messages, and secrets never shown.
//! Ansible's part (the environment fallbacks, `-vvvv`) runs through ansible-playbook,
//! the rest in process.

use ferrox_integration::{creds, Env, PlayOpts};
use serde_json::{json, Value};

const INFO: &str = "- name: info\n  ferrox.proxmox.proxmox_vm_info: {vmid: 100}\n  ignore_errors: true\n";

fn with_auth(env: &Env, auth: Value) -> PlayOpts {
    PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    }
}

/// The default auth block with some keys replaced (null removes a key).
fn auth_with(env: &Env, changes: Value) -> Value {
    let mut auth = env.auth();
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            auth.as_object_mut().unwrap().remove(k);
        } else {
            auth[k] = v.clone();
        }
    }
    auth
}

fn found_vm_100(play: &ferrox_integration::Play) {
    let t = play.task("info");
    assert!(!t.failed, "{}\n{}", t.result, play.transcript());
    assert_eq!(t.result["proxmox_vms"][0]["vmid"], json!(100));
}

#[test]
fn token_auth_through_the_module_defaults_group() {
    let env = Env::start();
    found_vm_100(&env.run(INFO));
}

#[test]
fn password_auth_gets_a_ticket() {
    let env = Env::start();
    let auth = auth_with(
        &env,
        json!({"api_user": "root@pam", "api_password": creds::ROOT_PASSWORD, "api_token_id": null, "api_token_secret": null}),
    );
    env.clear_requests();
    found_vm_100(&env.run_with(INFO, &with_auth(&env, auth)));
    assert_eq!(env.requests()["counts"]["POST /api2/json/access/ticket"], json!(1));
}

#[test]
fn environment_variables_supply_every_connection_option() {
    let env = Env::start();
    let vars = [
        ("PROXMOX_HOST", "127.0.0.1".to_string()),
        ("PROXMOX_PORT", env.sim().port().to_string()),
        ("PROXMOX_USER", creds::TOKEN_USER.to_string()),
        ("PROXMOX_TOKEN_ID", creds::TOKEN_ID.to_string()),
        ("PROXMOX_TOKEN_SECRET", creds::TOKEN_SECRET.to_string()),
        ("PROXMOX_CA_PATH", env.ca_path().display().to_string()),
    ];
    let opts = PlayOpts {
        module_defaults: Some(json!({})),
        env: vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        ..Default::default()
    };
    found_vm_100(&env.play_with(INFO, &opts));
}

#[test]
fn a_pinned_fingerprint_replaces_the_ca() {
    let env = Env::start();
    let fingerprint = env.sim().fingerprint();
    let pinned = auth_with(&env, json!({"ca_path": null, "api_cert_fingerprint": fingerprint}));
    found_vm_100(&env.run_with(INFO, &with_auth(&env, pinned)));
    let compact = fingerprint.replace(':', "").to_ascii_lowercase();
    let pinned = auth_with(&env, json!({"ca_path": null, "api_cert_fingerprint": compact}));
    found_vm_100(&env.run_with(INFO, &with_auth(&env, pinned)));
}

#[test]
fn a_wrong_fingerprint_fails_naming_both_fingerprints() {
    let env = Env::start();
    let wrong = "AB:".repeat(31) + "AB";
    let play = env.run_with(
        INFO,
        &with_auth(
            &env,
            auth_with(&env, json!({"ca_path": null, "api_cert_fingerprint": wrong})),
        ),
    );
    let t = play.task("info");
    assert!(t.failed);
    assert!(t.msg().contains("does not match api_cert_fingerprint"), "{}", t.msg());
    assert!(t.msg().contains(&wrong), "{}", t.msg());
    assert!(t.msg().contains(&env.sim().fingerprint()), "{}", t.msg());
}

#[test]
fn an_untrusted_certificate_fails_with_one_message_naming_the_fixes() {
    let env = Env::start();
    let play = env.run_with(INFO, &with_auth(&env, auth_with(&env, json!({"ca_path": null}))));
    let msg = play.task("info").msg().to_string();
    assert!(play.task("info").failed);
    for part in [
        "could not be verified",
        "api_cert_fingerprint",
        "ca_path",
        "validate_certs: false",
    ] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
    assert!(
        msg.contains(&env.sim().fingerprint()),
        "the presented fingerprint helps pinning: {msg}"
    );
}

#[test]
fn validate_certs_false_skips_verification() {
    let env = Env::start();
    found_vm_100(&env.run_with(
        INFO,
        &with_auth(&env, auth_with(&env, json!({"ca_path": null, "validate_certs": false}))),
    ));
}

#[test]
fn a_bad_token_secret_fails_clearly_without_showing_it() {
    let env = Env::start();
    let bad = "00000000-0000-0000-0000-000000000000";
    let play = env.run_with(
        INFO,
        &with_auth(&env, auth_with(&env, json!({"api_token_secret": bad}))),
    );
    let t = play.task("info");
    assert!(t.failed);
    assert!(t.msg().contains("401"), "{}", t.msg());
    assert!(t.msg().contains("api_token_secret"), "{}", t.msg());
    assert!(!play.stdout.contains(bad) && !play.stderr.contains(bad));
}

#[test]
fn option_errors_use_ansible_module_messages() {
    let env = Env::start();
    let play = env.run(
        r#"
        - name: unknown
          ferrox.proxmox.proxmox_vm_info: {bogus: 1}
          ignore_errors: true
        - name: type
          ferrox.proxmox.proxmox_vm_info: {vmid: abc}
          ignore_errors: true
        - name: choice
          ferrox.proxmox.proxmox_vm_info: {type: vm}
          ignore_errors: true
        - name: bool
          ferrox.proxmox.proxmox_vm_info: {network: maybe}
          ignore_errors: true
        "#,
    );
    let unknown = play.task("unknown").msg();
    assert!(
        unknown.starts_with("Unsupported parameters for (ferrox.proxmox.proxmox_vm_info) module: bogus. Supported parameters include: api_cert_fingerprint, api_host,"),
        "{unknown}"
    );
    assert!(play.task("type").msg().contains("vmid"), "{}", play.task("type").msg());
    assert!(play.task("type").msg().contains("int"), "{}", play.task("type").msg());
    assert_eq!(
        play.task("choice").msg(),
        "value of type must be one of: all, qemu, lxc, got: vm"
    );
    assert!(
        play.task("bool").msg().contains("network"),
        "{}",
        play.task("bool").msg()
    );
    assert!(play.results.iter().all(|t| t.failed));
}

/// `-vvvv` prints module args, results and invocations: the password, the token
/// secret (which reaches the module through module_defaults), and every ticket and
/// CSRF token the run got (logged in, kept, renewed) must not appear in any of it, for
/// passing and failing tasks alike.
#[test]
fn secrets_never_appear_even_at_vvvv() {
    let env = Env::start();
    env.clear_requests();
    // format! for its brace escapes: the play is Jinja, full of braces.
    #[allow(clippy::useless_format)]
    let tasks = format!(
        r#"
        - name: token ok
          ferrox.proxmox.proxmox_vm_info: {{vmid: 100}}
        - name: token fails
          ferrox.proxmox.proxmox_vm_info: {{node: pve9}}
          ignore_errors: true
        - name: password ok
          ferrox.proxmox.proxmox_vm_info:
            vmid: 100
            api_user: root@pam
            api_password: "{{{{ lookup('env', 'TEST_PASSWORD') }}}}"
        - name: password again, with the run's ticket
          ferrox.proxmox.proxmox_vm_info:
            vmid: 100
            api_user: root@pam
            api_password: "{{{{ lookup('env', 'TEST_PASSWORD') }}}}"
        - name: the run's ticket renewed
          ferrox.proxmox.proxmox_vm_info:
            vmid: 100
            api_user: root@pam
            api_password: "{{{{ lookup('env', 'TEST_PASSWORD') }}}}"
        - name: password wrong
          ferrox.proxmox.proxmox_vm_info:
            api_user: root@pam
            api_password: "{{{{ lookup('env', 'TEST_PASSWORD') }}}}-wrong"
          ignore_errors: true
        "#
    );
    // The password comes from the environment: ansible-core 2.19 quotes playbook
    // source around a failing task, which must not be where a secret is written.
    // Renewed from the second use on: every way a ticket is got or sent happens.
    let opts = PlayOpts {
        verbosity: 4,
        env: vec![
            ("TEST_PASSWORD".into(), creds::ROOT_PASSWORD.into()),
            ("FERROX_TICKET_RENEW_AFTER".into(), "0.001".into()),
        ],
        ..Default::default()
    };
    let play = env.play_with(&tasks, &opts);
    assert!(
        !play.task("token ok").failed && !play.task("password ok").failed,
        "{}",
        play.transcript()
    );
    assert!(play.task("token fails").failed && play.task("password wrong").failed);
    let everything = format!("{}{}{:?}", play.stdout, play.stderr, play.results);
    assert!(
        !everything.contains(creds::TOKEN_SECRET),
        "token secret leaked:\n{}",
        play.transcript()
    );
    assert!(
        !everything.contains(creds::ROOT_PASSWORD),
        "password leaked:\n{}",
        play.transcript()
    );
    let issued = env.issued_tickets();
    // Renewed when due, before any request: at a renewal age of a millisecond the run's
    // ticket is renewed by each later task, and a task's own ticket before most of its
    // requests, so how many renewals depends on timing; at least the two later tasks'.
    let (logins, renewals) = env.logins();
    assert_eq!(logins, 1, "one login: {}", env.requests()["counts"]);
    assert!(renewals >= 2, "renewed when due: {}", env.requests()["counts"]);
    assert_eq!(
        issued.len(),
        usize::try_from(2 * (logins + renewals)).unwrap(),
        "every ticket, each with its CSRF token"
    );
    for secret in &issued {
        assert!(
            !everything.contains(secret.as_str()),
            "a ticket or CSRF token leaked:\n{}",
            play.transcript()
        );
    }
    // No part either: a ticket's signature, the part that makes it a credential.
    for ticket in issued.iter().filter(|t| t.starts_with("PVE:")) {
        let signature = ticket.split_once("::").unwrap().1;
        assert!(
            !everything.contains(&signature[..24]),
            "a ticket's signature leaked:\n{}",
            play.transcript()
        );
    }
}
