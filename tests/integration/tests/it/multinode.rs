//! Multi-node clusters as they are run: local storage on each node, one template per
//! node under the same name, clones that must end on another node.

use std::collections::BTreeMap;

use ferrox_integration::{Env, Play, PlayOpts};
use pvesim::scenario::{GuestSpec, Scenario};
use serde_json::json;

/// The default cluster with its template on pve1's local-lvm (not the shared vmdata),
/// plus, with `twin`, a template of the same name on pve2's local-lvm (vmid 9001).
fn local_templates(twin: bool) -> Scenario {
    let mut s = Scenario::default_cluster();
    let t = s.guests.iter_mut().find(|g| g.vmid == 9000).unwrap();
    t.config
        .insert("scsi0".into(), json!("local-lvm:base-9000-disk-0,discard=on,size=3G"));
    t.config
        .insert("ide2".into(), json!("local-lvm:vm-9000-cloudinit,media=cdrom"));
    if twin {
        let mut other: GuestSpec = t.clone();
        other.vmid = 9001;
        other.node = "pve2".into();
        other
            .config
            .insert("scsi0".into(), json!("local-lvm:base-9001-disk-0,discard=on,size=3G"));
        other
            .config
            .insert("ide2".into(), json!("local-lvm:vm-9001-cloudinit,media=cdrom"));
        s.guests.push(other);
    }
    s
}

fn start(scenario: Scenario) -> Env {
    Env::start_with(pvesim::SimConfig {
        scenario,
        ..Default::default()
    })
}

/// The cluster's QEMU VMs whose name starts with `prefix`: name -> [(vmid, node)].
fn vms_named(env: &Env, prefix: &str) -> BTreeMap<String, Vec<(u64, String)>> {
    let mut out: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    for g in &env.guests_listed() {
        if let Some(name) = g["name"].as_str().filter(|n| n.starts_with(prefix)) {
            out.entry(name.to_string())
                .or_default()
                .push((g["vmid"].as_u64().unwrap(), g["node"].as_str().unwrap().to_string()));
        }
    }
    out
}

fn fleet(env: &Env, tasks: &str, hosts: usize, forks: usize) -> Play {
    let inventory: String = (1..=hosts)
        .map(|i| format!("h{i:02} ansible_connection=local pve_node=pve{}\n", 1 + i % 2))
        .collect();
    let opts = PlayOpts {
        hosts: Some(("all".into(), format!("[all]\n{inventory}"))),
        env: vec![("ANSIBLE_FORKS".into(), forks.to_string())],
        ..Default::default()
    };
    env.play_with(tasks, &opts)
}

fn failures(play: &Play) -> Vec<String> {
    play.results
        .iter()
        .filter(|r| r.failed)
        .map(|r| format!("{}: {}", r.host, r.msg()))
        .collect()
}

fn changed(play: &Play) -> usize {
    play.results.iter().filter(|r| r.changed).count()
}

const FLEET: &str = r#"
- name: clone
  ferrox.proxmox.proxmox_kvm:
    clone: base-debian13
    name: "fleet-{{ inventory_hostname }}"
    node: "{{ pve_node }}"
    cores: 4
    timeout: 120
"#;

/// Ten clones by name, half on each node, each from its own node's template (the only
/// way a clone lands on the node without `target`); a rerun changes nothing.
#[test]
fn a_fleet_clones_each_vm_from_its_own_nodes_template() {
    let env = start(local_templates(true));
    let first = fleet(&env, FLEET, 10, 5);
    assert_eq!(failures(&first), Vec::<String>::new(), "{}", first.transcript());
    assert_eq!(changed(&first), 10);
    let vms = vms_named(&env, "fleet-");
    assert_eq!(vms.len(), 10, "{vms:?}");
    for (name, list) in &vms {
        assert_eq!(list.len(), 1, "one VM per name: {name} {list:?}");
        let host: usize = name.trim_start_matches("fleet-h").parse().unwrap();
        let (vmid, node) = &list[0];
        assert_eq!(node, &format!("pve{}", 1 + host % 2), "{name}");
        let config = env.api_get(&format!("/nodes/{node}/qemu/{vmid}/config"));
        assert!(
            config["scsi0"]
                .as_str()
                .unwrap()
                .starts_with(&format!("local-lvm:vm-{vmid}-disk-")),
            "{config}"
        );
        assert_eq!(config["cores"], json!(4));
    }
    for r in &first.results {
        let from = if r.host.trim_start_matches('h').parse::<usize>().unwrap() % 2 == 1 {
            9001
        } else {
            9000
        };
        assert!(
            r.msg().ends_with(&format!("cloned from vm with vmid {from}")),
            "{}: {}",
            r.host,
            r.msg()
        );
    }

    let again = fleet(&env, FLEET, 10, 5);
    assert_eq!(failures(&again), Vec::<String>::new());
    assert_eq!(changed(&again), 0, "{}", again.transcript());
}

/// Still ambiguous on the node: the message lists the candidates per node.
#[test]
fn same_named_templates_without_one_on_the_node_are_listed_per_node() {
    let mut scenario = local_templates(true);
    let mut third = scenario.guests.iter().find(|g| g.vmid == 9001).unwrap().clone();
    third.vmid = 9002;
    third
        .config
        .insert("scsi0".into(), json!("local-lvm:base-9002-disk-0,size=3G"));
    third.config.insert("ide2".into(), json!("none,media=cdrom"));
    scenario.guests.push(third);
    let env = start(scenario);
    let play =
        env.run("- name: t\n  ferrox.proxmox.proxmox_kvm:\n    clone: base-debian13\n    name: x\n    node: pve2\n");
    let msg = play.task("t").msg();
    assert!(
        msg.starts_with("Multiple VMs with name base-debian13 found (pve1: 9000; pve2: 9001, 9002), 2 of them on node pve2: provide vmid instead. They are: VM 9000 on node pve1, stopped"),
        "{msg}"
    );
    assert!(msg.contains("Nothing was chosen or removed."), "{msg}");
    assert!(vms_named(&env, "x").is_empty());
}

const TO_PVE2: &str = r#"
- name: clone
  ferrox.proxmox.proxmox_kvm:
    clone: base-debian13
    name: app-pve2
    node: pve1
    target: pve2
    storage: local-lvm
    cores: 4
    net:
      net0: virtio,bridge=vmbr1
    timeout: 120
"#;

/// pve1's template cloned to pve2's local-lvm: PVE refuses `target` for local disks, so
/// the clone is made on pve1, migrated offline, then configured, as one task.
#[test]
fn a_clone_to_another_nodes_local_storage_is_cloned_moved_and_configured() {
    let env = start(local_templates(false));
    env.clear_requests();
    let dry = env.run_with(
        TO_PVE2,
        &PlayOpts {
            check: true,
            diff: true,
            ..Default::default()
        },
    );
    dry.assert_ok();
    let planned = dry.task("clone").result.clone();
    assert!(dry.task("clone").changed);
    assert_eq!(
        planned["actions"],
        json!([
            "clone VM 9000 on pve1 to VM 101",
            "wait until VM 101 is listed cluster-wide",
            "migrate VM 101 offline from pve1 to pve2, its disks onto local-lvm",
            "update VM 101: set cores, net0 (compared again once it exists)"
        ])
    );
    assert_eq!(env.writes(), Vec::<String>::new(), "check mode writes nothing");

    let play = env.run(TO_PVE2);
    play.assert_ok();
    let t = play.task("clone");
    assert!(t.changed);
    assert_eq!(t.msg(), "VM app-pve2 with newid 101 cloned from vm with vmid 9000");
    assert_eq!(t.result["actions"], planned["actions"]);
    assert_eq!(vms_named(&env, "app-pve2")["app-pve2"], vec![(101, "pve2".to_string())]);
    let c = env.api_get("/nodes/pve2/qemu/101/config");
    assert_eq!(c["cores"], json!(4));
    assert!(c["net0"].as_str().unwrap().contains("bridge=vmbr1"), "{c}");
    assert!(
        c["scsi0"].as_str().unwrap().starts_with("local-lvm:vm-101-disk-"),
        "{c}"
    );
    let on_pve2 = env.api_get("/nodes/pve2/storage/local-lvm/content").to_string();
    assert!(on_pve2.contains("vm-101-disk-"), "{on_pve2}");
    let on_pve1 = env.api_get("/nodes/pve1/storage/local-lvm/content").to_string();
    assert!(
        !on_pve1.contains("vm-101-"),
        "nothing of the clone is left on pve1: {on_pve1}"
    );
    assert_eq!(
        t.result["mac"]["net0"],
        json!(c["net0"].as_str().unwrap().split(['=', ',']).nth(1).unwrap())
    );

    let again = env.run(TO_PVE2);
    again.assert_ok();
    assert!(!again.task("clone").changed, "{}", again.task("clone").result);
    assert_eq!(
        again.task("clone").msg(),
        "vmid 101 with VM name app-pve2 already exists"
    );
}

/// Lost answers to the clone and to the migration are reconciled, not sent twice; a
/// clone a run left on the source's node is moved by the rerun; a linked clone fails.
#[test]
fn a_moved_clone_survives_lost_answers_and_interruptions_and_a_linked_one_is_refused() {
    let env = start(local_templates(false));
    env.fault(
        json!({"method": "POST", "path_regex": "^/api2/json/nodes/pve1/qemu/9000/clone$", "after": true, "times": 1}),
    );
    env.fault(
        json!({"method": "POST", "path_regex": "^/api2/json/nodes/pve1/qemu/\\d+/migrate$", "after": true, "times": 1}),
    );
    let play = env.run(TO_PVE2);
    play.assert_ok();
    let warnings = play.task("clone").warnings().join("\n");
    assert_eq!(
        warnings.matches("Recovered by reading the cluster").count(),
        2,
        "{warnings}"
    );
    assert_eq!(vms_named(&env, "app-pve2")["app-pve2"], vec![(101, "pve2".to_string())]);
    assert_eq!(env.api_get("/nodes/pve2/qemu/101/config")["cores"], json!(4));

    // A run that ended after the clone: the rerun moves and configures it.
    env.run_task(
        "POST",
        "/nodes/pve1/qemu/9000/clone",
        &[("newid", "150"), ("name", "half-made"), ("full", "1")],
    );
    let rerun = env.run(&TO_PVE2.replace("app-pve2", "half-made"));
    rerun.assert_ok();
    let t = rerun.task("clone");
    assert_eq!(
        t.msg(),
        "VM half-made with vmid 150 moved from pve1 to pve2, where the clone is to be"
    );
    assert_eq!(
        vms_named(&env, "half-made")["half-made"],
        vec![(150, "pve2".to_string())]
    );
    assert_eq!(env.api_get("/nodes/pve2/qemu/150/config")["cores"], json!(4));

    let linked = env.run(
        &TO_PVE2
            .replace("app-pve2", "linked")
            .replace("    storage: local-lvm\n", "    full: false\n"),
    );
    assert_eq!(
        linked.task("clone").msg(),
        "Unable to clone vm linked from vmid 9000: a linked clone (full: false) cannot be made on node pve2: it stays on the storage of its template's disks (local-lvm), local to pve1, and a linked clone cannot be moved. Make a full clone (full: true), or clone on pve1 (target: pve1)"
    );
    assert!(vms_named(&env, "linked").is_empty());
}

/// A local storage's lock timing out, as pve-storage words it.
const BUSY_LOCAL_LVM: &str = "can't lock file '/var/lock/pve-manager/pve-storage-local-lvm' - got timeout";

/// Play options with root@pam's password: PVE lets only root remove a VM a failed
/// clone left locked (skiplock).
fn as_root(env: &Env, mut opts: PlayOpts) -> PlayOpts {
    let mut auth = env.auth();
    auth["api_user"] = "root@pam".into();
    auth["api_password"] = ferrox_integration::creds::ROOT_PASSWORD.into();
    auth.as_object_mut().unwrap().remove("api_token_id");
    auth.as_object_mut().unwrap().remove("api_token_secret");
    opts.module_defaults = Some(env.defaults_with(auth));
    opts
}

/// From the simulator's state: image volumes no VM config references (owner gone, or
/// not in its config), and VMs left locked by a create or clone.
fn leftovers(env: &Env) -> (Vec<String>, Vec<u64>) {
    let state = env.state();
    let guests = state["guests"].as_object().unwrap();
    let orphans = state["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["content"] == "images")
        .map(|v| format!("{}:{}", v["storage"].as_str().unwrap(), v["volname"].as_str().unwrap()))
        .filter(|volid| {
            !guests.values().any(|g| {
                g["conf"]["current"]
                    .as_object()
                    .unwrap()
                    .values()
                    .any(|c| c.as_str().is_some_and(|c| c.split(',').next() == Some(volid)))
            })
        })
        .collect();
    let half_made = guests
        .values()
        .filter(|g| matches!(g["conf"]["current"]["lock"].as_str(), Some("clone" | "create")))
        .map(|g| g["vmid"].as_u64().unwrap())
        .collect();
    (orphans, half_made)
}

/// pve1's clones take the next free vmid; pve2's are given one (`newid`), far from those.
const BUSY_FLEET: &str = r#"
- name: clone
  ferrox.proxmox.proxmox_kvm:
    clone: base-debian13
    name: "busy-{{ inventory_hostname }}"
    node: "{{ pve_node }}"
    newid: "{{ (500 + inventory_hostname[1:] | int) if pve_node == 'pve2' else omit }}"
    cores: 4
    timeout: 120
"#;

/// Twenty clones at once onto the nodes' local-lvm, four of their tasks failing on a busy
/// lock (some leaving volumes or a locked half-made VM behind): each is cleaned up and
/// tried again, so every clone is made, and the cluster holds nothing else. At most two
/// faults wait for each source's clones: which clone meets them depends on when the forks
/// start, and a clone meeting three would rightly fail after its three attempts. A vmid a failed
/// clone freed may be taken by another clone meanwhile: the retry takes the next one.
/// Volumes left under a vmid someone else took cannot be told from that VM's (see
/// busy_lock.rs), so the clones whose faults leave volumes are given their vmid.
#[test]
fn busy_storages_under_twenty_parallel_clones_are_retried_and_leave_nothing_behind() {
    let env = start(local_templates(true));
    let before = leftovers(&env);
    env.fault(json!([
        {"task_type": "qmclone", "vmid": 9000, "fail": "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout", "at_lock": true, "times": 1},
        {"task_type": "qmclone", "vmid": 9000, "fail": BUSY_LOCAL_LVM, "leave": "config", "times": 1},
        {"task_type": "qmclone", "vmid": 9001, "fail": BUSY_LOCAL_LVM, "leave": "volumes", "times": 2},
    ]));
    let inventory: String = (1..=20)
        .map(|i| format!("h{i:02} ansible_connection=local pve_node=pve{}\n", 1 + i % 2))
        .collect();
    let opts = PlayOpts {
        hosts: Some(("all".into(), format!("[all]\n{inventory}"))),
        env: vec![("ANSIBLE_FORKS".into(), "10".into())],
        ..Default::default()
    };
    let play = env.play_with(BUSY_FLEET, &as_root(&env, opts));
    assert_eq!(failures(&play), Vec::<String>::new(), "{}", play.transcript());
    assert_eq!(changed(&play), 20);
    let retried: Vec<String> = play
        .results
        .iter()
        .flat_map(|r| r.warnings())
        .filter(|w| w.contains("failed on a busy lock"))
        .collect();
    assert_eq!(retried.len(), 4, "{retried:#?}");
    // Whichever clone reaches a source's second fault (another clone, or the first one's
    // retry) is tried again; no clone needs its last attempt.
    assert!(
        retried
            .iter()
            .all(|w| w.contains("Attempt 1 of 3") || w.contains("Attempt 2 of 3")),
        "{retried:#?}"
    );
    assert_eq!(
        retried.iter().filter(|w| w.contains("half-made VM")).count(),
        1,
        "{retried:#?}"
    );
    assert_eq!(
        retried.iter().filter(|w| w.contains("the volumes it left")).count(),
        2,
        "{retried:#?}"
    );

    let state = env.state();
    let fleet: Vec<&serde_json::Value> = state["guests"]
        .as_object()
        .unwrap()
        .values()
        .filter(|g| {
            g["conf"]["current"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("busy-"))
        })
        .collect();
    assert_eq!(fleet.len(), 20, "one VM per clone");
    for g in &fleet {
        let c = &g["conf"]["current"];
        let host: usize = c["name"]
            .as_str()
            .unwrap()
            .trim_start_matches("busy-h")
            .parse()
            .unwrap();
        assert_eq!(g["node"], json!(format!("pve{}", 1 + host % 2)), "{g}");
        assert_eq!(c["cores"], json!("4"), "{g}");
        assert!(
            c["scsi0"]
                .as_str()
                .unwrap()
                .starts_with(&format!("local-lvm:vm-{}-disk-", g["vmid"])),
            "{g}"
        );
    }
    assert_eq!(leftovers(&env), before, "no orphaned volumes, no half-made VMs");
}

const ONE_CLONE: &str = r#"
- name: clone
  ferrox.proxmox.proxmox_kvm:
    clone: base-debian13
    name: one
    node: pve1
    timeout: 60
"#;

/// A clone task failing otherwise fails as before (once, with its log); one busy once is
/// tried again and made; one busy to the end fails naming the lock and the attempts, and leaves nothing of its VM; a busy create
/// is retried the same way, its nameless placeholder left alone; a token cannot remove a
/// locked half-made VM, and is told who can.
#[test]
fn a_clone_failing_otherwise_or_busy_to_the_end_fails_and_says_what_is_left() {
    let env = start(local_templates(false));
    let before = leftovers(&env);
    let clone_posts = |env: &Env| {
        env.requests()["counts"]["POST /api2/json/nodes/pve1/qemu/9000/clone"]
            .as_u64()
            .unwrap_or(0)
    };

    let full = "lvcreate 'pve/vm-101-disk-0' error:   Volume group \"pve\" has insufficient free space (767 extents): 768 required.";
    env.fault(json!({"task_type": "qmclone", "fail": full, "times": 1}));
    env.clear_requests();
    let play = env.run(ONE_CLONE);
    let t = play.task("clone");
    assert!(t.failed);
    assert!(
        t.msg().starts_with(&format!(
            "Unable to clone vm one from vmid 9000: clone failed: {full} (task UPID:pve1:"
        )),
        "{}",
        t.msg()
    );
    assert!(t.warnings().is_empty(), "{:?}", t.warnings());
    assert_eq!(clone_posts(&env), 1, "not tried again");

    // Busy once, cleaned up by PVE's worker: tried again and made.
    env.fault(json!({"task_type": "qmclone", "fail": BUSY_LOCAL_LVM, "times": 1}));
    env.clear_requests();
    let play = env.run(ONE_CLONE);
    let t = play.task("clone");
    assert!(!t.failed, "{}", t.msg());
    assert_eq!(clone_posts(&env), 2);
    let warnings = t.warnings().join("\n");
    assert!(warnings.contains("failed on a busy lock"), "{warnings}");
    assert!(warnings.contains("Attempt 1 of 3"), "{warnings}");
    assert_eq!(vms_named(&env, "one")["one"], vec![(101, "pve1".to_string())]);
    env.run_task("DELETE", "/nodes/pve1/qemu/101", &[("destroy-unreferenced-disks", "1")]);
    assert_eq!(leftovers(&env), before);

    env.fault(json!({"task_type": "qmclone", "fail": BUSY_LOCAL_LVM, "leave": "volumes", "times": 3}));
    env.clear_requests();
    let play = env.run(ONE_CLONE);
    let t = play.task("clone");
    assert!(t.failed);
    let msg = t.msg();
    assert!(
        msg.starts_with(&format!(
            "Unable to clone vm one from vmid 9000: clone failed: {BUSY_LOCAL_LVM} (task UPID:pve1:"
        )),
        "{msg}"
    );
    assert!(
        msg.contains("got timeout. The lock of storage local-lvm timed out in 3 attempts within "),
        "{msg}"
    );
    assert!(msg.contains("the volumes it left of VM 101 were removed"), "{msg}");
    assert_eq!(clone_posts(&env), 3);
    assert_eq!(
        t.warnings()
            .iter()
            .filter(|w| w.contains("failed on a busy lock"))
            .count(),
        2,
        "{:?}",
        t.warnings()
    );
    assert_eq!(leftovers(&env), before, "nothing of the clone is left");
    assert!(vms_named(&env, "one").is_empty());

    // A create too: its volumes left by a cleanup that hit the lock are removed, then it is made.
    env.fault(json!({"task_type": "qmcreate", "fail": BUSY_LOCAL_LVM, "leave": "volumes", "times": 1}));
    let play = env.run("- name: create\n  ferrox.proxmox.proxmox_kvm:\n    name: made\n    node: pve1\n    scsi:\n      scsi0: local-lvm:1\n");
    let t = play.task("create");
    assert!(!t.failed, "{}", t.msg());
    let warnings = t.warnings().join("\n");
    assert!(warnings.contains(&format!("failed on a busy lock: unable to create VM 101 - {BUSY_LOCAL_LVM}. Attempt 1 of 3: the volumes it left of VM 101 were removed")), "{warnings}");
    assert_eq!(vms_named(&env, "made")["made"], vec![(101, "pve1".to_string())]);
    assert_eq!(leftovers(&env), before, "only the VM, no leftover volumes");
    env.run_task("DELETE", "/nodes/pve1/qemu/101", &[("destroy-unreferenced-disks", "1")]);

    // A create's placeholder left behind (lock create, no name) cannot be told from another
    // run's create in progress: left alone, the retry takes the next vmid.
    env.fault(json!({"task_type": "qmcreate", "fail": BUSY_LOCAL_LVM, "leave": "config", "times": 1}));
    let play = env.run("- name: create\n  ferrox.proxmox.proxmox_kvm:\n    name: made\n    node: pve1\n");
    let t = play.task("create");
    assert!(!t.failed, "{}", t.msg());
    assert!(
        t.warnings()
            .join("\n")
            .contains("Attempt 1 of 3: VM 101 on pve1 is locked (create) without a name"),
        "{:?}",
        t.warnings()
    );
    assert_eq!(vms_named(&env, "made")["made"], vec![(102, "pve1".to_string())]);
    assert_eq!(leftovers(&env).1, vec![101]);
    env.run_task(
        "DELETE",
        "/nodes/pve1/qemu/101",
        &[("skiplock", "1"), ("destroy-unreferenced-disks", "1")],
    );
    env.run_task("DELETE", "/nodes/pve1/qemu/102", &[]);
    assert_eq!(leftovers(&env), before);

    env.fault(json!({"task_type": "qmclone", "fail": BUSY_LOCAL_LVM, "leave": "config", "times": 1}));
    let play = env.run(ONE_CLONE);
    let t = play.task("clone");
    assert!(t.failed);
    assert!(
        t.msg().ends_with("The failed task left VM 101 on pve1 half-made (lock clone, with its volumes); PVE removes a locked VM only for root@pam (skiplock). Remove it there with `qm unlock 101 && qm destroy 101 --purge 1 --destroy-unreferenced-disks 1`, then run the task again"),
        "{}",
        t.msg()
    );
    assert_eq!(leftovers(&env).1, vec![101], "left as it was");
}
