//! The `ferrox.proxmox.proxmox` inventory plugin, end to end: real `ansible-inventory
//! --list` with the installed collection against the simulator, side by side with
//! `community.proxmox.proxmox` (tests/anchor/setup) at 1.6 (ours with
//! `exclude_templates: true`), at 2.0.0 (templates as hosts) and at its main branch's
//! pinned commit (`exclude_vms`, `facts_concurrency`, `api_timeout`, the hostname
//! templates) on the same cluster: the same hosts, groups and `proxmox_*` variables, but
//! for the deliberate differences listed in [`OURS_ONLY`]. Also: clear errors naming the
//! option, a guest whose agent does not answer is a warning, no secret in any output.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Map, Value};

use ferrox_integration::{ansible_playbook, creds, repo_root, Env};

/// Host variables only ours sets (documented in the plugin's notes), after `facts_prefix`:
/// the usable addresses of running guests whose interfaces were read.
const OURS_ONLY: [&str; 2] = ["ip_addresses", "ip_address"];

/// The community.proxmox the plugin is compared with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Community {
    /// 1.6.0: templates are no hosts; ours gets `exclude_templates: true`.
    V1_6,
    /// 2.0.0 (ansible 14): templates are hosts, in `all_templates`.
    V2_0,
    /// The main branch at tests/anchor/setup's pinned commit.
    Main,
}

impl Community {
    fn setup_arg(self) -> &'static str {
        match self {
            Community::V1_6 => "1.6.0",
            Community::V2_0 => "2.0.0",
            Community::Main => "main",
        }
    }
}

/// `build/anchor[-VERSION]`, holding that community.proxmox (`tests/anchor/setup` puts it
/// there once, from PyPI or, for main, from `tests/anchor/community.proxmox-main`, and
/// prints the path).
fn anchor_collections(version: Community) -> PathBuf {
    let out = Command::new(repo_root().join("tests/anchor/setup"))
        .arg(version.setup_arg())
        .output()
        .expect("run tests/anchor/setup");
    assert!(
        out.status.success(),
        "tests/anchor/setup {} failed (it needs PyPI the first time):\n{}",
        version.setup_arg(),
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The inventory scenario (VMs and containers, running and stopped, a pool, an agent),
/// plus `extra` guests: every 25th a container, every 4th running, every 3rd VM with the
/// agent enabled, every 10th in the pool, every 7th tagged, and every 100th from the 70th
/// a (stopped, pooled) VM template: 21 templates with the scenario's own at +2,000.
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
        if i % 100 == 70 {
            guest["config"]["template"] = json!(1);
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
/// ours and community.proxmox 1.6 on the path, the simulator's CA trusted by both.
fn inventory(env: &Env, name: &str, options: &str, extra_env: &[(&str, &str)]) -> Inventory {
    inventory_with(env, Community::V1_6, name, options, extra_env)
}

/// [`inventory`] with `version` of community.proxmox on the path.
fn inventory_with(env: &Env, version: Community, name: &str, options: &str, extra_env: &[(&str, &str)]) -> Inventory {
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
        anchor_collections(version).display()
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
/// REQUESTS_CA_BUNDLE) and returns (community, ours), community.proxmox at 1.6.
fn both(env: &Env, options: &str) -> (Inventory, Inventory) {
    both_at(env, Community::V1_6, options)
}

/// [`both`] with community.proxmox at `version`; against 1.6 ours gets
/// `exclude_templates: true`, the one line that gives 1.6's shape.
fn both_at(env: &Env, version: Community, options: &str) -> (Inventory, Inventory) {
    let theirs = inventory_with(
        env,
        version,
        "community",
        &format!("{}{options}", connection(env, "community.proxmox.proxmox")),
        &[],
    );
    assert_eq!(theirs.rc, 0, "community.proxmox {version:?} failed:\n{}", theirs.stderr);
    let shape = if version == Community::V1_6 {
        "exclude_templates: true\n"
    } else {
        ""
    };
    let ours_options = format!(
        "{}ca_path: {}\n{shape}{options}",
        connection(env, "ferrox.proxmox.proxmox"),
        env.ca_path().display()
    );
    let ours = inventory_with(env, version, "ferrox", &ours_options, &[]);
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
    // 2,000 guests but 20 templates, and the scenario's own hosts.
    assert!(hosts >= 1980, "only {hosts} hosts");
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

/// Hosts of `group`, sorted.
fn members(inv: &Value, group: &str) -> Vec<String> {
    groups(inv)
        .get(group)
        .map(|g| serde_json::from_value(g["hosts"].clone()).unwrap())
        .unwrap_or_default()
}

#[test]
fn same_inventory_as_community_proxmox_2_0_0_at_2000_guests_with_facts() {
    let env = Env::start_with(scenario(2000));
    let (theirs, ours) = both_at(&env, Community::V2_0, "want_facts: true\n");
    assert_same(&theirs.json, &ours.json, "proxmox_");
    // Templates are hosts with proxmox_template, in all_templates and their pool only.
    let templates = members(&ours.json, "proxmox_all_templates");
    assert_eq!(templates.len(), 21, "{templates:?}");
    let fleet = &ours.json["_meta"]["hostvars"]["fleet-70"];
    // With facts the config's `template: 1` replaces the listing's true, in 2.0.0 too.
    assert_eq!(fleet["proxmox_template"], json!(1), "{fleet}");
    assert_eq!(
        ours.json["_meta"]["hostvars"]["web01"]["proxmox_template"],
        json!(false)
    );
    for group in ["proxmox_all_qemu", "proxmox_all_stopped", "proxmox_pve1_qemu"] {
        assert!(!members(&ours.json, group).contains(&"fleet-70".to_string()), "{group}");
    }
    assert!(members(&ours.json, "proxmox_pool_prod").contains(&"fleet-70".to_string()));
    assert!(!ours.stderr.contains("WARNING"), "{}", ours.stderr);
}

#[test]
fn same_inventory_as_community_proxmox_2_0_0_without_facts_with_constructed_and_filters() {
    let env = Env::start_with(scenario(200));
    let options = "group_prefix: pve-\nfacts_prefix: px_\nfilters:\n  - \"not px_template or px_vmid > 100\"\n\
        keyed_groups:\n  - key: \"'tmpl' if px_template else 'guest'\"\n    prefix: is\n";
    let (theirs, ours) = both_at(&env, Community::V2_0, options);
    assert!(assert_same(&theirs.json, &ours.json, "px_").is_empty());
    assert!(!members(&ours.json, "pve_all_templates").is_empty());
    assert!(!members(&ours.json, "is_tmpl").is_empty() && !members(&ours.json, "is_guest").is_empty());
}

#[test]
fn same_inventory_as_community_proxmox_main_with_its_options_at_2000_guests() {
    let env = Env::start_with(scenario(2000));
    let options = "want_facts: true\nexclude_vms: false\nfacts_concurrency: 4\napi_timeout: 10\n\
        qemu_hostname: \"{{ name }}-{{ vmid }}.{{ node }}\"\n";
    let (theirs, ours) = both_at(&env, Community::Main, options);
    assert_same(&theirs.json, &ours.json, "proxmox_");
    let vars = ours.json["_meta"]["hostvars"].as_object().unwrap();
    assert!(
        vars.contains_key("app01-110.pve1") && vars.contains_key("ct-proxy"),
        "{:?}",
        vars.keys().take(8).collect::<Vec<_>>()
    );
    assert_eq!(members(&ours.json, "proxmox_all_templates").len(), 21);
    assert!(!ours.stderr.contains("WARNING"), "{}", ours.stderr);
}

#[test]
fn same_inventory_as_community_proxmox_main_with_hostnames_and_without_guests() {
    let env = Env::start_with(scenario(60));
    // hostname for nodes and VMs, lxc_hostname over it for containers.
    let options = "hostname: \"{{ name }}{{ suffix | default('.pve') }}\"\n\
        lxc_hostname: \"ct{{ vmid }}-{{ status }}\"\nkeyed_groups:\n  - key: proxmox_vmtype\n    prefix: t\n";
    let (theirs, ours) = both_at(&env, Community::Main, options);
    assert_same(&theirs.json, &ours.json, "proxmox_");
    let vars = ours.json["_meta"]["hostvars"].as_object().unwrap();
    assert!(
        vars.contains_key("ct10000-running") && vars.contains_key("web01.pve"),
        "{:?}",
        vars.keys().collect::<Vec<_>>()
    );

    assert!(members(&ours.json, "proxmox_nodes").contains(&"pve1.pve".to_string()));
    // The node's groups keep its Proxmox name.
    assert!(members(&ours.json, "proxmox_pve1_qemu").contains(&"web01.pve".to_string()));

    let (theirs, ours) = both_at(&env, Community::Main, "exclude_vms: true\nfacts_concurrency: 2\n");
    assert_same(&theirs.json, &ours.json, "proxmox_");
    assert!(!members(&ours.json, "proxmox_nodes").is_empty());
    assert!(
        members(&ours.json, "proxmox_all_qemu").is_empty() && !groups(&ours.json).contains_key("proxmox_pve1_qemu"),
        "{:?}",
        groups(&ours.json)
    );
}

#[test]
fn a_setting_given_under_both_names_with_different_values_is_refused_naming_both() {
    let env = Env::start_with(scenario(0));
    let base = format!(
        "{}ca_path: {}\n",
        connection(&env, "ferrox.proxmox.proxmox"),
        env.ca_path().display()
    );
    let flat = |i: &Inventory| i.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    let both = inventory(
        &env,
        "both",
        &format!("{base}concurrency: 8\nfacts_concurrency: 2\n"),
        &[],
    );
    assert_ne!(both.rc, 0);
    assert!(
        flat(&both).contains("concurrency (8) and facts_concurrency (2) are the same setting"),
        "{}",
        both.stderr
    );
    let zero = inventory(&env, "zero", &format!("{base}api_timeout: 0\n"), &[]);
    assert_ne!(zero.rc, 0);
    assert!(
        flat(&zero).contains("api_timeout must be from 1 to 86400"),
        "{}",
        zero.stderr
    );
    let same = inventory(&env, "same", &format!("{base}timeout: 12\napi_timeout: 12\n"), &[]);
    assert_eq!(same.rc, 0, "{}", same.stderr);
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
