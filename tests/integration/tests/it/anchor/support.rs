//! Runs the anchor playbooks (`tests/anchor/*.yml`) — community.proxmox 1.6.0, unchanged —
//! with the venv's ansible-playbook against an in-process simulator, and reads back every
//! task result (with its wall time) through the harness's `ferrox_results` callback.
//!
//! Deliberately independent of the module binaries: the anchor judges the simulator, so it
//! must run before (and without) any ferrox.proxmox module. The comparison benchmark uses
//! the same runner with the `ferrox.proxmox` collection linked in as well.

#![allow(dead_code)] // the runner's whole API and results, not all of which a test reads

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};

use serde_json::{json, Value};

use ferrox_integration::{ansible_playbook, creds, repo_root};

/// `tests/anchor/` in the repository.
pub fn anchor_dir() -> PathBuf {
    repo_root().join("tests/anchor")
}

/// Makes sure `build/anchor/ansible_collections/community/proxmox` holds 1.6.0
/// (`tests/anchor/setup` is idempotent and quick once done).
fn ensure_collection() {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        let out = Command::new(anchor_dir().join("setup"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run tests/anchor/setup: {e}"));
        if !out.status.success() {
            panic!(
                "tests/anchor/setup failed (it needs PyPI the first time):\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    });
}

/// Knobs of one ansible-playbook run.
#[derive(Debug, Clone, Default)]
pub struct RunOpts {
    /// Extra inventory hosts (all `ansible_connection=local`) besides `localhost`.
    pub hosts: Vec<String>,
    /// `--forks` (ansible's default 5 when `None`).
    pub forks: Option<usize>,
    /// Extra variables merged over the connection variables.
    pub vars: Value,
    /// Environment variables of the controller (`ansible-playbook`).
    pub env: Vec<(String, String)>,
}

/// The results of `tests/anchor/<playbook>` run by community.proxmox 1.6 against a fresh
/// simulator with the default scenario, made once per nextest run and shared by the
/// tests that read them (the anchor's own checks and the drop-in comparison of
/// `kvm_compat`): such a run is seconds of Python and one-second polls, and its results
/// depend only on the playbook and the simulator, both the same within one run.
///
/// nextest runs each test in a process of its own, so the first test to ask runs the
/// playbook holding a lock on `build/anchor/runs/<run id>/<playbook>.lock`, and the others
/// wait for it and read its results. Outside nextest (no `NEXTEST_RUN_ID`), each test
/// runs the playbook itself.
pub fn shared_run(playbook: &str) -> Run {
    let Some(run_id) = std::env::var_os("NEXTEST_RUN_ID") else {
        return Anchor::start().run(playbook);
    };
    let dir = repo_root().join("build/anchor/runs").join(run_id);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let lock_path = dir.join(format!("{playbook}.lock"));
    let lock = std::fs::File::create(&lock_path).unwrap_or_else(|e| panic!("{}: {e}", lock_path.display()));
    // Held until `lock` is dropped (or the process ends): the waiting tests block here.
    let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) };
    assert_eq!(
        locked,
        0,
        "locking {}: {}",
        lock_path.display(),
        std::io::Error::last_os_error()
    );
    let saved = dir.join(format!("{playbook}.json"));
    if let Ok(text) = std::fs::read_to_string(&saved) {
        return serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", saved.display()));
    }
    let run = Anchor::start().run(playbook);
    let tmp = saved.with_extension("json.new");
    std::fs::write(&tmp, serde_json::to_string(&run).expect("a run serialises"))
        .unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
    std::fs::rename(&tmp, &saved).unwrap_or_else(|e| panic!("{}: {e}", saved.display()));
    run
}

/// One simulator and a temp dir with ansible.cfg, inventory and collections path.
pub struct Anchor {
    sim: pvesim::Simulator,
    dir: PathBuf,
    /// Removes `dir` on drop, unless `FERROX_KEEP_TMP` is set.
    _cleanup: Option<tempfile::TempDir>,
    runs: AtomicUsize,
    control: ureq::Agent,
}

impl Anchor {
    /// A simulator with the default scenario.
    pub fn start() -> Anchor {
        Anchor::start_with(pvesim::SimConfig::default())
    }

    pub fn start_with(cfg: pvesim::SimConfig) -> Anchor {
        ensure_collection();
        let sim = pvesim::Simulator::start(cfg).expect("start the simulator");
        let tmp = tempfile::Builder::new()
            .prefix("ferrox-anchor-")
            .tempdir()
            .expect("temp dir");
        let dir = tmp.path().to_path_buf();
        let cleanup = if std::env::var_os("FERROX_KEEP_TMP").is_some() {
            eprintln!("anchor: keeping {}", tmp.keep().display());
            None
        } else {
            Some(tmp)
        };
        let ca = dir.join("pvesim-ca.pem");
        std::fs::write(&ca, sim.ca_pem()).expect("write the simulator CA");
        let control = control_agent(sim.ca_pem().as_bytes());
        let anchor = Anchor {
            sim,
            dir,
            _cleanup: cleanup,
            runs: AtomicUsize::new(0),
            control,
        };
        anchor.write_ansible_files();
        anchor
    }

    pub fn sim(&self) -> &pvesim::Simulator {
        &self.sim
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn ca_path(&self) -> PathBuf {
        self.dir().join("pvesim-ca.pem")
    }

    /// The `anchor_*` variables the playbooks build their connection from
    /// (token `ansible@pve!automation`, TLS verified against the simulator CA).
    pub fn connection_vars(&self) -> Value {
        json!({
            "anchor_api_host": "127.0.0.1",
            "anchor_api_port": self.sim.port(),
            "anchor_api_user": creds::TOKEN_USER,
            "anchor_api_token_id": creds::TOKEN_ID,
            "anchor_api_token_secret": creds::TOKEN_SECRET,
            "anchor_readonly_token_secret": creds::READONLY_TOKEN_SECRET,
            "anchor_root_password": creds::ROOT_PASSWORD,
            "anchor_ca_path": self.ca_path().display().to_string(),
        })
    }

    /// Runs `tests/anchor/<playbook>` with the connection variables.
    pub fn run(&self, playbook: &str) -> Run {
        self.run_file(&anchor_dir().join(playbook), &RunOpts::default())
    }

    /// Runs a playbook file (anywhere) with these options.
    pub fn run_file(&self, playbook: &Path, o: &RunOpts) -> Run {
        let n = self.runs.fetch_add(1, Ordering::SeqCst);
        let results = self.dir().join(format!("run-{n}.results.jsonl"));
        let inventory = self.dir().join(format!("run-{n}.inventory"));
        let vars_file = self.dir().join(format!("run-{n}.vars.json"));

        let mut hosts = String::from("localhost ansible_connection=local\n");
        for h in &o.hosts {
            hosts.push_str(&format!("{h} ansible_connection=local\n"));
        }
        std::fs::write(&inventory, hosts).expect("write inventory");
        let mut vars = self.connection_vars();
        if let (Some(all), Some(extra)) = (vars.as_object_mut(), o.vars.as_object()) {
            all.extend(extra.clone());
        }
        std::fs::write(&vars_file, vars.to_string()).expect("write vars");

        let program = ansible_playbook();
        let python = program.with_file_name("python3");
        let mut cmd = Command::new(&program);
        cmd.arg("-i")
            .arg(&inventory)
            .arg("-e")
            .arg(format!("@{}", vars_file.display()));
        if let Some(f) = o.forks {
            cmd.arg("--forks").arg(f.to_string());
        }
        cmd.arg(playbook);
        for (key, _) in std::env::vars_os() {
            let k = key.to_string_lossy();
            if k.starts_with("PROXMOX_") || k == "REQUESTS_CA_BUNDLE" || k == "CURL_CA_BUNDLE" {
                cmd.env_remove(&key);
            }
        }
        let collections = format!(
            "{}:{}",
            self.dir().join("collections").display(),
            repo_root().join("build/anchor").display()
        );
        cmd.env("ANSIBLE_CONFIG", self.dir().join("ansible.cfg"))
            .env("ANSIBLE_COLLECTIONS_PATH", collections)
            .env("ANSIBLE_HOME", self.dir().join("ansible-home"))
            .env("ANSIBLE_PYTHON_INTERPRETER", &python)
            .env("ANSIBLE_NOCOLOR", "1")
            .env("FERROX_RESULTS_FILE", &results)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            // community.proxmox 1.6 ignores ca_path: requests must be told about the CA.
            .env("REQUESTS_CA_BUNDLE", self.ca_path());
        for (k, v) in &o.env {
            cmd.env(k, v);
        }
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        Run {
            rc: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            results: read_results(&results),
        }
    }

    /// The simulator's request counts per `"METHOD /api2/json/path"`.
    pub fn requests(&self) -> Value {
        let v = self.control("GET", "/_pvesim/requests");
        match v {
            Value::Object(mut m) if m.contains_key("data") => m.remove("data").unwrap_or(Value::Null),
            other => other,
        }
    }

    pub fn clear_requests(&self) {
        self.control("DELETE", "/_pvesim/requests");
    }

    /// Installs a simulator fault (see tests/pvesim's README for the spec).
    pub fn fault(&self, spec: Value) {
        let url = format!("https://127.0.0.1:{}/_pvesim/faults", self.sim.port());
        let mut resp = self
            .control
            .post(&url)
            .header("Content-Type", "application/json")
            .send(spec.to_string())
            .unwrap_or_else(|e| panic!("POST /_pvesim/faults: {e}"));
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        assert!(status < 300, "POST /_pvesim/faults {spec} answered {status}: {text}");
    }

    /// A call to a control endpoint (`/_pvesim/...`, no authentication); its JSON answer.
    pub fn control(&self, method: &str, path: &str) -> Value {
        let url = format!("https://127.0.0.1:{}{path}", self.sim.port());
        let result = match method {
            "GET" => self.control.get(&url).call(),
            "DELETE" => self.control.delete(&url).call(),
            "POST" => self.control.post(&url).send_empty(),
            other => panic!("unsupported control method {other}"),
        };
        let mut resp = result.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        assert!(status < 300, "{method} {path} answered {status}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    fn write_ansible_files(&self) {
        let dir = self.dir();
        // ferrox.proxmox next to community.proxmox: the installed test collection,
        // or, with FERROX_MODULES_DIR, a collection made of the repository's meta/, action
        // plugins and docs stubs, with the module binaries found in that directory (e.g. a
        // release build's target dir) as the host platform's `__bin/` entries.
        let ns = dir.join("collections/ansible_collections/ferrox");
        std::fs::create_dir_all(&ns).expect("collections dir");
        match ferrox_modules_dir() {
            None => std::os::unix::fs::symlink(ferrox_integration::installed_collection(), ns.join("proxmox"))
                .expect("collection symlink"),
            Some(bins) => {
                use std::os::unix::fs::symlink;
                let root = ns.join("proxmox");
                let bin_dir = root
                    .join("plugins/modules/__bin")
                    .join(ferrox_integration::host_platform());
                std::fs::create_dir_all(&bin_dir).expect("modules dir");
                for part in ["meta", "plugins/action", "plugins/plugin_utils"] {
                    symlink(repo_root().join(part), root.join(part)).expect("collection symlink");
                }
                for m in ferrox_integration::MODULES {
                    let stub = format!("{m}.py");
                    symlink(
                        repo_root().join("plugins/modules").join(&stub),
                        root.join("plugins/modules").join(&stub),
                    )
                    .expect("docs stub symlink");
                }
                let binary = ferrox_integration::BINARY;
                symlink(bins.join(binary), bin_dir.join(binary)).expect("module binary symlink");
            }
        }
        ferrox_integration::write_ansible_cfg(dir);
    }
}

/// `FERROX_MODULES_DIR`: where the ferrox module binaries to run are (default: the
/// repository's `plugins/modules/__bin/<host platform>/`).
pub fn ferrox_modules_dir() -> Option<PathBuf> {
    std::env::var_os("FERROX_MODULES_DIR").map(PathBuf::from)
}

fn control_agent(ca_pem: &[u8]) -> ureq::Agent {
    use ureq::tls::{Certificate, RootCerts, TlsConfig};
    let ca = Certificate::from_pem(ca_pem)
        .expect("the simulator's CA is valid PEM")
        .to_owned();
    let tls = TlsConfig::builder()
        .root_certs(RootCerts::Specific(Arc::new(vec![ca])))
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(30)))
        .build()
        .new_agent()
}

/// One task result on one host.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub name: String,
    pub host: String,
    pub failed: bool,
    pub changed: bool,
    pub skipped: bool,
    /// Wall time from the task's start on the host to its result.
    pub seconds: f64,
    /// The same instants as Unix times (for batches of parallel hosts).
    pub start: f64,
    pub end: f64,
    pub result: Value,
}

impl Outcome {
    pub fn msg(&self) -> &str {
        self.result["msg"].as_str().unwrap_or("")
    }

    /// The result's `vmid` as an integer, whether the module returned it as a number or a string.
    pub fn vmid(&self) -> u64 {
        let v = &self.result["vmid"];
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or_else(|| panic!("task {:?} returned no vmid: {}", self.name, self.result))
    }

    /// `proxmox_vms[*].vmid` of a proxmox_vm_info result.
    pub fn vmids(&self) -> Vec<u64> {
        self.result["proxmox_vms"]
            .as_array()
            .unwrap_or_else(|| panic!("task {:?} returned no proxmox_vms: {}", self.name, self.result))
            .iter()
            .map(|g| {
                g["vmid"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("vmid not an integer in {g}"))
            })
            .collect()
    }

    /// `proxmox_vms[0].config` of a proxmox_vm_info result.
    pub fn config(&self) -> &Value {
        &self.result["proxmox_vms"][0]["config"]
    }

    /// Panics with the whole result unless the task succeeded.
    pub fn ok(&self) -> &Self {
        assert!(!self.failed, "task {:?} failed: {}", self.name, self.result);
        self
    }

    /// Panics with the whole result unless the task failed.
    pub fn failed(&self) -> &Self {
        assert!(self.failed, "task {:?} should have failed: {}", self.name, self.result);
        self
    }

    pub fn changed(&self, expected: bool) -> &Self {
        assert_eq!(self.changed, expected, "task {:?} changed: {}", self.name, self.result);
        self
    }

    pub fn msg_is(&self, expected: &str) -> &Self {
        assert_eq!(self.msg(), expected, "task {:?}: {}", self.name, self.result);
        self
    }
}

/// A finished ansible-playbook run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Run {
    pub rc: i32,
    pub stdout: String,
    pub stderr: String,
    pub results: Vec<Outcome>,
}

impl Run {
    /// The result of the task with this name (on localhost).
    pub fn task(&self, name: &str) -> &Outcome {
        self.results.iter().find(|t| t.name == name).unwrap_or_else(|| {
            let names: Vec<&str> = self.results.iter().map(|t| t.name.as_str()).collect();
            panic!(
                "no result for task {name:?}; tasks run: {names:?}\n{}",
                self.transcript()
            )
        })
    }

    /// Every result of the task with this name (one per host).
    pub fn all(&self, name: &str) -> Vec<&Outcome> {
        self.results.iter().filter(|t| t.name == name).collect()
    }

    /// Panics (showing the output) unless ansible-playbook exited 0.
    pub fn assert_ok(&self) -> &Self {
        assert_eq!(
            self.rc,
            0,
            "ansible-playbook exited with {}\n{}",
            self.rc,
            self.transcript()
        );
        self
    }

    pub fn transcript(&self) -> String {
        format!("--- stdout ---\n{}\n--- stderr ---\n{}", self.stdout, self.stderr)
    }
}

fn read_results(path: &Path) -> Vec<Outcome> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("bad result line {l}: {e}"));
            let outcome = v["outcome"].as_str().unwrap_or("");
            Outcome {
                name: v["name"].as_str().unwrap_or("").to_string(),
                host: v["host"].as_str().unwrap_or("").to_string(),
                failed: outcome == "failed" || outcome == "unreachable",
                skipped: outcome == "skipped",
                changed: v["changed"].as_bool().unwrap_or(false),
                seconds: v["seconds"].as_f64().unwrap_or(f64::NAN),
                start: v["start"].as_f64().unwrap_or(f64::NAN),
                end: v["end"].as_f64().unwrap_or(f64::NAN),
                result: v["result"].clone(),
            }
        })
        .collect()
}
