//! [`Env`]: one simulator and one temp dir with everything ansible-playbook needs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

use crate::api::SimApi;
use crate::creds;
use crate::paths::{ansible_playbook, installed_collection, python_next_to, repo_root};
use crate::play::{read_results, render_playbook, Play, PlayOpts};

/// A simulator plus a temp dir with ansible.cfg, inventory and collections path.
pub struct Env {
    sim: pvesim::Simulator,
    api: SimApi,
    dir: tempfile::TempDir,
    plays: AtomicUsize,
    /// How long the simulator lists a new guest without its name and status.
    resources_lag: std::time::Duration,
}

impl Env {
    /// The default scenario.
    pub fn start() -> Env {
        Env::start_with(pvesim::SimConfig::default())
    }

    pub fn start_with(cfg: pvesim::SimConfig) -> Env {
        let resources_lag = std::time::Duration::from_millis(cfg.resources_lag_ms);
        let sim = pvesim::Simulator::start(cfg).unwrap_or_else(|e| panic!("pvesim did not start: {e:#}"));
        let dir = tempfile::Builder::new()
            .prefix("ferrox-it-")
            .tempdir()
            .expect("temp dir");
        if std::env::var_os("FERROX_KEEP_TMP").is_some() {
            eprintln!("ferrox-integration: keeping {}", dir.path().display());
        }
        let ca_pem = sim.ca_pem().to_string();
        std::fs::write(dir.path().join("pvesim-ca.pem"), &ca_pem).expect("write CA");
        let api = SimApi::new(sim.port(), ca_pem.as_bytes(), creds::ROOT_PASSWORD);
        let env = Env {
            sim,
            api,
            dir,
            plays: AtomicUsize::new(0),
            resources_lag,
        };
        env.write_ansible_files();
        env
    }

    pub fn sim(&self) -> &pvesim::Simulator {
        &self.sim
    }

    /// The temp dir (kept with `FERROX_KEEP_TMP=1`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The `ANSIBLE_COLLECTIONS_PATH` the plays use (ferrox.proxmox → the installed tarball,
    /// see [`crate::installed_collection`]).
    pub fn collections_path(&self) -> PathBuf {
        self.link_collection();
        self.dir().join("collections")
    }

    /// The simulator's CA certificate file.
    pub fn ca_path(&self) -> PathBuf {
        self.dir().join("pvesim-ca.pem")
    }

    /// The default connection options (token auth, validate_certs, ca_path).
    pub fn auth(&self) -> Value {
        json!({
            "api_host": "127.0.0.1",
            "api_port": self.sim.port(),
            "api_user": creds::TOKEN_USER,
            "api_token_id": creds::TOKEN_ID,
            "api_token_secret": creds::TOKEN_SECRET,
            "validate_certs": true,
            "ca_path": self.ca_path().display().to_string(),
        })
    }

    /// `module_defaults` carrying `auth` for the collection's action group.
    pub fn defaults_with(&self, auth: Value) -> Value {
        json!({ "group/ferrox.proxmox.proxmox": auth })
    }

    pub fn play(&self, tasks_yaml: &str) -> Play {
        self.play_with(tasks_yaml, &PlayOpts::default())
    }

    pub fn play_with(&self, tasks_yaml: &str, o: &PlayOpts) -> Play {
        let n = self.plays.fetch_add(1, Ordering::SeqCst);
        let playbook = self.dir().join(format!("play-{n}.yml"));
        let results = self.dir().join(format!("play-{n}.results.jsonl"));
        let defaults = o
            .module_defaults
            .clone()
            .unwrap_or_else(|| self.defaults_with(self.auth()));
        let mut text = render_playbook(tasks_yaml, &defaults, &o.vars);
        let mut inventory = self.dir().join("inventory");
        if let Some((hosts, inventory_text)) = &o.hosts {
            text = text.replacen("- hosts: localhost\n", &format!("- hosts: {hosts}\n"), 1);
            inventory = self.dir().join(format!("play-{n}.inventory"));
            std::fs::write(&inventory, inventory_text).expect("write inventory");
        }
        std::fs::write(&playbook, text).expect("write playbook");

        let program = o.ansible.clone().unwrap_or_else(ansible_playbook);
        let mut cmd = Command::new(&program);
        cmd.arg("-i").arg(&inventory).arg(&playbook);
        if o.check {
            cmd.arg("--check");
        }
        if o.diff {
            cmd.arg("--diff");
        }
        if o.verbosity > 0 {
            cmd.arg(format!("-{}", "v".repeat(o.verbosity as usize)));
        }
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("PROXMOX_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("ANSIBLE_CONFIG", self.dir().join("ansible.cfg"))
            .env("ANSIBLE_COLLECTIONS_PATH", self.collections_path())
            .env("ANSIBLE_HOME", self.dir().join("ansible-home"))
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_FORCE_COLOR", "0")
            .env("FERROX_RESULTS_FILE", &results)
            .env("PYTHONDONTWRITEBYTECODE", "1");
        cmd.env("ANSIBLE_PYTHON_INTERPRETER", python_next_to(&program));
        for (k, v) in &o.env {
            cmd.env(k, v);
        }
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        Play {
            rc: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            results: read_results(&results),
        }
    }

    /// `collections/ansible_collections/ferrox/proxmox` → the installed collection, made
    /// before the first play (tests that only run tasks in process need no install).
    pub fn link_collection(&self) {
        let link = self.dir().join("collections/ansible_collections/ferrox/proxmox");
        if link.symlink_metadata().is_ok() {
            return;
        }
        std::fs::create_dir_all(link.parent().expect("namespace dir")).expect("collections dir");
        // Plays started at once from several threads race to make it: one wins.
        match std::os::unix::fs::symlink(installed_collection(), &link) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => panic!("collection symlink: {e}"),
            _ => {}
        }
    }

    /// Waits until the status broadcast shows every guest made so far with its name and
    /// status, as PVE's does a moment after a create. Tasks run in process end within that
    /// moment: a test that counts a later task's API calls settles first, or the task
    /// reads the new guest's config to learn its name, as it would on a real cluster.
    pub fn settle(&self) {
        std::thread::sleep(self.resources_lag);
    }

    /// Every guest as `/cluster/resources?type=vm` lists it once the status broadcast
    /// caught up: PVE lists a guest made a moment ago without its name, and tasks run in
    /// process end within that moment.
    pub fn guests_listed(&self) -> Vec<Value> {
        self.settle();
        match self.api_get("/cluster/resources?type=vm") {
            Value::Array(guests) => guests,
            other => panic!("/cluster/resources answered {other}"),
        }
    }

    /// `GET /api2/json{path}` as root@pam; returns `data` (panics on an HTTP error).
    pub fn api_get(&self, path: &str) -> Value {
        let (status, body) = self.api.raw("GET", &format!("/api2/json{path}"), &[], true);
        if status != 200 {
            panic!("GET {path} answered {status}: {body}");
        }
        body["data"].clone()
    }

    /// Any call to `/api2/json{path}` as root@pam (form fields, or query for GET/DELETE);
    /// returns the status and the whole body.
    pub fn api(&self, method: &str, path: &str, form: &[(&str, &str)]) -> (u16, Value) {
        self.api.raw(method, &format!("/api2/json{path}"), form, true)
    }

    /// A task-starting call as root@pam, waited for: returns the task's final status
    /// (panics unless it ends `OK`), e.g. `env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[])`.
    pub fn run_task(&self, method: &str, path: &str, form: &[(&str, &str)]) -> Value {
        let (status, body) = self.api(method, path, form);
        let upid = match body["data"].as_str() {
            Some(u) if status == 200 => u.to_string(),
            _ => panic!("{method} {path} did not start a task ({status}): {body}"),
        };
        let node = upid.split(':').nth(1).unwrap_or_default().to_string();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let task = self.api_get(&format!("/nodes/{node}/tasks/{upid}/status"));
            if task["status"] == "stopped" {
                assert_eq!(task["exitstatus"], "OK", "task {upid} failed: {task}");
                return task;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "task {upid} still running after 60 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// The simulator's request log (counts per `"METHOD /api2/json/path"`).
    pub fn requests(&self) -> Value {
        let (status, body) = self.api.raw("GET", "/_pvesim/requests", &[], true);
        assert_eq!(status, 200, "GET /_pvesim/requests: {body}");
        unwrap_data(body)
    }

    /// The requests that changed something (logins aside), in order: `METHOD path`.
    pub fn writes(&self) -> Vec<String> {
        self.requests()["log"]
            .as_array()
            .expect("the simulator's request log")
            .iter()
            .filter(|e| e["method"] != "GET")
            .map(|e| {
                format!(
                    "{} {}",
                    e["method"].as_str().unwrap_or_default(),
                    e["path"].as_str().unwrap_or_default()
                )
            })
            .filter(|w| !w.ends_with("/access/ticket"))
            .collect()
    }

    /// The same, counted: `METHOD path xN`, one line per request kind, sorted.
    pub fn write_counts(&self) -> Vec<String> {
        self.requests()["counts"]
            .as_object()
            .expect("the simulator's request counts")
            .iter()
            .filter(|(k, _)| !k.starts_with("GET ") && !k.ends_with("/access/ticket"))
            .map(|(k, n)| format!("{k} x{n}"))
            .collect()
    }

    /// Tickets `POST /access/ticket` gave since the log was cleared (`logins`: for a
    /// password; `renewals`: for a ticket).
    pub fn logins(&self) -> (u64, u64) {
        let r = self.requests();
        (r["logins"].as_u64().unwrap_or(0), r["renewals"].as_u64().unwrap_or(0))
    }

    /// Every ticket and CSRF token the simulator handed out since the log was cleared.
    pub fn issued_tickets(&self) -> Vec<String> {
        let (status, body) = self.api.raw("GET", "/_pvesim/tickets", &[], true);
        assert_eq!(status, 200, "GET /_pvesim/tickets: {body}");
        body["issued"]
            .as_array()
            .expect("issued tickets")
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect()
    }

    pub fn clear_requests(&self) {
        let (status, body) = self.api.raw("DELETE", "/_pvesim/requests", &[], true);
        assert!(status < 300, "DELETE /_pvesim/requests answered {status}: {body}");
    }

    /// The simulator's whole state (`GET /_pvesim/state`): guests with their configs,
    /// volumes, tasks — what the cluster holds, whatever the modules said.
    pub fn state(&self) -> Value {
        let (status, body) = self.api.raw("GET", "/_pvesim/state", &[], true);
        assert_eq!(status, 200, "GET /_pvesim/state: {body}");
        body
    }

    /// Replaces the simulator's whole state (`POST /_pvesim/state`), e.g. with a guest
    /// taken out of [`Env::state`] to make it vanish between a module's read and its write.
    pub fn set_state(&self, state: &Value) {
        let (status, body) = self.api.post_json("/_pvesim/state", state);
        assert!(status < 300, "POST /_pvesim/state answered {status}: {body}");
    }

    /// Holds the requests `spec` names before they are carried out (`POST /_pvesim/hold`),
    /// until [`Env::release`]; [`Env::held`] counts those waiting.
    pub fn hold(&self, spec: Value) {
        let (status, body) = self.api.post_json("/_pvesim/hold", &spec);
        assert!(status < 300, "POST /_pvesim/hold {spec} answered {status}: {body}");
    }

    pub fn held(&self) -> u64 {
        let (_, body) = self.api.raw("GET", "/_pvesim/hold", &[], true);
        body["waiting"].as_u64().unwrap_or(0)
    }

    pub fn release(&self) {
        let (status, body) = self.api.raw("DELETE", "/_pvesim/hold", &[], true);
        assert!(status < 300, "DELETE /_pvesim/hold answered {status}: {body}");
    }

    /// Installs a fault (see tests/pvesim's README for the spec format).
    pub fn fault(&self, spec: Value) {
        let (status, body) = self.api.post_json("/_pvesim/faults", &spec);
        assert!(status < 300, "POST /_pvesim/faults {spec} answered {status}: {body}");
    }

    pub fn clear_faults(&self) {
        let (status, body) = self.api.raw("DELETE", "/_pvesim/faults", &[], true);
        assert!(status < 300, "DELETE /_pvesim/faults answered {status}: {body}");
    }

    fn write_ansible_files(&self) {
        let dir = self.dir();
        write_ansible_cfg(dir);
        std::fs::write(dir.join("inventory"), "localhost ansible_connection=local\n").expect("inventory");
    }
}

/// `dir/ansible.cfg` of every test run: the `ferrox_results` callback, temp dirs inside
/// `dir`, no host key checks, no retry files, no collections from Python's sys.path.
pub fn write_ansible_cfg(dir: &Path) {
    let cfg = format!(
        "[defaults]\n\
         callbacks_enabled = ferrox_results\n\
         callback_plugins = {callbacks}\n\
         host_key_checking = False\n\
         retry_files_enabled = False\n\
         nocows = True\n\
         local_tmp = {tmp}/local\n\
         remote_tmp = {tmp}/remote\n\
         collections_scan_sys_path = False\n\
         [persistent_connection]\n\
         control_path_dir = {tmp}/cp\n",
        callbacks = repo_root().join("tests/integration/callback_plugins").display(),
        tmp = dir.join("ansible-tmp").display(),
    );
    std::fs::write(dir.join("ansible.cfg"), cfg).expect("ansible.cfg");
}

/// Control endpoints may or may not wrap their answer in PVE's `data` envelope.
fn unwrap_data(body: Value) -> Value {
    match body {
        Value::Object(mut map) if map.contains_key("data") => map.remove("data").unwrap_or(Value::Null),
        other => other,
    }
}
