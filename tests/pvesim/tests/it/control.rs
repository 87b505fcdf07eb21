//! `/_pvesim` control endpoints: request log, faults, state dump/load/reset, persistence,
//! and hostile HTTP input.

use crate::common::*;
use pvesim::SimConfig;
use serde_json::json;

#[test]
fn request_log_counts_api_calls_only() {
    let api = Api::start(quick());
    api.get("/version");
    api.get("/version");
    api.get("/nodes/pve1/qemu/100/config?current=1");
    api.post("/nodes/pve1/qemu/100/status/start", &[]);
    let log = api.control("GET", "/_pvesim/requests", None);
    assert_eq!(log["total"], 4);
    assert_eq!(log["counts"]["GET /api2/json/version"], 2);
    assert_eq!(log["counts"]["GET /api2/json/nodes/pve1/qemu/100/config"], 1);
    assert_eq!(log["counts"]["POST /api2/json/nodes/pve1/qemu/100/status/start"], 1);
    let entries = log["log"].as_array().unwrap();
    assert_eq!(entries[2]["query"], "current=1");
    assert_eq!(entries[3]["status"], 200);
    assert!(entries[0]["ms"].as_f64().unwrap() >= 0.0);
    api.control("DELETE", "/_pvesim/requests", None);
    assert_eq!(api.control("GET", "/_pvesim/requests", None)["total"], 0);
}

#[test]
fn http_task_node_faults() {
    let api = Api::start(quick());
    api.control("POST", "/_pvesim/faults", Some(json!({"method": "POST", "path_regex": "^/api2/json/nodes/pve1/qemu$", "status": 500, "message": "cluster not ready - no quorum?", "times": 1})));
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "170")]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (500, "cluster not ready - no quorum?\n")
    );
    assert_eq!(
        api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "170")]),
        "OK",
        "fault used up"
    );
    // Task fault: create fails in the task, config removed.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmcreate", "fail": "lvcreate failed", "times": 1})),
    );
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "171"), ("scsi0", "local-lvm:1")]);
    let upid = r.data().as_str().unwrap().to_string();
    let st = api.wait_task(&upid);
    assert_eq!(st["exitstatus"], "unable to create VM 171 - lvcreate failed");
    assert_eq!(
        api.task_log(&upid).last().unwrap(),
        "TASK ERROR: unable to create VM 171 - lvcreate failed"
    );
    assert_eq!(api.get("/nodes/pve1/qemu/171/config").status, 500);
    assert!(api
        .get("/nodes/pve1/storage/local-lvm/content?vmid=171")
        .data()
        .as_array()
        .unwrap()
        .is_empty());
    // Warnings: success, but `WARNINGS: n` and a matching last log line.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmstop", "warnings": 2, "times": 1})),
    );
    let r = api.post("/nodes/pve1/qemu/170/status/stop", &[]);
    let upid = r.data().as_str().unwrap().to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "WARNINGS: 2");
    assert_eq!(api.task_log(&upid).last().unwrap(), "TASK WARNINGS: 2");
    // Slow tasks.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmstart", "duration_ms": 1500, "times": 1})),
    );
    let r = api.post("/nodes/pve1/qemu/170/status/start", &[]);
    std::thread::sleep(std::time::Duration::from_millis(150));
    let st = api.get(&format!(
        "/nodes/pve1/tasks/{}/status",
        urlencode(r.data().as_str().unwrap())
    ));
    assert_eq!(st.data()["status"], "running");
    assert!(st.data().get("exitstatus").is_none(), "exitstatus only when stopped");
    // Unreachable node.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"node": "pve2", "unreachable": true})),
    );
    let r = api.get("/nodes/pve2/qemu");
    assert_eq!(r.status, 595);
    let nodes = api.get("/nodes");
    let pve2 = nodes
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"] == "pve2")
        .unwrap()
        .clone();
    assert_eq!(pve2["status"], "offline");
    let res = api.get("/cluster/resources?type=vm");
    let ct = res
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vmid"] == 200)
        .unwrap()
        .clone();
    assert_eq!(ct["status"], "running", "just gone offline: its last broadcast is kept");
    // Dropped connection.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"path_regex": "^/api2/json/version$", "drop_connection": true, "times": 1})),
    );
    let raw = raw_tls(
        &api.sim,
        format!("GET /api2/json/version HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\n\r\n").as_bytes(),
    );
    assert_eq!(raw, "", "connection closed without a response");
    let faults = api.control("GET", "/_pvesim/faults", None);
    assert_eq!(faults["node"][0]["node"], "pve2");
    api.control("DELETE", "/_pvesim/faults", None);
    assert_eq!(api.get("/nodes/pve2/qemu").status, 200);
}

#[test]
fn state_persists_across_runs_and_resets() {
    let path = std::env::temp_dir().join(format!("pvesim-state-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let cfg = SimConfig {
        state_file: Some(path.clone()),
        ..quick()
    };
    {
        let api = Api::start(cfg.clone());
        assert_eq!(
            api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "180"), ("name", "persisted")]),
            "OK"
        );
        api.sim.shutdown();
    }
    {
        let api = Api::start(cfg.clone());
        assert_eq!(api.config("pve1", 180)["name"], "persisted");
        // Dump, reset, load.
        let dump = api.control("GET", "/_pvesim/state", None);
        assert!(dump["guests"]["180"].is_object());
        api.control("POST", "/_pvesim/reset", None);
        assert_eq!(api.get("/nodes/pve1/qemu/180/config").status, 500);
        api.control("POST", "/_pvesim/state", Some(dump));
        assert_eq!(api.config("pve1", 180)["name"], "persisted");
    }
    {
        let api = Api::start(SimConfig { reset: true, ..cfg });
        assert_eq!(
            api.get("/nodes/pve1/qemu/180/config").status,
            500,
            "--reset starts from the scenario"
        );
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn hostile_http_input_gets_pve_answers() {
    let api = Api::start(quick());
    let auth = format!("Authorization: {TOKEN}\r\n");
    let req = |s: String| raw_tls(&api.sim, s.as_bytes());
    let r = req(format!("POST /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: x\r\n{auth}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nx=1&y\r\n0\r\n\r\n"));
    assert_eq!(status_line(&r), "HTTP/1.1 501 chunked transfer encoding not supported");
    let big = "a".repeat(600 * 1024);
    let r = req(format!("POST /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{big}", big.len()));
    assert_eq!(status_line(&r), "HTTP/1.1 501 for data too large");
    let r = req(format!("PUT /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{{bad}}"));
    assert!(status_line(&r).starts_with("HTTP/1.1 400 "), "{r}");
    let r = req(format!("PUT /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{{\"cores\":\"x\"}}"));
    assert!(
        r.contains(r#""cores":"type check ('integer') failed - got 'x'""#),
        "{r}"
    );
    let r = req(format!("PUT /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: 25\r\nConnection: close\r\n\r\n{{\"cores\":2,\"onboot\":true}}"));
    assert!(
        status_line(&r).starts_with("HTTP/1.1 200"),
        "JSON booleans are fine: {r}"
    );
    let r = req(format!("POST /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"));
    assert_eq!(
        status_line(&r),
        "HTTP/1.1 506 upload 'Content-Type 'text/plain' not implemented"
    );
    let r = req(format!("DELETE /api2/json/nodes/pve1/qemu/100 HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: 3\r\nConnection: close\r\n\r\nx=1"));
    assert_eq!(status_line(&r), "HTTP/1.1 501 Unexpected content for method 'DELETE'");
    let r = req(format!("PUT /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: 11\r\nConnection: close\r\n\r\ncores=%ZZ&&"));
    assert!(status_line(&r).starts_with("HTTP/1.1 400"), "{r}");
    let r = req("garbage\r\n\r\n".into());
    assert!(r.is_empty() || r.starts_with("HTTP/1.1 400"), "{r}");
    // Plain HTTP on the TLS port: redirect.
    use std::io::{Read, Write};
    let mut tcp = std::net::TcpStream::connect(api.sim.addr()).unwrap();
    tcp.write_all(b"GET /api2/json/version HTTP/1.1\r\nHost: localhost:8006\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    let _ = tcp.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 301"), "{out}");
    assert!(
        out.to_lowercase()
            .contains("location: https://localhost:8006/api2/json/version"),
        "{out}"
    );
    // The ExtJS envelope: always 200, success flag, real status in the body.
    let r = req(format!(
        "GET /api2/extjs/nodes/pve1/qemu/999/config HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    ));
    assert!(status_line(&r).starts_with("HTTP/1.1 200"), "{r}");
    assert!(r.contains(r#""success":0"#) && r.contains(r#""status":500"#), "{r}");
    let r = req(format!(
        "GET /api2/extjs/version HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    ));
    assert!(r.contains(r#""success":1"#), "{r}");
    // Still serving.
    assert_eq!(api.get("/version").status, 200);
}

#[test]
fn after_faults_carry_out_the_request_then_lose_or_delay_the_answer() {
    let api = Api::start(quick());
    // Lost answer: the VM is created (lock: create at once, then the task), the client sees nothing.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"method": "POST", "path_regex": "^/api2/json/nodes/pve1/qemu$", "after": true, "times": 1})),
    );
    let raw = raw_tls(&api.sim, format!("POST /api2/json/nodes/pve1/qemu HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 8\r\n\r\nvmid=180").as_bytes());
    assert_eq!(raw, "", "connection closed without a response");
    let tasks = api.get("/nodes/pve1/tasks?source=all&vmid=180&typefilter=qmcreate");
    let list = tasks.data().as_array().unwrap();
    assert_eq!(list.len(), 1, "{}", tasks.raw);
    let upid = list[0]["upid"].as_str().unwrap().to_string();
    assert_eq!(api.wait_task(&upid)["exitstatus"], "OK");
    assert_eq!(api.get("/nodes/pve1/qemu/180/config").status, 200);
    let log = api.control("GET", "/_pvesim/requests", None);
    let last = log["log"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["method"] == "POST")
        .unwrap()
        .clone();
    assert_eq!(last["status"], 0, "recorded as answered with nothing");
    // Late answer: the change is made at once, the answer comes after latency_ms.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"method": "PUT", "path_regex": "/qemu/180/config$", "after": true, "latency_ms": 800, "times": 1})),
    );
    let started = std::time::Instant::now();
    let put = std::thread::scope(|s| {
        let h = s.spawn(|| api.put("/nodes/pve1/qemu/180/config", &[("cores", "3")]));
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(api.config("pve1", 180)["cores"], 3, "written before the answer");
        h.join().unwrap()
    });
    assert_eq!(put.status, 200);
    assert!(started.elapsed().as_millis() >= 800);
}

#[test]
fn proxy_failures_595_596_have_a_reason_and_no_body() {
    let api = Api::start(quick());
    api.control("POST", "/_pvesim/faults", Some(json!({"path_regex": "^/api2/json/nodes/pve1/qemu$", "status": 596, "message": "Connection timed out", "times": 1})));
    let raw = raw_tls(
        &api.sim,
        format!("GET /api2/json/nodes/pve1/qemu HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\n\r\n").as_bytes(),
    );
    assert_eq!(status_line(&raw), "HTTP/1.1 596 Connection timed out");
    assert!(raw.ends_with("\r\n\r\n"), "no body: {raw}");
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"node": "pve2", "unreachable": true})),
    );
    let raw = raw_tls(
        &api.sim,
        format!("GET /api2/json/nodes/pve2/qemu HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\n\r\n").as_bytes(),
    );
    assert_eq!(status_line(&raw), "HTTP/1.1 595 No route to host");
}

#[test]
fn refused_connections_close_before_the_handshake() {
    let api = Api::start(quick());
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"refuse_connections": true, "times": 1})),
    );
    let agent = agent_for(&api.sim);
    assert!(agent
        .get(&api.url("/api2/json/version"))
        .header("Authorization", TOKEN)
        .call()
        .is_err());
    assert_eq!(api.get("/version").status, 200, "only the next connection");
}

#[test]
fn task_list_filters_like_pve() {
    let api = Api::start(quick());
    let a = api.run_task("POST", "/nodes/pve1/qemu", &[("vmid", "181")]);
    assert_eq!(a, "OK");
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmstart", "duration_ms": 2000, "times": 1})),
    );
    let running = api.post("/nodes/pve1/qemu/181/status/start", &[]);
    let running = running.data().as_str().unwrap().to_string();
    // Default source: archive, finished tasks only.
    let archive = api.get("/nodes/pve1/tasks?vmid=181");
    assert!(archive
        .data()
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["upid"] != running.as_str()));
    let all = api.get("/nodes/pve1/tasks?vmid=181&source=all");
    let items = all.data().as_array().unwrap();
    assert_eq!(items[0]["upid"], running.as_str(), "running first");
    assert_eq!(items[0]["status"], "RUNNING");
    assert!(items[0].get("endtime").is_none());
    let create = items.iter().find(|t| t["type"] == "qmcreate").unwrap();
    assert_eq!(create["status"], "OK");
    assert_eq!(create["id"], "181");
    assert_eq!(create["user"], "ansible@pve");
    assert_eq!(create["tokenid"], "automation");
    assert!(create["endtime"].as_u64().unwrap() >= create["starttime"].as_u64().unwrap());
    assert_eq!(all.body["total"], items.len());
    let typed = api.get("/nodes/pve1/tasks?source=all&typefilter=qmstart&vmid=181");
    assert_eq!(typed.data().as_array().unwrap().len(), 1);
    let future = api.get("/nodes/pve1/tasks?source=all&vmid=181&since=4000000000");
    assert!(future.data().as_array().unwrap().is_empty());
    let errors = api.get("/nodes/pve1/tasks?vmid=181&errors=1");
    assert!(errors.data().as_array().unwrap().is_empty(), "no failed finished task");
    let bad = api.get("/nodes/pve1/tasks?vmid=5");
    assert_eq!(bad.status, 400);
    assert_eq!(bad.error("vmid"), "value must have a minimum value of 100");
}

/// Busy storages: a clone or create that fails on a lock, as PVE words it, leaving what
/// PVE's worker leaves when its cleanup runs (nothing) or does not (volumes, a locked config).
#[test]
fn lock_timeout_faults_leave_what_a_failed_worker_leaves() {
    let api = Api::start(quick());
    // vmdata is shared: its lock is pmxcfs's (a local storage's is a file lock).
    let storage_lock = "cfs-lock 'storage-vmdata' error: got lock request timeout";
    let config_lock = "can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout";
    let vols = |vmid: u32| {
        api.get(&format!("/nodes/pve1/storage/vmdata/content?vmid={vmid}"))
            .data()
            .as_array()
            .unwrap()
            .len()
    };
    let clone = |newid: &str| {
        let r = api.post(
            "/nodes/pve1/qemu/9000/clone",
            &[("newid", newid), ("name", "c"), ("full", "1")],
        );
        r.data().as_str().unwrap().to_string()
    };

    // At the config lock: nothing made, the lock's text as the task's error.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmclone", "vmid": 9000, "fail": config_lock, "at_lock": true, "times": 1})),
    );
    let upid = clone("301");
    assert_eq!(api.wait_task(&upid)["exitstatus"], config_lock);
    assert_eq!(
        api.task_log(&upid),
        vec![
            "trying to acquire lock...".to_string(),
            format!("TASK ERROR: {config_lock}")
        ]
    );
    assert_eq!(api.get("/nodes/pve1/qemu/301/config").status, 500);
    assert_eq!(vols(301), 0);

    // In the work, cleaned up as the worker does.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmclone", "fail": storage_lock, "times": 1})),
    );
    let upid = clone("302");
    assert_eq!(
        api.wait_task(&upid)["exitstatus"],
        format!("clone failed: {storage_lock}")
    );
    assert_eq!(api.get("/nodes/pve1/qemu/302/config").status, 500);
    assert_eq!(vols(302), 0);

    // Freeing the volumes hit the lock too: they stay, the config is gone, the log says so.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmclone", "fail": storage_lock, "leave": "volumes", "times": 1})),
    );
    let upid = clone("303");
    api.wait_task(&upid);
    assert_eq!(api.get("/nodes/pve1/qemu/303/config").status, 500);
    assert!(vols(303) > 0, "the clone's volumes stay");
    let log = api.task_log(&upid);
    assert_eq!(log[log.len() - 2], storage_lock, "{log:?}");

    // The cleanup never ran: a locked config with the clone's name and its disks.
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmclone", "fail": storage_lock, "leave": "config", "times": 1})),
    );
    let upid = clone("304");
    api.wait_task(&upid);
    let conf = api.config("pve1", 304);
    assert_eq!(
        (conf["lock"].as_str(), conf["name"].as_str()),
        (Some("clone"), Some("c")),
        "{conf}"
    );
    assert!(
        conf["scsi0"].as_str().unwrap().starts_with("vmdata:304/vm-304-disk-"),
        "{conf}"
    );
    assert!(vols(304) > 0);
    // PVE's normal delete refuses the lock except to root's skiplock; with it, the VM and
    // its volumes go.
    let r = api.delete(
        "/nodes/pve1/qemu/304",
        &[("purge", "1"), ("destroy-unreferenced-disks", "1")],
    );
    let refused = api.wait_task(r.data().as_str().unwrap());
    assert_eq!(refused["exitstatus"], "VM is locked (clone)");
    let r = api.delete("/nodes/pve1/qemu/304", &[("skiplock", "1")]);
    assert_eq!(r.status, 400, "skiplock is root@pam's only");

    // A create: at the lock the placeholder goes; a kept config is that placeholder.
    api.control("POST", "/_pvesim/faults", Some(json!({"task_type": "qmcreate", "fail": "can't lock file '/var/lock/qemu-server/lock-305.conf' - got timeout", "at_lock": true, "times": 1})));
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "305"), ("scsi0", "vmdata:1")]);
    api.wait_task(r.data().as_str().unwrap());
    assert_eq!(api.get("/nodes/pve1/qemu/305/config").status, 500);
    api.control(
        "POST",
        "/_pvesim/faults",
        Some(json!({"task_type": "qmcreate", "fail": storage_lock, "leave": "config", "times": 1})),
    );
    let r = api.post(
        "/nodes/pve1/qemu",
        &[("vmid", "306"), ("name", "n"), ("scsi0", "vmdata:1")],
    );
    let st = api.wait_task(r.data().as_str().unwrap());
    assert_eq!(st["exitstatus"], format!("unable to create VM 306 - {storage_lock}"));
    let conf = api.config("pve1", 306);
    assert_eq!(conf["lock"], "create");
    assert!(conf.get("name").is_none(), "the placeholder has no name: {conf}");
    assert_eq!(vols(306), 1);
}
