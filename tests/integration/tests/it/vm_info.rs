//! proxmox_vm_info in process against the simulator (`Env::run`): every filter,
//! config current/pending, network, the warnings that replace 1.6's failures, and
//! the number of API calls each variant costs.

use ferrox_integration::{Env, PlayOpts, TaskOutcome};
use serde_json::{json, Value};

fn vmids(t: &TaskOutcome) -> Vec<i64> {
    t.result["proxmox_vms"]
        .as_array()
        .unwrap_or_else(|| panic!("no proxmox_vms in {}", t.result))
        .iter()
        .map(|g| g["vmid"].as_i64().unwrap())
        .collect()
}

fn guest(t: &TaskOutcome, vmid: i64) -> &Value {
    t.result["proxmox_vms"]
        .as_array()
        .and_then(|l| l.iter().find(|g| g["vmid"] == json!(vmid)))
        .unwrap_or_else(|| panic!("guest {vmid} not in {}", t.result))
}

/// One vm_info task named `info` with these options (YAML flow mapping).
fn info(env: &Env, options: &str) -> TaskOutcome {
    let play = env.run(&format!(
        "- name: info\n  ferrox.proxmox.proxmox_vm_info: {options}\n  ignore_errors: true\n"
    ));
    play.task("info").clone()
}

/// Several vm_info tasks in one play (one ansible-playbook start-up for all).
fn infos(env: &Env, tasks: &[(&str, &str)]) -> ferrox_integration::Play {
    let yaml: String = tasks
        .iter()
        .map(|(name, options)| {
            format!("- name: {name}\n  ferrox.proxmox.proxmox_vm_info: {options}\n  ignore_errors: true\n")
        })
        .collect();
    env.run(&yaml)
}

fn start_vm(env: &Env, node: &str, vmid: u32) {
    env.run_task("POST", &format!("/nodes/{node}/qemu/{vmid}/status/start"), &[]);
}

#[test]
fn lists_every_guest_sorted_by_vmid_with_int_vmid_and_bool_template() {
    let env = Env::start();
    let all = info(&env, "{}");
    assert!(!all.failed && !all.changed, "{}", all.result);
    assert_eq!(vmids(&all), vec![100, 200, 9000]);
    let tpl = guest(&all, 9000);
    assert_eq!(tpl["template"], json!(true));
    assert_eq!(tpl["name"], json!("base-debian13"));
    assert_eq!(tpl["id"], json!("qemu/9000"));
    assert_eq!(tpl["node"], json!("pve1"));
    assert_eq!(guest(&all, 100)["template"], json!(false));
    let ct = guest(&all, 200);
    assert_eq!(ct["type"], json!("lxc"));
    assert_eq!(ct["status"], json!("running"));
    assert!(all.result.get("warnings").is_none(), "{}", all.result);
}

#[test]
fn filters_by_type_vmid_and_node() {
    let env = Env::start();
    let cases: &[(&str, &str, &[i64])] = &[
        ("qemu", "{type: qemu}", &[100, 9000]),
        ("lxc", "{type: lxc}", &[200]),
        ("vmid", "{vmid: 100}", &[100]),
        ("vmid string", "{vmid: '9000'}", &[9000]),
        ("vmid 0 is no filter", "{vmid: 0}", &[100, 200, 9000]),
        ("unknown vmid", "{vmid: 555}", &[]),
        ("vmid of the other type", "{vmid: 200, type: qemu}", &[]),
        ("node", "{node: pve2}", &[200]),
        ("node and type", "{node: pve1, type: lxc}", &[]),
    ];
    let tasks: Vec<(&str, &str)> = cases.iter().map(|(n, o, _)| (*n, *o)).collect();
    let play = infos(&env, &tasks);
    for (name, _, expected) in cases {
        assert_eq!(vmids(play.task(name)), expected.to_vec(), "case {name}");
    }
}

#[test]
fn an_unknown_node_fails_with_the_1_6_message() {
    let env = Env::start();
    let t = info(&env, "{node: pve9}");
    assert!(t.failed);
    assert_eq!(t.msg(), "Node pve9 doesn't exist in PVE cluster");
}

#[test]
fn filters_by_exact_name_including_duplicates() {
    let env = Env::start();
    env.run_task(
        "POST",
        "/nodes/pve2/qemu",
        &[("vmid", "101"), ("name", "web01"), ("memory", "512")],
    );
    // /cluster/resources learns a new VM's name with the next status broadcast.
    std::thread::sleep(std::time::Duration::from_millis(600));
    let play = infos(
        &env,
        &[
            ("dup", "{name: web01}"),
            ("dup on pve2", "{name: web01, node: pve2}"),
            ("case", "{name: WEB01}"),
            ("container", "{name: ct-dns}"),
            ("nobody", "{name: nobody}"),
        ],
    );
    assert_eq!(vmids(play.task("dup")), vec![100, 101]);
    assert_eq!(vmids(play.task("dup on pve2")), vec![101]);
    assert_eq!(
        vmids(play.task("case")),
        Vec::<i64>::new(),
        "names match case-sensitively"
    );
    assert_eq!(vmids(play.task("container")), vec![200]);
    assert_eq!(vmids(play.task("nobody")), Vec::<i64>::new());
}

#[test]
fn config_current_and_pending_show_both_sides_of_a_pending_change() {
    let env = Env::start();
    start_vm(&env, "pve1", 100);
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("cores", "4")]);
    assert_eq!(status, 200, "{body}");
    let pending = env.api_get("/nodes/pve1/qemu/100/pending");
    assert!(
        pending.to_string().contains("\"pending\":4"),
        "the change must be pending: {pending}"
    );

    let play = infos(
        &env,
        &[
            ("current", "{vmid: 100, config: current}"),
            ("pending", "{vmid: 100, config: pending}"),
            ("none", "{vmid: 100}"),
            ("ct", "{type: lxc, config: current}"),
        ],
    );
    assert_eq!(guest(play.task("current"), 100)["config"]["cores"], json!(2));
    assert_eq!(guest(play.task("pending"), 100)["config"]["cores"], json!(4));
    assert!(guest(play.task("none"), 100).get("config").is_none());
    assert_eq!(guest(play.task("ct"), 200)["config"]["hostname"], json!("ct-dns"));
}

/// PVE 9 reads the guest agent only with `VM.GuestAgent.Audit` on the guest: a token
/// without it on one VM gets a warning naming the privilege and that VM, and the other
/// guests' interfaces.
#[test]
fn an_agent_the_token_may_not_read_is_a_warning_not_a_failure() {
    let mut cfg = pvesim::SimConfig {
        agent_delay_ms: 0,
        address_delay_ms: 0,
        ..Default::default()
    };
    cfg.scenario.roles.insert("SeeOnly".into(), vec!["VM.Audit".into()]);
    cfg.scenario.acls.push(pvesim::state::AclDef {
        path: "/vms/101".into(),
        ugid: "ansible@pve!automation".into(),
        roles: vec!["SeeOnly".into()],
        propagate: true,
    });
    let env = Env::start_with(cfg);
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("agent", "1")]);
    assert_eq!(status, 200, "{body}");
    env.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[("vmid", "101"), ("agent", "1"), ("net0", "virtio,bridge=vmbr0")],
    );
    start_vm(&env, "pve1", 100);
    start_vm(&env, "pve1", 101);

    let t = info(&env, "{network: true}");
    assert!(!t.failed, "{}", t.result);
    assert!(
        guest(&t, 100)["network"].is_array(),
        "VM 100's agent is readable: {}",
        t.result
    );
    assert!(
        guest(&t, 200)["network"].is_array(),
        "the container's interfaces need only VM.Audit"
    );
    assert!(guest(&t, 101).get("network").is_none(), "{}", t.result);
    assert!(
        t.warnings().contains(&"No network information for VM 101: API token ansible@pve!automation lacks VM.GuestAgent.Audit or VM.GuestAgent.Unrestricted on /vms/101, which Proxmox VE requires to read the guest agent.".to_string()),
        "{:?}",
        t.warnings()
    );
}

#[test]
fn network_of_running_guests_and_warnings_for_the_others() {
    let env = Env::start();
    let (status, body) = env.api("PUT", "/nodes/pve1/qemu/100/config", &[("agent", "1")]);
    assert_eq!(status, 200, "{body}");
    start_vm(&env, "pve1", 100);
    std::thread::sleep(std::time::Duration::from_millis(500)); // the agent answers after boot

    let t = info(&env, "{network: true}");
    assert!(!t.failed, "{}", t.result);
    let vm = guest(&t, 100);
    let macs = vm["network"].to_string().to_ascii_lowercase();
    assert!(macs.contains("bc:24:11:10:00:01"), "VM 100's NIC from the agent: {vm}");
    assert!(
        guest(&t, 200)["network"].is_array(),
        "the running container's interfaces"
    );
    assert!(guest(&t, 9000).get("network").is_none(), "a stopped template has none");
    let warnings = t.warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("VM 9000") && w.contains("not running")),
        "{warnings:?}"
    );

    env.fault(json!({"agent_vmid": 100, "not_running": true}));
    let t = info(&env, "{vmid: 100, network: true}");
    assert!(!t.failed, "{}", t.result);
    assert!(guest(&t, 100).get("network").is_none());
    assert!(
        t.warnings()
            .iter()
            .any(|w| w.contains("VM 100") && w.contains("QEMU guest agent is not running")),
        "{:?}",
        t.warnings()
    );
}

#[test]
fn an_unreachable_node_is_a_warning_and_its_guests_keep_cluster_fields() {
    let env = Env::start();
    env.fault(json!({"node": "pve2", "unreachable": true}));
    let t = info(&env, "{config: current}");
    assert!(!t.failed, "{}", t.result);
    assert_eq!(vmids(&t), vec![100, 200, 9000]);
    assert!(guest(&t, 100)["config"].is_object());
    let ct = guest(&t, 200);
    assert!(ct.get("config").is_none(), "{ct}");
    assert_eq!(ct["template"], json!(false));
    let warnings = t.warnings();
    assert_eq!(
        warnings
            .iter()
            .filter(|w| w.contains("Node pve2 is unreachable"))
            .count(),
        1,
        "{warnings:?}"
    );
}

#[test]
fn check_mode_runs_normally_and_changes_nothing() {
    let env = Env::start();
    let play = env.run_with(
        "- name: info\n  ferrox.proxmox.proxmox_vm_info: {vmid: 100, config: current}\n",
        &PlayOpts {
            check: true,
            diff: true,
            ..Default::default()
        },
    );
    play.assert_ok();
    let t = play.task("info");
    assert!(!t.changed && !t.skipped);
    assert_eq!(guest(t, 100)["config"]["name"], json!("web01"));
}

/// A guest read through its own `status/current` has exactly the keys 1.6 returned: its
/// `/cluster/resources` entry merged with its entry of the node's listing (running, so
/// the status call's extra monitor answers would show).
#[test]
fn one_guest_has_the_keys_of_the_listing_merge() {
    let env = Env::start();
    start_vm(&env, "pve1", 100);
    let resources = env.api_get("/cluster/resources?type=vm");
    let play = infos(&env, &[("vm", "{vmid: 100}"), ("ct", "{name: ct-dns}")]);
    for (task, node, kind, vmid) in [("vm", "pve1", "qemu", 100), ("ct", "pve2", "lxc", 200)] {
        let listed = env.api_get(&format!("/nodes/{node}/{kind}"));
        let mut expected: Vec<String> = [&resources, &listed]
            .iter()
            .filter_map(|l| l.as_array()?.iter().find(|g| g["vmid"] == json!(vmid)))
            .flat_map(|g| g.as_object().unwrap().keys().cloned())
            .collect();
        expected.sort();
        expected.dedup();
        let t = play.task(task);
        assert_eq!(guest(t, vmid)["status"], json!("running"));
        let mut got: Vec<String> = guest(t, vmid).as_object().unwrap().keys().cloned().collect();
        got.sort();
        assert_eq!(got, expected, "{task}");
    }
}

/// Requests per variant: no /version, /nodes only with `node`, listings only for
/// nodes that hold a match, per-guest calls only for config/network.
#[test]
fn each_variant_makes_the_fewest_api_calls() {
    let env = Env::start();
    let count = |options: &str| -> Value {
        env.clear_requests();
        let t = info(&env, options);
        assert!(!t.failed, "{}", t.result);
        env.requests()["counts"].clone()
    };
    let c = count("{}");
    assert_eq!(
        c,
        json!({"GET /api2/json/cluster/resources": 1, "GET /api2/json/nodes/pve1/qemu": 1, "GET /api2/json/nodes/pve2/lxc/200/status/current": 1}),
        "a node listing for two guests, the one guest's status for one"
    );
    let c = count("{vmid: 100}");
    assert_eq!(
        c,
        json!({"GET /api2/json/cluster/resources": 1, "GET /api2/json/nodes/pve1/qemu/100/status/current": 1})
    );
    let c = count("{node: pve2}");
    assert_eq!(
        c,
        json!({"GET /api2/json/cluster/resources": 1, "GET /api2/json/nodes": 1, "GET /api2/json/nodes/pve2/lxc/200/status/current": 1})
    );
    let c = count("{vmid: 555}");
    assert_eq!(c, json!({"GET /api2/json/cluster/resources": 1}));
    let c = count("{type: qemu, config: current}");
    assert_eq!(c["GET /api2/json/nodes/pve1/qemu/100/config"], json!(1));
    assert_eq!(c["GET /api2/json/nodes/pve1/qemu/9000/config"], json!(1));
    assert_eq!(c.as_object().unwrap().len(), 4, "{c}");
}
