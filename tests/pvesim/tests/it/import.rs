//! `pvesim import` against pvesim: a twin imported from one simulator (read-only, with
//! the PVEAuditor token) answers every GET the modules use as its source does, apart
//! from volatile counters; no secret reaches the scenario.

use crate::common::*;
use pvesim::import::http::{Reader, Trust};
use pvesim::{Scenario, SimConfig};
use serde_json::Value;

const READONLY_SECRET: &str = "0a6b2d4c-3e8f-4a1b-9c7d-5e2f1a0b3c4d";

/// Counters that move on their own on a real cluster (and in pvesim with time), and the
/// fingerprint of the server's certificate (the twin is another server). `blockstat`
/// and `ballooninfo` are QMP's per-drive and balloon counters.
const VOLATILE: [&str; 12] = [
    "uptime",
    "cpu",
    "mem",
    "netin",
    "netout",
    "diskread",
    "diskwrite",
    "pid",
    "freemem",
    "ssl_fingerprint",
    "blockstat",
    "ballooninfo",
];

fn strip_disk_ctimes(list: &mut Value) {
    for v in list.as_array_mut().into_iter().flatten() {
        if v["content"] == "images" || v["content"] == "rootdir" {
            v.as_object_mut().map(|m| m.remove("ctime"));
        }
    }
}

fn strip_volatile(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in VOLATILE {
                m.remove(k);
            }
            m.values_mut().for_each(strip_volatile);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_volatile),
        _ => {}
    }
}

/// `digest` of a config (`{digest}`) or of its pending listing (`[{key: digest}]`).
fn strip_digest(data: &mut Value) {
    match data {
        Value::Object(m) => {
            m.remove("digest");
        }
        Value::Array(a) => a.retain(|e| e["key"] != "digest"),
        _ => {}
    }
}

fn reader_for(api: &Api, trust: Trust) -> Reader {
    Reader::new(
        &format!("https://127.0.0.1:{}", api.sim.port()),
        "ansible@pve!readonly",
        READONLY_SECRET,
        trust,
    )
    .unwrap()
}

/// Every GET path the modules use (and the listings a rehearsal reads), for this cluster.
fn module_gets(api: &Api) -> Vec<String> {
    let mut paths: Vec<String> = [
        "/version",
        "/nodes",
        "/cluster/resources",
        "/cluster/resources?type=vm",
        "/cluster/nextid",
        "/pools",
    ]
    .map(String::from)
    .to_vec();
    for p in api.get("/pools").data().as_array().unwrap() {
        paths.push(format!("/pools/{}", p["poolid"].as_str().unwrap()));
    }
    for n in api.get("/nodes").data().as_array().unwrap() {
        let node = n["node"].as_str().unwrap();
        for sub in ["qemu", "lxc", "storage", "network", "network?type=any_bridge"] {
            paths.push(format!("/nodes/{node}/{sub}"));
        }
        for s in api.get(&format!("/nodes/{node}/storage")).data().as_array().unwrap() {
            paths.push(format!(
                "/nodes/{node}/storage/{}/content",
                s["storage"].as_str().unwrap()
            ));
        }
    }
    for g in api.get("/cluster/resources?type=vm").data().as_array().unwrap() {
        let (node, kind, vmid) = (
            g["node"].as_str().unwrap(),
            g["type"].as_str().unwrap(),
            g["vmid"].as_u64().unwrap(),
        );
        let subs: &[&str] = if kind == "qemu" {
            &["config", "pending", "status/current"]
        } else {
            &["config", "status/current"]
        };
        for sub in subs {
            paths.push(format!("/nodes/{node}/{kind}/{vmid}/{sub}"));
        }
    }
    paths
}

#[test]
fn a_twin_answers_the_modules_gets_as_its_source_does() {
    let src = Api::start(quick());
    // More than the default scenario: a running VM with a disk, a tagged NIC and a
    // cloud-init password, created through the API.
    src.run_task(
        "POST",
        "/nodes/pve2/qemu",
        &[
            ("vmid", "130"),
            ("name", "app01"),
            ("memory", "2048"),
            ("scsi0", "local-lvm:4"),
            ("net0", "virtio,bridge=vmbr1,tag=20"),
            ("ide2", "local-lvm:cloudinit"),
            ("ciuser", "admin"),
            ("cipassword", "hunter2-never-exported"),
        ],
    );
    src.run_task("POST", "/nodes/pve2/qemu/130/status/start", &[]);
    // Listed cluster-wide with its state (the twin lists it at once).
    std::thread::sleep(std::time::Duration::from_millis(400));

    let scenario = pvesim::import::import(&reader_for(&src, Trust::Fingerprint(src.sim.fingerprint())), None).unwrap();
    let text = serde_json::to_string_pretty(&scenario).unwrap();
    assert!(!text.contains("hunter2"), "no cloud-init password in the twin");
    let app = scenario.guests.iter().find(|g| g.vmid == 130).unwrap();
    assert_eq!(app.config["cipassword"], pvesim::import::CIPASSWORD_PLACEHOLDER);
    assert!(scenario
        .guests
        .iter()
        .any(|g| g.vmid == 130 && g.running && g.node == "pve2"));
    assert!(scenario
        .guests
        .iter()
        .any(|g| g.vmid == 9000 && g.config["template"] == 1));

    // As a user does it: the JSON file, then a simulator serving it.
    let twin = Api::start(SimConfig {
        scenario: Scenario::from_json(&text).unwrap(),
        ..quick()
    });
    let paths = module_gets(&src);
    assert!(paths.len() > 30, "{paths:?}");
    assert_eq!(
        paths,
        module_gets(&twin),
        "the twin has the same nodes, storages, guests and pools"
    );
    for path in &paths {
        let (mut a, mut b) = (src.get(path), twin.get(path));
        assert_eq!((a.status, b.status), (200, 200), "{path}: {} / {}", a.raw, b.raw);
        strip_volatile(&mut a.body);
        strip_volatile(&mut b.body);
        if path.contains("/content") {
            // An auditor token does not see VM disks in a storage's content (pve-storage's
            // check_volume_access wants VM.Config.Disk on the VM): the twin knows them from
            // the guests' configs only, without the time they were made.
            strip_disk_ctimes(&mut a.body["data"]);
            strip_disk_ctimes(&mut b.body["data"]);
        }
        if a.raw.contains("\"cipassword\"") {
            // The checksum covers the password, which the twin does not have.
            strip_digest(&mut a.body["data"]);
            strip_digest(&mut b.body["data"]);
        }
        assert_eq!(a.body, b.body, "GET {path}");
    }
}

#[test]
fn import_verifies_the_certificate_and_reads_with_an_auditor_token_only() {
    let src = Api::start(quick());
    // The CA file works as well as the fingerprint.
    let ca = std::env::temp_dir().join(format!("pvesim-import-ca-{}.pem", src.sim.port()));
    src.sim.write_ca(&ca).unwrap();
    let scenario = pvesim::import::import(&reader_for(&src, Trust::Ca(ca.clone())), Some("lab".into())).unwrap();
    let _ = std::fs::remove_file(&ca);
    assert_eq!(scenario.cluster_name, "lab");
    assert_eq!(scenario.nodes.len(), 2);
    // Users and tokens are the documented defaults, never the source's.
    assert_eq!(scenario.users, Scenario::default_cluster().users);

    // A wrong pin, or no trust at all for a private CA: refused before any request.
    let wrong = "AA:".repeat(31) + "AA";
    let err = pvesim::import::import(&reader_for(&src, Trust::Fingerprint(wrong)), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("fingerprint"), "{err}");
    let err = pvesim::import::import(&reader_for(&src, Trust::WebPki), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--ca") && err.contains("--fingerprint"), "{err}");

    // A bad secret: PVE's 401, with the hint.
    let bad = Reader::new(
        &format!("https://127.0.0.1:{}", src.sim.port()),
        "ansible@pve!readonly",
        "nope",
        Trust::Insecure,
    )
    .unwrap();
    let err = pvesim::import::import(&bad, None).unwrap_err().to_string();
    assert!(err.contains("401") && err.contains("--token-secret"), "{err}");
}

#[test]
fn a_node_s_own_pve_manager_version_comes_along() {
    let mut cfg = quick();
    cfg.scenario.nodes[1].pve_version = Some("9.2.6".into());
    let src = Api::start(cfg);
    let scenario = pvesim::import::import(&reader_for(&src, Trust::Fingerprint(src.sim.fingerprint())), None).unwrap();
    assert_eq!(
        scenario.pve_version.as_deref(),
        Some("9.1.5"),
        "GET /version: the answering node's"
    );
    let versions: Vec<_> = scenario
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.pve_version.as_deref()))
        .collect();
    assert_eq!(
        versions,
        [("pve1", None), ("pve2", Some("9.2.6"))],
        "only where it differs"
    );
}
