//! The run's name index: after one task of an `ansible-playbook` run listed the cluster,
//! a later task that looks its VM up by name confirms it with one read of that VM
//! instead of a new listing. Whatever does not confirm (the VM renamed, moved or
//! removed, the index too old) falls back to a fresh listing, with the result a listing
//! gives: each case runs with the index and without it (`FERROX_NAME_INDEX_MAX_AGE=0`),
//! and the task results must agree.

use ferrox_integration::{Env, Play, PlayOpts};
use pvesim::state::{AclDef, PoolDef};
use serde_json::{json, Value};

const MAX_AGE: &str = "FERROX_NAME_INDEX_MAX_AGE";

/// A no-op converge of each module by name, and its info (web01 is vmid 100 on pve1).
const BY_NAME: &str = "- name: kvm
  ferrox.proxmox.proxmox_kvm:
    name: web01
    memory: 2048
- name: disk
  ferrox.proxmox.proxmox_disk:
    name: web01
    disk: scsi0
    state: present
- name: nic
  ferrox.proxmox.proxmox_nic:
    name: web01
    interface: net0
    bridge: vmbr0
    model: virtio
    firewall: true
- name: info
  ferrox.proxmox.proxmox_vm_info:
    name: web01
";

fn play(env: &Env, tasks: &str, max_age: Option<&str>) -> Play {
    let env_vars = max_age
        .map(|a| vec![(MAX_AGE.to_string(), a.to_string())])
        .unwrap_or_default();
    env.run_with(
        tasks,
        &PlayOpts {
            env: env_vars,
            ..Default::default()
        },
    )
}

fn count(env: &Env, call: &str) -> u64 {
    env.requests()["counts"].get(call).and_then(Value::as_u64).unwrap_or(0)
}

const LISTING: &str = "GET /api2/json/cluster/resources";
const CONFIRM: &str = "GET /api2/json/nodes/pve1/qemu/100/status/current";

#[test]
fn later_lookups_by_name_confirm_the_vm_instead_of_listing_the_cluster() {
    let env = Env::start();
    env.clear_requests();
    let p = play(&env, &format!("{BY_NAME}{BY_NAME}"), None);
    p.assert_ok();
    assert_eq!(
        count(&env, LISTING),
        1,
        "only the first task lists: {}",
        env.requests()["counts"]
    );
    assert_eq!(
        count(&env, CONFIRM),
        7,
        "every later task reads its VM once: {}",
        env.requests()["counts"]
    );
    for t in &p.results {
        assert!(!t.changed, "{}: {}", t.name, t.result);
        let vmid = if t.name == "info" {
            &t.result["proxmox_vms"][0]["vmid"]
        } else {
            &t.result["vmid"]
        };
        assert_eq!(vmid, &json!(100), "{}: {}", t.name, t.result);
        assert!(
            t.result.get("_ferrox_names").is_none(),
            "the index never shows in a result: {}",
            t.result
        );
    }
}

#[test]
fn turned_off_every_task_lists_and_the_results_agree() {
    let on = Env::start();
    let off = Env::start();
    let with = play(&on, BY_NAME, None);
    off.clear_requests();
    let without = play(&off, BY_NAME, Some("0"));
    assert_eq!(count(&off, LISTING), 4, "{}", off.requests()["counts"]);
    assert_eq!(
        count(&off, CONFIRM),
        1,
        "only proxmox_vm_info's read of the one guest it lists"
    );
    assert_same_results(&with, &without);
}

#[test]
fn an_index_older_than_its_maximum_age_is_not_trusted() {
    let env = Env::start();
    env.clear_requests();
    play(&env, BY_NAME, Some("0.001")).assert_ok();
    assert_eq!(
        count(&env, LISTING),
        4,
        "every index is stale by the next task: {}",
        env.requests()["counts"]
    );
    assert_eq!(
        count(&env, CONFIRM),
        1,
        "only proxmox_vm_info's read of the one guest it lists"
    );
}

#[test]
fn a_maximum_age_that_is_no_number_fails_the_task_naming_the_variable() {
    let env = Env::start();
    // The controller's side reads the variable: through ansible-playbook.
    let p = env.play_with(
        BY_NAME,
        &PlayOpts {
            env: vec![(MAX_AGE.to_string(), "soon".to_string())],
            ..Default::default()
        },
    );
    let t = p.task("kvm");
    assert!(t.failed, "{}", p.transcript());
    assert_eq!(
        t.msg(),
        "FERROX_NAME_INDEX_MAX_AGE must be a number of seconds (0 turns the name index off), got 'soon'"
    );
}

/// What changes behind the index's back, by vmid (a task by vmid neither reads nor
/// refreshes the index), and then the lookups by name that must not trust it.
#[test]
fn a_renamed_vm_is_not_found_by_its_old_name() {
    same_with_and_without_index(
        "- name: rename
  ferrox.proxmox.proxmox_kvm:
    vmid: 100
    name: web02
    update: true
- name: old name
  ferrox.proxmox.proxmox_nic:
    name: web01
    interface: net0
  ignore_errors: true
- name: new name
  ferrox.proxmox.proxmox_nic:
    name: web02
    interface: net0
    bridge: vmbr0
    model: virtio
    firewall: true
",
        // The old name does not confirm (the VM now carries another): a listing, which
        // refreshes the index; the new name then confirms.
        &[
            "/nodes/pve1/qemu/100/status/current 200",
            "/cluster/resources 200",
            "/nodes/pve1/qemu/100/status/current 200",
            "/nodes/pve1/qemu/100/config 200",
        ],
        |p| {
            assert_eq!(p.task("old name").msg(), "No VM with name web01 found");
            assert_eq!(p.task("new name").result["vmid"], json!(100));
        },
    );
}

#[test]
fn a_moved_vm_is_found_on_its_new_node() {
    same_with_and_without_index(
        "- name: move
  ferrox.proxmox.proxmox_kvm:
    vmid: 100
    node: pve2
    migrate: true
- name: after the move
  ferrox.proxmox.proxmox_kvm:
    name: web01
    memory: 2048
",
        // Not on the indexed node any more: a listing finds it on pve2.
        &[
            "/nodes/pve1/qemu/100/status/current 500",
            "/cluster/resources 200",
            "/nodes/pve2/qemu/100/config 200",
        ],
        |p| {
            let t = p.task("after the move");
            assert!(!t.changed, "{}", t.result);
            assert_eq!(t.result["vmid"], json!(100));
        },
    );
}

#[test]
fn a_removed_vm_is_not_found() {
    same_with_and_without_index(
        "- name: remove
  ferrox.proxmox.proxmox_kvm:
    vmid: 100
    state: absent
- name: after the removal
  ferrox.proxmox.proxmox_disk:
    name: web01
    disk: scsi0
    state: present
  ignore_errors: true
",
        &["/nodes/pve1/qemu/100/status/current 500", "/cluster/resources 200"],
        |p| assert_eq!(p.task("after the removal").msg(), "No VM with name web01 found"),
    );
}

/// proxmox_vm_info through the index returns the records a listing gives: here of a
/// running VM with tags in a pool, a template, and a name a VM and a container share.
#[test]
fn vm_info_by_name_gives_what_the_listing_gives() {
    let cluster = || {
        let mut scenario = pvesim::scenario::Scenario::default_cluster();
        scenario.pools.push(PoolDef {
            poolid: "prod".into(),
            vms: vec![100],
            ..Default::default()
        });
        let container = scenario
            .guests
            .iter_mut()
            .find(|g| g.vmid == 200)
            .expect("the scenario's container");
        container.config.insert("hostname".into(), json!("base-debian13"));
        for ugid in ["ansible@pve", "ansible@pve!automation"] {
            scenario.acls.push(AclDef {
                path: "/pool".into(),
                ugid: ugid.into(),
                roles: vec!["PVEPoolAdmin".into()],
                propagate: true,
            });
        }
        let env = Env::start_with(pvesim::SimConfig {
            scenario,
            ..Default::default()
        });
        let changed = |(status, body): (u16, Value)| assert_eq!(status, 200, "{body}");
        changed(env.api("PUT", "/nodes/pve1/qemu/100/config", &[("tags", "web;prod")]));
        env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
        env
    };
    let info = "- name: web01
  ferrox.proxmox.proxmox_vm_info:
    name: web01
    config: current
- name: shared name
  ferrox.proxmox.proxmox_vm_info:
    name: base-debian13
- name: qemu only
  ferrox.proxmox.proxmox_vm_info:
    name: base-debian13
    type: qemu
";
    let (on, off) = (cluster(), cluster());
    let tasks = format!("{BY_NAME}{info}");
    on.clear_requests();
    let with = play(&on, &tasks, None);
    let without = play(&off, &tasks, Some("0"));
    with.assert_ok();
    assert_eq!(count(&on, LISTING), 1, "{}", on.requests()["counts"]);
    let web = &with.task("web01").result["proxmox_vms"][0];
    assert_eq!(
        (&web["pool"], &web["tags"], &web["status"]),
        (&json!("prod"), &json!("prod;web"), &json!("running")),
        "{web}"
    );
    assert_eq!(
        with.task("shared name").result["proxmox_vms"].as_array().map(Vec::len),
        Some(2)
    );
    assert_same_results(&with, &without);
}

/// Runs `BY_NAME` (which builds the index), then `changes`, once with the index and once
/// without, on two fresh clusters: the results must agree, and pass `check`. With the
/// index, the last reads of the cluster must be `last_reads` ([`reads`]).
fn same_with_and_without_index(changes: &str, last_reads: &[&str], check: impl Fn(&Play)) {
    let tasks = format!("{BY_NAME}{changes}");
    let on = Env::start();
    let off = Env::start();
    on.clear_requests();
    let with = play(&on, &tasks, None);
    let without = play(&off, &tasks, Some("0"));
    let seen = reads(&on);
    assert!(
        seen.ends_with(&last_reads.iter().map(|r| r.to_string()).collect::<Vec<_>>()),
        "{seen:#?}"
    );
    check(&with);
    check(&without);
    assert_same_results(&with, &without);
}

/// The GETs the simulator answered, in order, as `path status` (task polls and
/// permission reads left out).
fn reads(env: &Env) -> Vec<String> {
    let log = env.requests()["log"].as_array().cloned().unwrap_or_default();
    log.iter()
        .filter(|e| e["method"] == "GET")
        .map(|e| {
            (
                e["path"]
                    .as_str()
                    .unwrap_or("")
                    .trim_start_matches("/api2/json")
                    .to_string(),
                e["status"].clone(),
            )
        })
        .filter(|(path, _)| !path.contains("/tasks/") && path != "/access/permissions")
        .map(|(path, status)| format!("{path} {status}"))
        .collect()
}

/// The same tasks with the same results, but for what differs between any two runs.
fn assert_same_results(a: &Play, b: &Play) {
    let names = |p: &Play| p.results.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(a), names(b));
    for (x, y) in a.results.iter().zip(&b.results) {
        assert_eq!(stable(&x.result), stable(&y.result), "task {}", x.name);
    }
}

fn stable(result: &Value) -> Value {
    let mut r = result.clone();
    if let Value::Object(m) = &mut r {
        for volatile in ["invocation", "upid", "digest", "task_ms"] {
            m.remove(volatile);
        }
        // A running guest's counters grow with its uptime: the keys must agree, not the values.
        for guest in m
            .get_mut("proxmox_vms")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            for counter in ["uptime", "netin", "netout", "diskread", "diskwrite"] {
                if let Some(v) = guest.get_mut(counter) {
                    *v = Value::Null;
                }
            }
        }
    }
    r
}

/// A create waits until the listing shows its VM: that listing feeds the index, so the
/// next task by the new VM's name reads that VM once instead of listing the cluster again
/// (counted against the same create alone, on a simulator of its own).
#[test]
fn a_creates_listing_feeds_the_index_for_the_next_task_by_that_name() {
    const CREATE: &str = "- name: create\n  ferrox.proxmox.proxmox_kvm: {node: pve1, name: fresh01, memory: 512}\n";
    const INFO: &str = "- name: info\n  ferrox.proxmox.proxmox_vm_info: {name: fresh01}\n";
    let alone = Env::start();
    alone.clear_requests();
    play(&alone, CREATE, None).assert_ok();
    let then = Env::start();
    then.clear_requests();
    let p = play(&then, &format!("{CREATE}{INFO}"), None);
    p.assert_ok();
    let vmid = p.task("create").result["vmid"].as_u64().unwrap();
    assert_eq!(
        p.task("info").result["proxmox_vms"][0]["vmid"],
        json!(vmid),
        "{}",
        p.task("info").result
    );
    assert_eq!(
        count(&then, LISTING),
        count(&alone, LISTING),
        "the task by name lists nothing: {}",
        then.requests()["counts"]
    );
    let confirm = format!("GET /api2/json/nodes/pve1/qemu/{vmid}/status/current");
    assert_eq!(
        count(&then, &confirm) - count(&alone, &confirm),
        1,
        "it reads its VM once: {}",
        then.requests()["counts"]
    );
}

/// proxmox_vm_info's listing seeds the index too (read unfiltered, with the nodes and
/// storages the other modules need): a play whose lookups by name start with it lists
/// once, and its results are those of a run without the index.
#[test]
fn vm_info_first_seeds_the_index_for_every_later_lookup_by_name() {
    let info = "- name: first info
  ferrox.proxmox.proxmox_vm_info:
    name: web01
    config: current
- name: template info
  ferrox.proxmox.proxmox_vm_info:
    name: base-debian13
";
    let tasks = format!("{info}{BY_NAME}");
    let (on, off) = (Env::start(), Env::start());
    on.clear_requests();
    let with = play(&on, &tasks, None);
    let without = play(&off, &tasks, Some("0"));
    with.assert_ok();
    assert_eq!(
        count(&on, LISTING),
        1,
        "only the first proxmox_vm_info lists: {}",
        on.requests()["counts"]
    );
    assert_eq!(
        count(&on, CONFIRM),
        5,
        "its own read of web01, then each later task's: {}",
        on.requests()["counts"]
    );
    assert_eq!(with.task("first info").result["proxmox_vms"][0]["vmid"], json!(100));
    assert_same_results(&with, &without);
}

/// The default scenario plus `extra` QEMU VMs `fleet-<i>` (vmid 10000 + i), alternating
/// between pve1 and pve2, every 4th running: as bench/cluster-size adds them.
fn with_extra_guests(extra: u32) -> Env {
    let mut scenario = pvesim::scenario::Scenario::default_cluster();
    for i in 0..extra {
        let vmid = 10_000 + i;
        let guest = json!({"vmid": vmid, "node": if i % 2 == 0 { "pve1" } else { "pve2" }, "type": "qemu",
            "running": i % 4 == 0, "config": {"name": format!("fleet-{i}"), "memory": "2048", "cores": 2,
            "ostype": "l26", "scsi0": format!("local-lvm:vm-{vmid}-disk-0,size=8G")}});
        scenario
            .guests
            .push(serde_json::from_value(guest).expect("a guest of the scenario"));
    }
    Env::start_with(pvesim::SimConfig {
        scenario,
        agent_delay_ms: 0,
        ..Default::default()
    })
}

/// At +5,000 guests, 10 proxmox_vm_info lookups by name then 10 proxmox_kvm no-ops by
/// name: one `GET /cluster/resources` for the whole play (the first task's).
#[test]
fn at_5000_more_guests_a_play_starting_with_vm_info_lists_once() {
    let env = with_extra_guests(5000);
    let mut tasks = String::new();
    for i in 0..10 {
        tasks += &format!("- name: info {i}\n  ferrox.proxmox.proxmox_vm_info:\n    name: fleet-{i}\n");
    }
    for i in 0..10 {
        tasks += &format!("- name: kvm {i}\n  ferrox.proxmox.proxmox_kvm:\n    name: fleet-{i}\n");
    }
    env.clear_requests();
    // What is counted is the calls, not their time: the unoptimised simulator's 5,000-guest
    // listing may take past the default api_timeout (5 s) on a loaded test machine.
    let mut auth = env.auth();
    auth["api_timeout"] = 60.into();
    let opts = PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    };
    let p = env.run_with(&tasks, &opts);
    p.assert_ok();
    assert_eq!(
        count(&env, LISTING),
        1,
        "20 lookups by name, one listing: {}",
        env.requests()["counts"]
    );
    for i in 0..10u32 {
        let info = &p.task(&format!("info {i}")).result;
        assert_eq!(info["proxmox_vms"].as_array().map(Vec::len), Some(1), "{info}");
        assert_eq!(info["proxmox_vms"][0]["vmid"], json!(10_000 + i), "{info}");
        let kvm = p.task(&format!("kvm {i}"));
        assert!(!kvm.changed, "{}", kvm.result);
        assert_eq!(kvm.result["vmid"], json!(10_000 + i), "{}", kvm.result);
    }
}
