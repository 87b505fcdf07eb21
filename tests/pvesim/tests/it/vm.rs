//! VM lifecycle against the simulator: create, locks, normalisation, races, pending
//! and hotplug, digests, power, clone, template, destroy, agent, listings.

use crate::common::*;
use pvesim::SimConfig;
use serde_json::Value;
use std::time::Duration;

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

#[test]
fn create_locks_then_normalises() {
    // Long enough that the checks below run while the create task is still going.
    let api = Api::start(SimConfig {
        task_ms: 1500,
        ..quick()
    });
    let r = api.get("/cluster/nextid");
    assert_eq!(r.data(), &Value::from("101"), "nextid is a string");
    let r = api.post(
        "/nodes/pve1/qemu",
        &[
            ("vmid", "101"),
            ("name", "web02"),
            ("memory", "2048"),
            ("cores", "2"),
            ("scsi0", "local-lvm:32,ssd=on,iothread=1,discard=on"),
            ("scsihw", "virtio-scsi-single"),
            ("net0", "model=virtio,firewall=1,bridge=vmbr0,tag=20"),
            ("ide2", "isos:iso/debian-13-netinst.iso,media=cdrom"),
            ("efidisk0", "local-lvm:1,efitype=4m,pre-enrolled-keys=1"),
            ("tags", "Prod,web;a"),
            ("agent", "1"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let upid = s(r.data()).to_string();
    assert!(
        upid.starts_with("UPID:pve1:") && upid.ends_with(":qmcreate:101:ansible@pve!automation:"),
        "{upid}"
    );
    // Right after the POST: only the lock, modifying calls refused.
    let c = api.config("pve1", 101);
    assert_eq!(c["lock"], "create");
    assert_eq!(c.as_object().unwrap().len(), 2, "lock + digest only: {c}");
    let r = api.put("/nodes/pve1/qemu/101/config", &[("cores", "4")]);
    assert_eq!((r.status, r.message().as_str()), (500, "VM is locked (create)\n"));
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "101")]);
    assert_eq!(
        r.message(),
        "unable to create VM 101 - VM 101 already exists on node 'pve1'\n"
    );
    let st = api.wait_task(&upid);
    assert_eq!(st["exitstatus"], "OK");
    assert_eq!(st["type"], "qmcreate");
    assert_eq!(st["id"], "101");
    let log = api.task_log(&upid);
    assert_eq!(log.last().unwrap(), "TASK OK");
    assert!(
        log.iter()
            .any(|l| l == "scsi0: successfully created disk 'local-lvm:vm-101-disk-0,size=32G'"),
        "{log:?}"
    );
    let c = api.config("pve1", 101);
    assert!(c.get("lock").is_none());
    assert_eq!(
        c["scsi0"],
        "local-lvm:vm-101-disk-0,discard=on,iothread=1,size=32G,ssd=1"
    );
    // PVE 9 marks a new EFI disk with pre-enrolled keys as holding the 2023 certificates.
    assert_eq!(
        c["efidisk0"],
        "local-lvm:vm-101-disk-1,efitype=4m,ms-cert=2023k,pre-enrolled-keys=1,size=4M"
    );
    let net = s(&c["net0"]);
    assert!(
        net.starts_with("virtio=BC:24:11:") && net.ends_with(",bridge=vmbr0,firewall=1,tag=20"),
        "{net}"
    );
    assert_eq!(c["ide2"], "isos:iso/debian-13-netinst.iso,media=cdrom,size=754M");
    assert_eq!(c["boot"], "order=scsi0;ide2;net0");
    assert_eq!(c["tags"], "a;prod;web");
    assert_eq!(c["cores"], 2, "integers are JSON numbers");
    assert_eq!(c["memory"], "2048", "memory is a property string");
    assert!(s(&c["smbios1"]).starts_with("uuid="));
    assert_eq!(s(&c["vmgenid"]).len(), 36);
    assert!(s(&c["meta"]).starts_with("creation-qemu="));
    assert_eq!(s(&c["digest"]).len(), 40);
    // Listing and status.
    let list = api.get("/nodes/pve1/qemu");
    let e = list
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vmid"] == 101)
        .unwrap()
        .clone();
    assert_eq!(e["name"], "web02");
    assert_eq!(e["maxdisk"], 34359738368u64);
    assert_eq!(e["status"], "stopped");
    assert!(e.get("node").is_none());
    let st = api.get("/nodes/pve1/qemu/101/status/current");
    assert_eq!(st.data()["qmpstatus"], "stopped");
    assert_eq!(st.data()["agent"], 1);
    // Wrong node.
    let r = api.get("/nodes/pve2/qemu/101/config");
    assert_eq!(
        r.message(),
        "Configuration file 'nodes/pve2/qemu-server/101.conf' does not exist\n"
    );
}

#[test]
fn cluster_resources_lag_behind() {
    let api = Api::start(SimConfig {
        resources_lag_ms: 1500,
        ..quick()
    });
    let upid = s(api
        .post("/nodes/pve1/qemu", &[("vmid", "120"), ("name", "lagging")])
        .data())
    .to_string();
    api.wait_task(&upid);
    let vm = |api: &Api| {
        let r = api.get("/cluster/resources?type=vm");
        r.data()
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["vmid"] == 120)
            .cloned()
            .unwrap()
    };
    let e = vm(&api);
    assert_eq!(e["status"], "unknown");
    assert_eq!(e["id"], "qemu/120");
    assert!(e.get("name").is_none() && e.get("maxmem").is_none(), "{e}");
    std::thread::sleep(Duration::from_millis(1550));
    let e = vm(&api);
    assert_eq!(e["name"], "lagging");
    assert_eq!(e["status"], "stopped");
    assert_eq!(e["maxmem"], 512u64 << 20);
    assert_eq!(e["template"], 0);
    // Type filter and LXC entries.
    let all = api.get("/cluster/resources?type=vm");
    let ct = all
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vmid"] == 200)
        .unwrap()
        .clone();
    assert_eq!(
        (ct["type"].as_str(), ct["name"].as_str()),
        (Some("lxc"), Some("ct-dns"))
    );
    let nodes = api.get("/cluster/resources?type=node");
    assert!(nodes.data().as_array().unwrap().iter().all(|n| n["type"] == "node"));
    let r = api.get("/cluster/resources?type=bogus");
    assert_eq!(r.status, 400);
    assert!(r
        .error("type")
        .starts_with("value 'bogus' does not have a value in the enumeration"));
    let r = api.get("/cluster/nextid?vmid=100");
    assert_eq!((r.status, r.error("vmid").as_str()), (400, "VM 100 already exists"));
    let r = api.get("/cluster/nextid?vmid=200");
    assert_eq!(
        r.error("vmid"),
        "VM 200 already exists",
        "pve-manager's nextid says VM for containers too"
    );
    let r = api.get("/cluster/nextid?vmid=99");
    assert_eq!(r.error("vmid"), "value must have a minimum value of 100");
}

#[test]
fn power_state_lags_in_cluster_resources_when_configured() {
    let api = Api::start(SimConfig {
        status_lag_ms: 800,
        ..quick()
    });
    let status = |api: &Api| {
        let r = api.get("/cluster/resources?type=vm");
        r.data().as_array().unwrap().iter().find(|v| v["vmid"] == 100).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]), "OK");
    assert_eq!(
        api.get("/nodes/pve1/qemu/100/status/current").data()["status"],
        "running",
        "the node knows at once"
    );
    assert_eq!(status(&api), "stopped", "the broadcast has not caught up");
    std::thread::sleep(Duration::from_millis(850));
    assert_eq!(status(&api), "running");
}

#[test]
fn concurrent_creates_with_the_same_id_collide_like_pve() {
    let api = Api::start(quick());
    for round in 0..5 {
        let id = (150 + round).to_string();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
        let results: Vec<(u16, String)> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..4)
                .map(|i| {
                    let (b, id, api) = (barrier.clone(), id.clone(), &api);
                    sc.spawn(move || {
                        let name = format!("race{i}");
                        b.wait();
                        let r = api.post(
                            "/nodes/pve1/qemu",
                            &[("vmid", &id), ("name", &name), ("scsi0", "local-lvm:1")],
                        );
                        (r.status, r.message())
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let ok = results.iter().filter(|r| r.0 == 200).count();
        assert_eq!(ok, 1, "exactly one create wins: {results:?}");
        for (st, msg) in results.iter().filter(|r| r.0 != 200) {
            assert_eq!(*st, 500);
            assert_eq!(
                msg,
                &format!("unable to create VM {id} - VM {id} already exists on node 'pve1'\n")
            );
        }
    }
}

/// qemu-server's create takes the vmid before the worker forks: under the vmid's
/// config lock it checks the cluster-wide VM list (`check_vmid_unused`) and writes a
/// config holding only `lock: create`. So one vmid is created once across all nodes,
/// the losers get HTTP 500 naming the winner's node, and the id is taken from the
/// moment the create is accepted.
#[test]
fn concurrent_creates_of_one_vmid_on_different_nodes_collide_cluster_wide() {
    let api = Api::start(SimConfig {
        task_ms: 1500,
        ..quick()
    });
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let results: Vec<(&str, u16, String)> = std::thread::scope(|sc| {
        let hs: Vec<_> = ["pve1", "pve2", "pve1", "pve2"]
            .into_iter()
            .map(|node| {
                let (b, api) = (barrier.clone(), &api);
                sc.spawn(move || {
                    b.wait();
                    let r = api.post(&format!("/nodes/{node}/qemu"), &[("vmid", "170"), ("name", "twin")]);
                    (node, r.status, r.message())
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<&str> = results.iter().filter(|r| r.1 == 200).map(|r| r.0).collect();
    assert_eq!(winners.len(), 1, "exactly one create wins: {results:?}");
    let winner = winners[0];
    for (_, status, msg) in results.iter().filter(|r| r.1 != 200) {
        assert_eq!(
            (*status, msg.as_str()),
            (
                500,
                format!("unable to create VM 170 - VM 170 already exists on node '{winner}'\n").as_str()
            )
        );
    }
    // Taken from the moment it was accepted: the config holds only the lock, the
    // cluster lists the vmid (without a name yet), and a later create is refused too.
    let c = api.config(winner, 170);
    assert_eq!(c["lock"], "create", "{c}");
    assert!(c.get("name").is_none(), "the name arrives with the create task: {c}");
    let listed = api.get("/cluster/resources?type=vm");
    assert!(listed
        .data()
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["vmid"] == 170 && v["node"] == winner));
    let other = if winner == "pve1" { "pve2" } else { "pve1" };
    let r = api.post(&format!("/nodes/{other}/qemu"), &[("vmid", "170")]);
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            format!("unable to create VM 170 - VM 170 already exists on node '{winner}'\n")
        )
    );
}

#[test]
fn pending_versus_hotplug_and_digest() {
    let api = Api::start(quick());
    let before = api.config("pve1", 100);
    // Stopped VM: applied at once.
    let r = api.put("/nodes/pve1/qemu/100/config", &[("cores", "3")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    let c = api.config("pve1", 100);
    assert_eq!(c["cores"], 3);
    assert_ne!(c["digest"], before["digest"], "digest changes with the file");
    // Stale digest.
    let r = api.put(
        "/nodes/pve1/qemu/100/config",
        &[("cores", "4"), ("digest", s(&before["digest"]))],
    );
    assert_eq!(
        (r.status, r.message().as_str()),
        (500, "checksum mismatch (file change by other user?)\n")
    );
    let r = api.put(
        "/nodes/pve1/qemu/100/config",
        &[("cores", "4"), ("digest", s(&c["digest"]))],
    );
    assert_eq!(r.status, 200);
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]), "OK");
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]),
        "VM 100 already running"
    );
    // Running: cores is pending, name is live, a new NIC hotplugs (network hotplug).
    let r = api.put(
        "/nodes/pve1/qemu/100/config",
        &[
            ("cores", "8"),
            ("name", "web01-renamed"),
            ("net1", "e1000,bridge=vmbr1"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let cur = api.get("/nodes/pve1/qemu/100/config?current=1");
    assert_eq!(cur.data()["cores"], 4);
    assert_eq!(cur.data()["name"], "web01-renamed");
    assert!(s(&cur.data()["net1"]).starts_with("e1000=BC:24:11:"));
    assert_eq!(api.config("pve1", 100)["cores"], 8, "default view applies pending");
    let pending = api.get("/nodes/pve1/qemu/100/pending");
    let items = pending.data().as_array().unwrap();
    let cores = items.iter().find(|i| i["key"] == "cores").unwrap();
    assert_eq!((cores["value"].as_i64(), cores["pending"].as_i64()), (Some(4), Some(8)));
    assert!(items.iter().any(|i| i["key"] == "digest"));
    // Deleting a disk of a running VM with disk hotplug: applied, volume becomes unused0.
    let r = api.put("/nodes/pve1/qemu/100/config", &[("delete", "ostype")]);
    assert_eq!(r.status, 200);
    let pending = api.get("/nodes/pve1/qemu/100/pending");
    let ost = pending
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["key"] == "ostype")
        .unwrap()
        .clone();
    assert_eq!(ost["delete"], 1);
    // Revert drops the pending change.
    assert_eq!(
        api.put("/nodes/pve1/qemu/100/config", &[("revert", "ostype")]).status,
        200
    );
    assert_eq!(api.get("/nodes/pve1/qemu/100/config").data()["ostype"], "l26");
    // Bad bridge on hotplug: 400 with the hotplug problem, change stays pending.
    let r = api.put("/nodes/pve1/qemu/100/config", &[("net2", "virtio,bridge=vmbr9")]);
    assert_eq!(r.status, 400);
    assert_eq!(r.error("net2"), "hotplug problem - bridge 'vmbr9' does not exist");
    assert!(api
        .get("/nodes/pve1/qemu/100/config?current=1")
        .data()
        .get("net2")
        .is_none());
    assert_eq!(
        api.put("/nodes/pve1/qemu/100/config", &[("revert", "net2")]).status,
        200
    );
    // Refusals while running.
    let r = api.delete("/nodes/pve1/qemu/100", &[]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (500, "VM 100 is running - destroy failed\n")
    );
    // Stop applies pending changes.
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/stop", &[]), "OK");
    let c = api.config("pve1", 100);
    assert_eq!(c["cores"], 8);
    assert!(api
        .get("/nodes/pve1/qemu/100/pending")
        .data()
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i.get("pending").is_none()));
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/status/stop", &[]),
        "OK",
        "stop of a stopped VM is a no-op"
    );
    let r = api.post("/nodes/pve1/qemu/100/status/reboot", &[]);
    assert_eq!((r.status, r.message().as_str()), (500, "VM 100 not running\n"));
    // POST config is a task; background_delay returns null when it finished in time.
    let r = api.post("/nodes/pve1/qemu/100/config", &[("description", "hello")]);
    assert!(s(r.data()).contains(":qmconfig:100:"));
    let r = api.post(
        "/nodes/pve1/qemu/100/config",
        &[("description", "again"), ("background_delay", "5")],
    );
    assert_eq!(r.body, serde_json::json!({"data": null}), "{}", r.raw);
    // No options: 500.
    let r = api.put("/nodes/pve1/qemu/100/config", &[]);
    assert_eq!(r.message(), "no options specified\n");
    let r = api.put("/nodes/pve1/qemu/100/config", &[("delete", "foo")]);
    assert_eq!(r.status, 400);
}

#[test]
fn schema_rejects_bad_parameters_with_pve_texts() {
    let api = Api::start(quick());
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "130"), ("foo", "bar")]);
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "Parameter verification failed.\n");
    assert_eq!(
        r.error("foo"),
        "property is not defined in schema and the schema does not allow additional properties"
    );
    let r = api.post(
        "/nodes/pve1/qemu",
        &[("vmid", "130"), ("net0", "virtio,bridge=vmbr0,bridge=vmbr1")],
    );
    assert_eq!(
        r.error("net0"),
        "invalid format - duplicate key in comma-separated list property: bridge\n"
    );
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "130"), ("net0", "foo,bridge=vmbr0")]);
    assert!(r.error("net0").starts_with(
        "invalid format - format error\nnet0.model: value 'foo' does not have a value in the enumeration 'e1000, "
    ));
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "130"), ("onboot", "true")]);
    assert_eq!(r.error("onboot"), "type check ('boolean') failed - got 'true'");
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "130"), ("net40", "virtio")]);
    assert!(r.error("net40").starts_with("property is not defined in schema"));
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "130"), ("name", "bad_name")]);
    assert_eq!(
        r.error("name"),
        "invalid format - value does not look like a valid DNS name\n"
    );
    let r = api.post("/nodes/pve1/qemu/100/status/start", &[("vmid", "101")]);
    assert_eq!(
        r.error("vmid"),
        "duplicate parameter (already defined in URI) with conflicting values!"
    );
    assert_eq!(
        api.post("/nodes/pve1/qemu/100/status/stop", &[("vmid", "100"), ("node", "pve1")])
            .status,
        200,
        "equal duplicates are fine"
    );
    let r = api.post(
        "/nodes/pve1/qemu",
        &[("vmid", "130"), ("ide2", "isos:iso/virtio-win.iso")],
    );
    assert_eq!(r.error("ide2"), "explicit 'media=cdrom' is required for iso images");
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "130"), ("scsi0", "nosuch:4")]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (500, "storage 'nosuch' does not exist\n")
    );
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "130"), ("scsi0", "local:4")]);
    assert_eq!(r.error("storage"), "storage 'local' does not support vm images");
    let r = api.post(
        "/nodes/pve1/qemu",
        &[
            ("vmid", "130"),
            ("scsi0", "local-lvm:4,import-from=vmdata:9000/base-9000-disk-0.qcow2"),
        ],
    );
    assert_eq!(
        r.error("scsi0"),
        "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>"
    );
    // Unknown paths and methods.
    let r = api.get("/nodes/pve1/qemu/100/foo");
    assert_eq!(
        (r.status, r.message().as_str()),
        (501, "Method 'GET /nodes/pve1/qemu/100/foo' not implemented")
    );
    let raw = raw_tls(
        &api.sim,
        format!("PATCH /api2/json/version HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    );
    assert_eq!(status_line(&raw), "HTTP/1.1 501 method 'PATCH' not available");
    let raw = raw_tls(&api.sim, format!("GET /api2/json/nodes/pve1/qemu/100/foo HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\nConnection: close\r\n\r\n").as_bytes());
    assert_eq!(
        status_line(&raw),
        "HTTP/1.1 501 Method 'GET /nodes/pve1/qemu/100/foo' not implemented"
    );
    let r = api.get("/nodes/nosuch/qemu");
    assert!(r.message().starts_with("hostname lookup 'nosuch' failed"));
}

#[test]
fn clone_template_destroy_and_import() {
    let api = Api::start(quick());
    // Linked clone of the template (default for templates).
    let r = api.post("/nodes/pve1/qemu/9000/clone", &[("newid", "123")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    let upid = s(r.data()).to_string();
    assert!(upid.contains(":qmclone:9000:"), "task id is the source vmid");
    assert_eq!(api.config("pve1", 123)["lock"], "clone");
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    assert!(api
        .task_log(&upid)
        .iter()
        .any(|l| l == "create linked clone of drive scsi0 (vmdata:9000/base-9000-disk-0.qcow2)"));
    let c = api.config("pve1", 123);
    assert_eq!(
        c["scsi0"],
        "vmdata:9000/base-9000-disk-0.qcow2/123/vm-123-disk-0.qcow2,discard=on,size=3G"
    );
    assert_eq!(c["ide2"], "vmdata:123/vm-123-cloudinit.qcow2,media=cdrom");
    assert_eq!(c["name"], "Copy-of-VM-base-debian13");
    assert!(c.get("template").is_none());
    let src = api.config("pve1", 9000);
    assert_ne!(c["net0"], src["net0"], "clones get new MACs");
    assert_ne!(c["smbios1"], src["smbios1"]);
    // The template cannot go while a linked clone uses its base volume.
    assert_eq!(
        api.run_task("DELETE", "/nodes/pve1/qemu/9000", &[]),
        "base volume 'vmdata:9000/base-9000-disk-0.qcow2' is still in use by linked cloned"
    );
    // Full clone to block storage with a name.
    let st = api.run_task(
        "POST",
        "/nodes/pve1/qemu/9000/clone",
        &[
            ("newid", "124"),
            ("full", "1"),
            ("storage", "local-lvm"),
            ("name", "full01"),
        ],
    );
    assert_eq!(st, "OK");
    let c = api.config("pve1", 124);
    assert_eq!(c["scsi0"], "local-lvm:vm-124-disk-0,discard=on,size=3G");
    assert_eq!(c["name"], "full01");
    let r = api.post("/nodes/pve1/qemu/9000/clone", &[("newid", "124")]);
    assert_eq!(r.message(), "unable to create VM 124: config file already exists\n");
    let r = api.post(
        "/nodes/pve1/qemu/9000/clone",
        &[("newid", "125"), ("full", "0"), ("storage", "local-lvm")],
    );
    assert_eq!(r.message(), "parameter 'storage' not allowed for linked clones\n");
    // Template conversion renames disks.
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/124/template", &[]), "OK");
    let c = api.config("pve1", 124);
    assert_eq!(c["template"], 1);
    assert_eq!(c["scsi0"], "local-lvm:base-124-disk-0,discard=on,size=3G");
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/124/status/start", &[]),
        "you can't start a vm if it's a template"
    );
    let r = api.post("/nodes/pve1/qemu/124/template", &[]);
    assert_eq!(r.message(), "you can't convert a template to a template\n");
    // Import from the template disk into a new VM.
    let st = api.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[
            ("vmid", "126"),
            ("scsi0", "nvme-pool:0,import-from=vmdata:9000/base-9000-disk-0.qcow2"),
        ],
    );
    assert_eq!(st, "OK");
    assert_eq!(api.config("pve1", 126)["scsi0"], "nvme-pool:vm-126-disk-0,size=3G");
    // Destroy frees the volumes.
    assert_eq!(
        api.run_task(
            "DELETE",
            "/nodes/pve1/qemu/126",
            &[("purge", "1"), ("destroy-unreferenced-disks", "1")]
        ),
        "OK"
    );
    let r = api.get("/nodes/pve1/qemu/126/config");
    assert_eq!(
        (r.status, r.message().as_str()),
        (
            500,
            "Configuration file 'nodes/pve1/qemu-server/126.conf' does not exist\n"
        )
    );
    let content = api.get("/nodes/pve1/storage/nvme-pool/content");
    assert!(
        content.data().as_array().unwrap().iter().all(|v| v["vmid"] != 126),
        "{}",
        content.raw
    );
    // Offline, local disks go along; live, only with with-local-disks.
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]), "OK");
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/100/migrate",
            &[("target", "pve2"), ("online", "1")]
        ),
        "Problem found while scanning volumes - can't migrate VM - check log"
    );
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/100/status/stop", &[]), "OK");
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu/100/migrate", &[("target", "pve2")]),
        "OK"
    );
    assert_eq!(
        api.config("pve2", 100)["scsi0"],
        "local-lvm:vm-100-disk-0,iothread=1,size=32G"
    );
    assert!(api
        .get("/nodes/pve2/storage/local-lvm/content")
        .raw
        .contains("local-lvm:vm-100-disk-0"));
    assert!(!api
        .get("/nodes/pve1/storage/local-lvm/content")
        .raw
        .contains("local-lvm:vm-100-disk-0"));
    // targetstorage: the disks land on that storage of the target node.
    let r = api.post(
        "/nodes/pve2/qemu/100/migrate",
        &[("target", "pve1"), ("targetstorage", "isos")],
    );
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve2/qemu/100/migrate",
            &[("target", "pve1"), ("targetstorage", "nvme-pool")]
        ),
        "OK"
    );
    assert_eq!(
        api.config("pve1", 100)["scsi0"],
        "nvme-pool:vm-100-disk-0,iothread=1,size=32G"
    );
    assert!(
        !api.get("/nodes/pve2/storage/local-lvm/content")
            .raw
            .contains("vm-100-disk-0"),
        "the source volume is gone"
    );
}

#[test]
fn guest_agent_and_power_states() {
    let api = Api::start(quick());
    let r = api.get("/nodes/pve1/qemu/100/agent/network-get-interfaces");
    assert_eq!(r.message(), "No QEMU guest agent configured\n");
    assert_eq!(
        api.run_task(
            "POST",
            "/nodes/pve1/qemu/9000/clone",
            &[("newid", "140"), ("name", "agent01")]
        ),
        "OK"
    );
    let r = api.get("/nodes/pve1/qemu/140/agent/network-get-interfaces");
    assert_eq!(r.message(), "VM 140 is not running\n");
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/140/status/start", &[]), "OK");
    let st = api.get("/nodes/pve1/qemu/140/status/current");
    assert_eq!(
        (st.data()["status"].as_str(), st.data()["qmpstatus"].as_str()),
        (Some("running"), Some("running"))
    );
    std::thread::sleep(Duration::from_millis(150));
    let r = api.get("/nodes/pve1/qemu/140/agent/network-get-interfaces");
    assert_eq!(r.status, 200, "{}", r.raw);
    let ifaces = r.data()["result"].as_array().unwrap();
    assert_eq!(ifaces[0]["name"], "lo");
    let mac = s(&api.config("pve1", 140)["net0"])
        .split(',')
        .next()
        .unwrap()
        .split('=')
        .nth(1)
        .unwrap()
        .to_lowercase();
    assert_eq!(ifaces[1]["hardware-address"], mac.as_str());
    assert!(
        s(&ifaces[1]["ip-addresses"][0]["ip-address"]).starts_with("fe80::"),
        "link-local first"
    );
    assert_eq!(ifaces[1]["ip-addresses"][1]["ip-address-type"], "ipv4");
    // Agent fault.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(serde_json::json!({"agent_vmid": 140, "not_running": true})),
    );
    let r = api.get("/nodes/pve1/qemu/140/agent/network-get-interfaces");
    assert_eq!(r.message(), "QEMU guest agent is not running\n");
    // Suspend / resume / reset.
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/140/status/suspend", &[]), "OK");
    let st = api.get("/nodes/pve1/qemu/140/status/current");
    assert_eq!(
        (st.data()["status"].as_str(), st.data()["qmpstatus"].as_str()),
        (Some("running"), Some("paused"))
    );
    let r = api.post("/nodes/pve1/qemu/140/status/shutdown", &[]);
    assert_eq!(r.message(), "VM is paused - cannot shutdown\n");
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/140/status/resume", &[]), "OK");
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/140/status/reset", &[]), "OK");
    // The reboot's task ends with QEMU gone; the host's own qmstart brings it back. That
    // start is held for seconds, so the stopped VM is seen however slow this machine is.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(serde_json::json!({"task_type": "qmstart", "duration_ms": 3000, "times": 1})),
    );
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/140/status/reboot", &[]), "OK");
    assert_eq!(
        api.get("/nodes/pve1/qemu/140/status/current").data()["status"],
        "stopped"
    );
    let back = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        api.get("/nodes/pve1/qemu/140/status/current").data()["status"] == "running"
    });
    assert!(back, "started again after the reboot");
    let tasks = api.get("/nodes/pve1/tasks");
    assert!(
        tasks
            .data()
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["type"] == "qmstart" && t["id"] == "140" && t["user"] == "root@pam"),
        "{}",
        tasks.raw
    );
    assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/140/status/shutdown", &[]), "OK");
    assert_eq!(
        api.get("/nodes/pve1/qemu/140/status/current").data()["status"],
        "stopped"
    );
    // Hibernate: stopped with `lock: suspended`; other changes are refused, but both
    // resume and start bring it back from its saved state and drop the lock.
    for wake in ["resume", "start"] {
        assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/140/status/start", &[]), "OK");
        assert_eq!(
            api.run_task("POST", "/nodes/pve1/qemu/140/status/suspend", &[("todisk", "1")]),
            "OK"
        );
        assert_eq!(
            api.get("/nodes/pve1/qemu/140/status/current").data()["status"],
            "stopped"
        );
        assert_eq!(api.config("pve1", 140)["lock"], "suspended");
        let r = api.put("/nodes/pve1/qemu/140/config", &[("cores", "3")]);
        assert_eq!(r.message(), "VM is locked (suspended)\n");
        assert_eq!(
            api.run_task("POST", &format!("/nodes/pve1/qemu/140/status/{wake}"), &[]),
            "OK",
            "{wake}"
        );
        assert_eq!(
            api.get("/nodes/pve1/qemu/140/status/current").data()["status"],
            "running",
            "{wake}"
        );
        assert!(api.config("pve1", 140).get("lock").is_none(), "{wake}");
        assert_eq!(api.run_task("POST", "/nodes/pve1/qemu/140/status/stop", &[]), "OK");
    }
    // LXC views.
    let l = api.get("/nodes/pve2/lxc");
    assert_eq!(l.data()[0]["name"], "ct-dns");
    assert!(l.data()[0]["pid"].is_u64(), "a running CT has a pid: {:?}", l.data());
    assert_eq!(api.get("/nodes/pve2/lxc/200/config").data()["hostname"], "ct-dns");
    let i = api.get("/nodes/pve2/lxc/200/interfaces");
    // `ip --json a` inside the container: lower-case MACs, both key spellings.
    assert_eq!(i.data()[1]["hwaddr"], "bc:24:11:20:00:01");
    assert_eq!(i.data()[1]["hardware-address"], "bc:24:11:20:00:01");
    assert_eq!(i.data()[1]["ip-addresses"][0]["ip-address-type"], "inet");
    assert_eq!(i.data()[0]["inet6"], "::1/128");
    // Create with start=1 starts the VM after the create task.
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "141"), ("start", "1")]),
        "OK"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while api.get("/nodes/pve1/qemu/141/status/current").data()["status"] != "running" {
        assert!(std::time::Instant::now() < deadline, "start=1 did not start the VM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_stopped_containers_interfaces_are_null() {
    // pve-container's get_interfaces finds no pid and returns nothing: data null, no error.
    let api = Api::start(quick());
    let mut state = api.control("GET", "/_pvesim/state", None);
    state["guests"]["200"]["running"] = Value::Bool(false);
    api.control("POST", "/_pvesim/state", Some(state));
    let r = api.get("/nodes/pve2/lxc/200/interfaces");
    assert_eq!(r.status, 200);
    assert!(r.data().is_null(), "{:?}", r.data());
}

#[test]
fn clones_copy_cloud_init_in_full_onto_the_target_storage() {
    // qemu-server clone_vm: cloud-init (and TPM state) are always full copies, made by
    // clone_disk in sorted key order, each logged "create full clone of drive ...".
    let api = Api::start(quick());
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(serde_json::json!({"task_type": "qmclone", "duration_ms": 1500, "times": 1})),
    );
    let r = api.post(
        "/nodes/pve1/qemu/9000/clone",
        &[("newid", "124"), ("full", "1"), ("storage", "nvme-pool")],
    );
    let upid = s(r.data()).to_string();
    // While it runs, the log already shows the first copy (PVE prints it as the copy starts).
    assert_eq!(
        api.task_log(&upid),
        vec!["create full clone of drive ide2 (vmdata:9000/vm-9000-cloudinit.qcow2)".to_string()]
    );
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    let log = api.task_log(&upid);
    assert_eq!(
        log.iter()
            .filter(|l| l.starts_with("create full clone of drive ide2"))
            .count(),
        1,
        "{log:?}"
    );
    assert_eq!(
        log[0], "create full clone of drive ide2 (vmdata:9000/vm-9000-cloudinit.qcow2)",
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l == "create full clone of drive scsi0 (vmdata:9000/base-9000-disk-0.qcow2)"),
        "{log:?}"
    );
    let c = api.config("pve1", 124);
    assert_eq!(c["ide2"], "nvme-pool:vm-124-cloudinit,media=cdrom");
    // A linked clone still copies cloud-init in full, on the source storage.
    let r = api.post("/nodes/pve1/qemu/9000/clone", &[("newid", "125")]);
    let upid = s(r.data()).to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    assert_eq!(
        api.task_log(&upid)[0],
        "create full clone of drive ide2 (vmdata:9000/vm-9000-cloudinit.qcow2)"
    );
    assert_eq!(
        api.config("pve1", 125)["ide2"],
        "vmdata:125/vm-125-cloudinit.qcow2,media=cdrom"
    );
}
