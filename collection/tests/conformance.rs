//! `cargo collection conformance` against pvesim started as a black box: its binary,
//! reached only through the PVE API (never `/_pvesim/`), as a real cluster would be.
//! The modules must have been built (`cargo collection build --debug`, which
//! `cargo collection test` does first); the run uses them with `--no-build`.

// Test code: an unwrap that fails is the test's report.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferrox_pve_client::client::Client;
use ferrox_pve_client::connection::ConnectionParams;
use serde_json::Value;

const TOKEN_SECRET: &str = "5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13";
const CONFORMANCE_SECRET: &str = "7d0c3a52-1f4e-4b8a-9c6d-2e5f8a1b4c7d";

/// The role of the guide "Testing against your own cluster", word for word.
const GUIDE_PRIVILEGES: &str = "VM.Allocate VM.Audit VM.Clone VM.PowerMgmt VM.Config.CPU VM.Config.Memory VM.Config.Disk VM.Config.Network VM.Config.Options VM.Config.HWType Datastore.AllocateSpace Datastore.Audit SDN.Use";

/// A `pvesim` process on a free port with its CA written to `dir`; killed on drop.
struct Pvesim {
    child: Child,
    port: u16,
    ca: PathBuf,
}

impl Pvesim {
    fn binary() -> PathBuf {
        let collection = PathBuf::from(env!("CARGO_BIN_EXE_collection"));
        let binary = collection.with_file_name("pvesim");
        assert!(
            binary.is_file(),
            "{} is missing: cargo build -p pvesim",
            binary.display()
        );
        binary
    }

    fn start(dir: &Path) -> Pvesim {
        Pvesim::start_with(dir, &[])
    }

    /// With the guide's conformance user: the default scenario plus `conformance@pve`,
    /// whose token `run` has exactly the privileges the guide lists, on its paths.
    fn start_with_guide_token(dir: &Path) -> Pvesim {
        let out = Command::new(Pvesim::binary()).arg("--print-scenario").output().unwrap();
        let mut scenario: Value = serde_json::from_slice(&out.stdout).unwrap();
        scenario["roles"]["FerroxConformance"] = GUIDE_PRIVILEGES.split_whitespace().collect::<Vec<_>>().into();
        scenario["users"].as_array_mut().unwrap().push(serde_json::json!({
            "userid": "conformance@pve",
            "tokens": [{"id": "run", "secret": CONFORMANCE_SECRET, "privsep": false}],
        }));
        for path in ["/vms", "/storage/local-lvm", "/sdn/zones/localnetwork/vmbr0"] {
            scenario["acls"].as_array_mut().unwrap().push(serde_json::json!({
                "path": path, "ugid": "conformance@pve", "roles": ["FerroxConformance"],
            }));
        }
        let file = dir.join("scenario.json");
        std::fs::write(&file, scenario.to_string()).unwrap();
        Pvesim::start_with(dir, &["--scenario".as_ref(), file.as_os_str()])
    }

    fn start_with(dir: &Path, extra: &[&std::ffi::OsStr]) -> Pvesim {
        let ca = dir.join("ca.pem");
        let mut child = Command::new(Pvesim::binary())
            .args(extra)
            // Shorter tasks than the defaults: the flows wait for them all the same.
            .args(["--listen", "127.0.0.1:0", "--task-ms", "30", "--ca-out"])
            .arg(&ca)
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting pvesim");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "pvesim listening on https://127.0.0.1:PORT ca=... fingerprint=..."
        let port = line
            .split("https://127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok());
        Pvesim {
            child,
            port: port.unwrap_or_else(|| panic!("no port in {line:?}")),
            ca,
        }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("PROXMOX_HOST", "127.0.0.1".into()),
            ("PROXMOX_PORT", self.port.to_string()),
            ("PROXMOX_USER", "ansible@pve".into()),
            ("PROXMOX_TOKEN_ID", "automation".into()),
            ("PROXMOX_TOKEN_SECRET", TOKEN_SECRET.into()),
            ("PROXMOX_CA_PATH", self.ca.display().to_string()),
            ("FERROX_CONFORMANCE_NODE", "pve1".into()),
            ("FERROX_CONFORMANCE_STORAGE", "local-lvm".into()),
            ("FERROX_CONFORMANCE_BRIDGE", "vmbr0".into()),
            ("FERROX_CONFORMANCE_VMID_RANGE", "990000-990049".into()),
        ]
    }

    /// An API client, as any user of the cluster.
    fn client(&self) -> Client {
        Client::connect(&ConnectionParams {
            host: "127.0.0.1".into(),
            port: Some(self.port),
            user: "ansible@pve".into(),
            token_id: Some("automation".into()),
            token_secret: Some(TOKEN_SECRET.into()),
            validate_certs: true,
            ca_path: Some(self.ca.clone()),
            timeout_secs: 30,
            ..Default::default()
        })
        .unwrap()
    }

    /// Creates a VM through the API and waits for its task.
    fn create_vm(&self, vmid: u32, name: &str) {
        let c = self.client();
        let upid = c
            .post(
                "/nodes/pve1/qemu",
                &[
                    ("vmid", vmid.to_string()),
                    ("name", name.into()),
                    ("memory", "256".into()),
                ],
            )
            .unwrap();
        ferrox_pve_client::tasks::wait(&c, upid.as_str().unwrap(), Duration::from_secs(30)).unwrap();
        // Listed cluster-wide with its name, as the run will see it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self
            .high_guests()
            .iter()
            .any(|(id, n)| *id == u64::from(vmid) && n == name)
        {
            assert!(Instant::now() < deadline, "VM {vmid} not listed with its name");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `(vmid, name)` of every guest with a vmid of 990000 or more.
    fn high_guests(&self) -> Vec<(u64, String)> {
        let list = self
            .client()
            .get("/cluster/resources", &[("type", "vm".into())])
            .unwrap();
        let mut out: Vec<(u64, String)> = list
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["vmid"].as_u64().unwrap_or(0) >= 990_000)
            .map(|g| {
                (
                    g["vmid"].as_u64().unwrap(),
                    g["name"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        out.sort();
        out
    }
}

impl Drop for Pvesim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferrox-conformance-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn conformance(sim: &Pvesim, work: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_collection"));
    cmd.args(["conformance", "--no-build", "--work"]).arg(work).args(extra);
    for (k, v) in sim.env() {
        cmd.env(k, v);
    }
    cmd.env_remove("PROXMOX_PASSWORD")
        .env_remove("PROXMOX_CERT_FINGERPRINT")
        .env_remove("FERROX_CONFORMANCE_PREFIX");
    cmd.stdin(Stdio::null());
    cmd
}

#[test]
fn refuses_to_start_when_the_range_holds_a_foreign_vm() {
    let work = workdir("foreign");
    let sim = Pvesim::start(&work);
    sim.create_vm(990_007, "someones-db");
    sim.create_vm(990_003, "ferroxconf-left-behind");
    let out = conformance(&sim, &work, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("refusing to start"), "{stderr}");
    assert!(stderr.contains("qemu 990007 someones-db on pve1"), "{stderr}");
    assert!(stderr.contains("Nothing was changed"), "{stderr}");
    // Nothing was written: the foreign VM and even this run's own leftover are untouched.
    assert_eq!(
        sim.high_guests(),
        [
            (990_003, "ferroxconf-left-behind".to_string()),
            (990_007, "someones-db".to_string())
        ]
    );
    assert!(!work.join("report.json").exists());
}

#[test]
fn passes_with_the_guide_privileges_reports_and_cleans_up_what_an_earlier_run_left() {
    let work = workdir("full");
    let sim = Pvesim::start_with_guide_token(&work);
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/docsite/rst/guide_conformance.rst"),
    )
    .unwrap();
    assert!(
        guide.contains(&format!(
            "pveum role add FerroxConformance --privs \"{GUIDE_PRIVILEGES}\""
        )),
        "the conformance guide lists these privileges"
    );
    // As an interrupted run leaves it: a VM of the range that carries the prefix.
    sim.create_vm(990_004, "ferroxconf-create");
    let out = conformance(&sim, &work, &[])
        .env("PROXMOX_USER", "conformance@pve")
        .env("PROXMOX_TOKEN_ID", "run")
        .env("PROXMOX_TOKEN_SECRET", CONFORMANCE_SECRET)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(work.join("report.json")).unwrap()).unwrap();
    let scenarios = report["scenarios"].as_array().unwrap();
    let names: Vec<&str> = scenarios.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "create-converge",
            "disk",
            "nic",
            "power",
            "clone",
            "parallel",
            "teardown"
        ]
    );
    for (s, name) in scenarios.iter().zip(&names) {
        assert_eq!(s["status"], "passed", "{name}: {s}");
        assert!(
            stdout.lines().any(|l| l.starts_with("PASS ") && l.contains(name)),
            "{stdout}"
        );
        assert!(
            s["api_calls"]["total"].as_u64().unwrap() > 3,
            "{name}: {}",
            s["api_calls"]
        );
        assert!(s["api_calls"]["by_method"]["GET"].as_u64().unwrap() > 0);
        assert!(s["seconds"].as_f64().unwrap() > 0.0);
    }
    assert!(stdout.lines().any(|l| l == "7 passed, 0 failed"), "{stdout}");
    assert_eq!(
        report["pve_version"]["version"].as_str().unwrap().split('.').next(),
        Some("9")
    );
    assert_eq!(report["target"]["vmid_range"], serde_json::json!([990_000, 990_049]));
    assert_eq!(report["cleanup"][0]["phase"], "before the run");
    assert!(
        report["cleanup"][0]["removed"][0].as_str().unwrap().contains("990004"),
        "{}",
        report["cleanup"]
    );
    let text = std::fs::read_to_string(work.join("report.json")).unwrap();
    assert!(!text.contains(CONFORMANCE_SECRET), "the report carries no secret");
    assert_eq!(sim.high_guests(), [], "nothing is left in the range");
    // Only the range was used: the scenario's guests (100, 200, 9000) are as before.
    let all = sim
        .client()
        .get("/cluster/resources", &[("type", "vm".into())])
        .unwrap();
    assert_eq!(all.as_array().unwrap().len(), 3, "{all}");
}

#[test]
fn ctrl_c_stops_the_run_and_cleans_up() {
    let work = workdir("interrupt");
    let sim = Pvesim::start(&work);
    let mut child = conformance(&sim, &work, &["create-converge", "disk", "nic"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    let started = Instant::now();
    let mut lines = stdout.lines();
    // Interrupt once the first scenario is done, while the second one has VMs.
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.starts_with("PASS ") || line.starts_with("FAIL ") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(240), "{seen:?}");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while sim.high_guests().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!sim.high_guests().is_empty(), "the disk scenario has a VM by now");
    sigint(child.id());
    seen.extend(lines.map(Result::unwrap));
    let status = child.wait().unwrap();
    assert!(!status.success());
    let text = seen.join("\n");
    assert!(text.contains("interrupted: cleaning up"), "{text}");
    assert_eq!(sim.high_guests(), [], "{text}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(work.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["interrupted"], true);
    assert_eq!(report["scenarios"][2]["status"], "skipped", "{}", report["scenarios"]);
}

/// Ctrl-C as a terminal sends it (SIGINT), through kill(1): no libc in this test.
fn sigint(pid: u32) {
    let ok = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}
