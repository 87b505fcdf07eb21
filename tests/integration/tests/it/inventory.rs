//! The `ferrox.proxmox.proxmox` inventory plugin, end to end: real `ansible-inventory
//! --list` with the installed collection against the simulator, side by side with
//! community.proxmox 1.6's `community.proxmox.proxmox` (tests/anchor/setup) on the same
//! cluster: the same hosts, groups and `proxmox_*` variables, but for the deliberate
//! differences listed in [`OURS_ONLY`]. Also: clear errors naming the option, a guest
//! whose agent does not answer is a warning, no secret in any output.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Map, Value};

use ferrox_integration::{ansible_playbook, creds, repo_root, Env};

/// Host variables only ours sets (documented in the plugin's notes), after `facts_prefix`:
/// the usable addresses of running guests whose interfaces were read.
const OURS_ONLY: [&str; 2] = ["ip_addresses", "ip_address"];

/// `build/anchor`, holding community.proxmox 1.6 (`tests/anchor/setup` puts it there
/// once, from PyPI, and prints the path).
fn anchor_collections() -> PathBuf {
    let out = Command::new(repo_root().join("tests/anchor/setup"))
        .output()
        .expect("run tests/anchor/setup");
    assert!(
        out.status.success(),
        "tests/anchor/setup failed (it needs PyPI the first time):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The inventory scenario (VMs and containers, running and stopped, a pool, an agent),
/// plus `extra` guests: every 25th a container, every 4th running, every 3rd VM with the
/// agent enabled, every 10th in the pool, every 7th tagged.
fn scenario(extra: u32) -> pvesim::SimConfig {
    let text =
        std::fs::read_to_string(repo_root().join("tests/pvesim/scenarios/inventory.json")).expect("inventory scenario");
    let mut s: Value = serde_json::from_str(&text).unwrap();
    for i in 0..extra {
        let vmid = 10_000 + i;
        let node = if i % 2 == 0 { "pve1" } else { "pve2" };
        let mac = format!("BC:24:12:{:02X}:{:02X}:01", (i >> 8) & 0xff, i & 0xff);
        let mut guest = if i % 25 == 0 {
            json!({"vmid": vmid, "node": node, "type": "lxc", "running": i % 4 == 0, "config": {
                "arch": "amd64", "cores": 1, "hostname": format!("ct-fleet-{i}"), "memory": 512, "ostype": "debian",
                "net0": format!("name=eth0,bridge=vmbr0,hwaddr={mac},ip=dhcp,type=veth"),
                "rootfs": format!("local-lvm:subvol-{vmid}-disk-0,size=4G")}})
        } else {
            json!({"vmid": vmid, "node": node, "type": "qemu", "running": i % 4 == 0, "config": {
                "name": format!("fleet-{i}"), "memory": "2048", "cores": 2, "ostype": "l26",
                "net0": format!("virtio={mac},bridge=vmbr0"),
                "scsi0": format!("local-lvm:vm-{vmid}-disk-0,size=8G")}})
        };
        if i % 3 == 0 && guest["type"] == "qemu" {
            guest["config"]["agent"] = json!("1");
        }
        if i % 7 == 0 {
            guest["config"]["tags"] = json!("fleet;batch");
        }
        if i % 10 == 0 {
            s["pools"][0]["vms"].as_array_mut().unwrap().push(json!(vmid));
        }
        s["guests"].as_array_mut().unwrap().push(guest);
    }
    pvesim::SimConfig {
        scenario: serde_json::from_value(s).expect("scenario"),
        agent_delay_ms: 0,
        ..Default::default()
    }
}

struct Inventory {
    rc: i32,
    json: Value,
    stdout: String,
    stderr: String,
}

/// `ansible-inventory -i NAME.proxmox.yml --list` with `options` (YAML mapping lines),
/// both collections on the path, the simulator's CA trusted by both.
fn inventory(env: &Env, name: &str, options: &str, extra_env: &[(&str, &str)]) -> Inventory {
    let file = env.dir().join(format!("{name}.proxmox.yml"));
    std::fs::write(&file, options).unwrap();
    let program = ansible_playbook().with_file_name("ansible-inventory");
    let mut cmd = Command::new(&program);
    cmd.arg("-i").arg(&file).arg("--list");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("PROXMOX_") {
            cmd.env_remove(&key);
        }
    }
    let collections = format!(
        "{}:{}",
        env.collections_path().display(),
        anchor_collections().display()
    );
    cmd.env("ANSIBLE_CONFIG", env.dir().join("ansible.cfg"))
        .env("ANSIBLE_COLLECTIONS_PATH", collections)
        .env("ANSIBLE_HOME", env.dir().join("ansible-home"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_INVENTORY_UNPARSED_FAILED", "1")
        .env("REQUESTS_CA_BUNDLE", env.ca_path())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Inventory {
        rc: out.status.code().unwrap_or(-1),
        json: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The connection part of an inventory file for `plugin` (token auth).
fn connection(env: &Env, plugin: &str) -> String {
    format!(
        "plugin: {plugin}\nurl: https://127.0.0.1:{port}\nuser: {user}\ntoken_id: {id}\ntoken_secret: {secret}\nvalidate_certs: true\n",
        port = env.sim().port(),
        user = creds::TOKEN_USER,
        id = creds::TOKEN_ID,
        secret = creds::TOKEN_SECRET,
    )
}

/// Runs both plugins with the same `options` (ours also gets `ca_path`; community reads
/// REQUESTS_CA_BUNDLE) and returns (community, ours).
fn both(env: &Env, options: &str) -> (Inventory, Inventory) {
    let theirs = inventory(
        env,
        "community",
        &format!("{}{options}", connection(env, "community.proxmox.proxmox")),
        &[],
    );
    assert_eq!(theirs.rc, 0, "community.proxmox failed:\n{}", theirs.stderr);
    let ours_options = format!(
        "{}ca_path: {}\n{options}",
        connection(env, "ferrox.proxmox.proxmox"),
        env.ca_path().display()
    );
    let ours = inventory(env, "ferrox", &ours_options, &[]);
    assert_eq!(ours.rc, 0, "ferrox.proxmox failed:\n{}", ours.stderr);
    (theirs, ours)
}

/// Groups as `{group: (sorted hosts, sorted children)}`.
fn groups(inv: &Value) -> Map<String, Value> {
    inv.as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "_meta")
        .map(|(k, g)| {
            let sorted = |key: &str| {
                let mut v: Vec<String> = g[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|h| h.as_str().unwrap().to_string())
                    .collect();
                v.sort();
                v
            };
            (
                k.clone(),
                json!({"hosts": sorted("hosts"), "children": sorted("children")}),
            )
        })
        .collect()
}

/// Asserts the same hosts, groups and variables, our documented additions aside;
/// returns our additions per host.
fn assert_same(theirs: &Value, ours: &Value, facts_prefix: &str) -> Map<String, Value> {
    assert_eq!(groups(theirs), groups(ours), "groups differ");
    let mut ours_vars = ours["_meta"]["hostvars"].as_object().cloned().unwrap_or_default();
    let their_vars = theirs["_meta"]["hostvars"].as_object().cloned().unwrap_or_default();
    let mut added = Map::new();
    for (host, vars) in ours_vars.iter_mut() {
        let vars = vars.as_object_mut().unwrap();
        let mine: Map<String, Value> = OURS_ONLY
            .iter()
            .map(|k| format!("{facts_prefix}{k}"))
            .filter_map(|k| vars.remove(&k).map(|v| (k, v)))
            .collect();
        if !mine.is_empty() {
            added.insert(host.clone(), Value::Object(mine));
        }
    }
    let mut their_hosts: Vec<&String> = their_vars.keys().collect();
    let mut our_hosts: Vec<&String> = ours_vars.keys().collect();
    their_hosts.sort();
    our_hosts.sort();
    assert_eq!(their_hosts, our_hosts, "hosts differ");
    for (host, vars) in &their_vars {
        let mine = &ours_vars[host];
        for key in vars.as_object().unwrap().keys().chain(mine.as_object().unwrap().keys()) {
            assert_eq!(
                vars.get(key),
                mine.get(key),
                "host {host}: variable {key} differs (community | ours)"
            );
        }
    }
    added
}

fn unsafe_text(v: &Value) -> Option<&str> {
    v.get("__ansible_unsafe").and_then(Value::as_str).or_else(|| v.as_str())
}

#[test]
fn same_inventory_as_community_proxmox_at_2000_guests_with_facts() {
    let env = Env::start_with(scenario(2000));
    let (theirs, ours) = both(&env, "want_facts: true\n");
    let hosts = ours.json["_meta"]["hostvars"].as_object().unwrap().len();
    assert!(hosts >= 2000, "only {hosts} hosts");
    let added = assert_same(&theirs.json, &ours.json, "proxmox_");
    // Usable addresses only: the agent's link-local and loopback addresses are left out.
    let app = &added["app01"];
    assert_eq!(unsafe_text(&app["proxmox_ip_address"]), Some("192.168.10.120"), "{app}");
    assert_eq!(app["proxmox_ip_addresses"].as_array().unwrap().len(), 1, "{app}");
    assert_eq!(
        unsafe_text(&added["ct-proxy"]["proxmox_ip_address"]),
        Some("192.0.2.62")
    );
    // Only running guests with interfaces read get them; a stopped one does not.
    assert!(!added.contains_key("web01") && !added.contains_key("ct-stopped"));
    assert!(
        added.contains_key("fleet-12") && added.contains_key("ct-fleet-0"),
        "{:?}",
        added.keys().take(5).collect::<Vec<_>>()
    );
    assert!(!ours.stderr.contains("WARNING"), "{}", ours.stderr);
}

#[test]
fn same_inventory_with_prefixes_constructed_filters_and_node_addresses() {
    let env = Env::start_with(scenario(60));
    let options = "group_prefix: pve-\nfacts_prefix: px_\nwant_proxmox_nodes_ansible_host: true\n\
        want_post_filter_facts: true\nfilters:\n  - \"px_vmtype == 'lxc' or px_status == 'running'\"\n\
        compose:\n  node_of: px_node\nkeyed_groups:\n  - key: px_tags | default('') | split(';')\n    prefix: tag\n\
        groups:\n  fleet: \"px_name.startswith('fleet')\"\n";
    let (theirs, ours) = both(&env, options);
    assert!(
        ours.json["_meta"]["hostvars"]["pve1"]["ansible_host"].is_object()
            || ours.json["_meta"]["hostvars"]["pve1"]["ansible_host"].is_string()
    );
    let added = assert_same(&theirs.json, &ours.json, "px_");
    assert!(
        unsafe_text(&added["app01"]["px_ip_address"]).is_some(),
        "facts_prefix names our additions too: {added:?}"
    );

    let extended = "want_facts: true\nqemu_extended_statuses: true\nexclude_nodes: true\n";
    let (theirs, ours) = both(&env, extended);
    assert_same(&theirs.json, &ours.json, "proxmox_");
}

#[test]
fn same_inventory_without_facts() {
    let env = Env::start_with(scenario(200));
    let (theirs, ours) = both(&env, "want_facts: false\n");
    assert!(assert_same(&theirs.json, &ours.json, "proxmox_").is_empty());
}

#[test]
fn a_guest_whose_agent_does_not_answer_is_a_warning_naming_it() {
    let env = Env::start_with(scenario(0));
    env.fault(json!({"agent_vmid": 110, "not_running": true}));
    let options = format!(
        "{}ca_path: {}\nwant_facts: true\n",
        connection(&env, "ferrox.proxmox.proxmox"),
        env.ca_path().display()
    );
    let ours = inventory(&env, "ferrox", &options, &[]);
    assert_eq!(ours.rc, 0, "{}", ours.stderr);
    let flat = ours.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("VM app01 (vmid 110 on pve1): its QEMU guest agent did not answer"),
        "{flat}"
    );
    let app = &ours.json["_meta"]["hostvars"]["app01"];
    assert!(
        app["proxmox_snapshots"].is_array() && app.get("proxmox_agent_interfaces").is_none(),
        "{app}"
    );
}

#[test]
fn a_token_without_guest_agent_audit_is_a_warning_naming_guest_and_privilege() {
    let mut cfg = scenario(0);
    for privileges in cfg.scenario.roles.values_mut() {
        privileges.retain(|p| p != "VM.GuestAgent.Audit");
    }
    let env = Env::start_with(cfg);
    let options = format!(
        "{}ca_path: {}\nwant_facts: true\n",
        connection(&env, "ferrox.proxmox.proxmox"),
        env.ca_path().display()
    );
    let ours = inventory(&env, "ferrox", &options, &[]);
    assert_eq!(ours.rc, 0, "{}", ours.stderr);
    let flat = ours.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("VM app01 (vmid 110 on pve1): its guest agent's interfaces cannot be read without the VM.GuestAgent.Audit privilege"), "{flat}");
    // The containers' interfaces need no agent privilege: their addresses are there.
    assert!(ours.json["_meta"]["hostvars"]["ct-proxy"]["proxmox_ip_address"].is_object());
}

#[test]
fn errors_name_the_option_and_the_fix_and_never_a_secret() {
    let env = Env::start_with(scenario(0));
    let base = format!(
        "{}ca_path: {}\n",
        connection(&env, "ferrox.proxmox.proxmox"),
        env.ca_path().display()
    );
    let flat = |i: &Inventory| i.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    let no_secret = |i: &Inventory| {
        for secret in [creds::TOKEN_SECRET, "wrong-0000-secret", creds::ROOT_PASSWORD] {
            assert!(
                !i.stdout.contains(secret) && !i.stderr.contains(secret),
                "a secret is shown:\n{}\n{}",
                i.stdout,
                i.stderr
            );
        }
    };

    let unknown = inventory(&env, "unknown", &format!("{base}want_fact: true\n"), &[]);
    assert_ne!(unknown.rc, 0);
    assert!(
        flat(&unknown).contains("unknown option(s) in")
            && flat(&unknown).contains("want_fact (did you mean want_facts?)"),
        "{}",
        unknown.stderr
    );
    no_secret(&unknown);

    let http = inventory(&env, "http", &base.replace("url: https://", "url: http://"), &[]);
    assert_ne!(http.rc, 0);
    assert!(
        flat(&http).contains("HTTPS only: set url to https://<node>:8006"),
        "{}",
        http.stderr
    );

    let closed = inventory(
        &env,
        "closed",
        &base.replace(&format!(":{}", env.sim().port()), ":1"),
        &[],
    );
    assert_ne!(closed.rc, 0);
    assert!(
        flat(&closed).contains("Could not connect to") && flat(&closed).contains("Check url"),
        "{}",
        closed.stderr
    );

    let bad_token = inventory(
        &env,
        "badtoken",
        &base.replace(creds::TOKEN_SECRET, "wrong-0000-secret"),
        &[("ANSIBLE_VERBOSITY", "3")],
    );
    assert_ne!(bad_token.rc, 0);
    assert!(
        flat(&bad_token).contains("token_secret") && flat(&bad_token).contains("was not accepted"),
        "{}",
        bad_token.stderr
    );
    no_secret(&bad_token);

    // Password auth, verbose, a warning on the way: the password shows nowhere either.
    env.fault(json!({"agent_vmid": 110, "not_running": true}));
    let password = format!(
        "plugin: ferrox.proxmox.proxmox\nurl: https://127.0.0.1:{}\nuser: root@pam\npassword: {}\nca_path: {}\nwant_facts: true\n",
        env.sim().port(),
        creds::ROOT_PASSWORD,
        env.ca_path().display()
    );
    let ok = inventory(&env, "password", &password, &[("ANSIBLE_VERBOSITY", "3")]);
    assert_eq!(ok.rc, 0, "{}", ok.stderr);
    no_secret(&ok);

    // Secrets from the environment, as community reads them.
    let from_env = format!(
        "plugin: ferrox.proxmox.proxmox\nurl: https://127.0.0.1:{}\nca_path: {}\n",
        env.sim().port(),
        env.ca_path().display()
    );
    let env_run = inventory(
        &env,
        "fromenv",
        &from_env,
        &[
            ("PROXMOX_USER", creds::TOKEN_USER),
            ("PROXMOX_TOKEN_ID", creds::TOKEN_ID),
            ("PROXMOX_TOKEN_SECRET", creds::TOKEN_SECRET),
        ],
    );
    assert_eq!(env_run.rc, 0, "{}", env_run.stderr);
    assert!(env_run.json["_meta"]["hostvars"]["app01"].is_object());
}
