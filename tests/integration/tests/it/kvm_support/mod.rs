//! Running whole playbooks (own inventory, several hosts) against an [`Env`]'s
//! simulator, the way a user does: connection from `PROXMOX_*` variables, or none at all
//! (local mode: pvesh on the machine the tasks are delegated to).

use std::path::Path;
use std::process::Command;

use ferrox_integration::{ansible_playbook, creds, Env};
use serde_json::Value;

/// One `ansible-playbook` run: exit code, output, and every task result.
pub struct Run {
    pub rc: i32,
    pub stdout: String,
    pub results: Vec<Value>,
}

impl Run {
    /// Sum of `changed=N` over the PLAY RECAP lines.
    pub fn recap(&self, counter: &str) -> u64 {
        let Some(at) = self.stdout.find("PLAY RECAP") else {
            return 0;
        };
        let prefix = format!("{counter}=");
        self.stdout[at..]
            .split_whitespace()
            .filter_map(|w| w.strip_prefix(&prefix))
            .filter_map(|n| n.parse::<u64>().ok())
            .sum()
    }

    /// Results of the task named `name`, one per host.
    pub fn task(&self, name: &str) -> Vec<&Value> {
        self.results.iter().filter(|r| r["name"] == name).collect()
    }
}

/// Runs `playbook` with `inventory` and extra arguments against the env's simulator.
pub fn run_playbook(env: &Env, playbook: &Path, inventory: &Path, extra: &[&str]) -> Run {
    let connection = [
        ("PROXMOX_HOST", "127.0.0.1".to_string()),
        ("PROXMOX_PORT", env.sim().port().to_string()),
        ("PROXMOX_USER", creds::TOKEN_USER.to_string()),
        ("PROXMOX_TOKEN_ID", creds::TOKEN_ID.to_string()),
        ("PROXMOX_TOKEN_SECRET", creds::TOKEN_SECRET.to_string()),
        ("PROXMOX_CA_PATH", env.ca_path().display().to_string()),
    ];
    run_playbook_with(env, playbook, inventory, extra, &connection)
}

/// [`run_playbook`] with `environment` instead of the `PROXMOX_*` connection (no
/// `PROXMOX_*` variable reaches the run but those it names).
pub fn run_playbook_with(
    env: &Env,
    playbook: &Path,
    inventory: &Path,
    extra: &[&str],
    environment: &[(&str, String)],
) -> Run {
    let program = ansible_playbook();
    let results = env.dir().join(format!(
        "run-{}.jsonl",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let mut cmd = Command::new(&program);
    cmd.arg("-i").arg(inventory).arg(playbook).args(extra);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("PROXMOX_") {
            cmd.env_remove(&key);
        }
    }
    let python = program.with_file_name("python3");
    cmd.env("ANSIBLE_CONFIG", env.dir().join("ansible.cfg"))
        .env("ANSIBLE_COLLECTIONS_PATH", env.collections_path())
        .env("ANSIBLE_HOME", env.dir().join("ansible-home"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("FERROX_RESULTS_FILE", &results)
        .env(
            "ANSIBLE_PYTHON_INTERPRETER",
            if python.exists() {
                python
            } else {
                "/usr/bin/python3".into()
            },
        );
    for (key, value) in environment {
        cmd.env(key, value);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let text = std::fs::read_to_string(&results).unwrap_or_default();
    let results = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("result line"))
        .collect();
    Run {
        rc: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        results,
    }
}

/// QEMU VMs of the cluster as (vmid, name).
pub fn qemu_vms(env: &Env) -> Vec<(u64, String)> {
    env.guests_listed()
        .iter()
        .filter(|g| g["type"] == "qemu")
        .map(|g| {
            (
                g["vmid"].as_u64().unwrap(),
                g["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}
