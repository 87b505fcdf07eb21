//! [`Env::run`]: the tasks of a play run by the module bodies inside the test process,
//! against the same simulator, instead of by `ansible-playbook`.
//!
//! Behaviour of a module (what it plans, writes, refuses, answers) does not depend on
//! Ansible: the binary's `main` only reads an args file and prints one JSON object. Here
//! each task goes through [`ferrox_ansible::protocol::run_in_process`] with the
//! arguments the action plugin would send (`plugins/plugin_utils/binary_module.py`):
//! `module_defaults` merged, ansible-core's switches (`--check`, `--diff`, the module
//! name, its version), and the run's private state carried from task to task as the
//! controller's stores carry it: the check-mode plan (`planning.py`), the name index
//! (`name_index.py`) and the placements (`placements.py`). A task takes milliseconds
//! instead of the seconds an `ansible-playbook` process costs.
//!
//! What only Ansible does is refused with a panic that says to use [`Env::play`]:
//! templating (`{{ }}`), loops, conditions, other modules, several hosts, another
//! ansible-core, environment variables for the modules, `no_log`. A password login
//! gets no kept ticket (every task logs in, as with `FERROX_TICKET_RENEW_AFTER=0`): the
//! ticket store is Ansible's side and is tested through `ansible-playbook`. The lines the
//! action plugin prints under `-v` (the binary's `_ferrox_progress`) precede the recap in
//! the play's `stdout`.

use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Map, Value};

use ferrox_ansible::protocol::{run_in_process, MODULE_ARG, PROTOCOL_ARG, PROTOCOL_VERSION};
use ferrox_dryrun::{EFFECTS_KEY, PLAN_ARG};
use ferrox_run::name_index::{DEFAULT_MAX_AGE_SECS, MAX_AGE_ENV, NAMES_ARG, NAMES_KEY};
use ferrox_run::placements::{PLACEMENTS_ARG, PLACEMENT_KEY};
use ferrox_run::ticket::TICKET_KEY;
use ferrox_run::PROGRESS_KEY;

use crate::env::Env;
use crate::paths::{ansible_playbook, python_next_to};
use crate::play::{dedent, Play, PlayOpts, TaskOutcome};

/// The collection's name, as tasks spell the modules (`ferrox.proxmox.proxmox_kvm`).
const COLLECTION: &str = "ferrox.proxmox";

/// The action group `module_defaults` names (`meta/runtime.yml`).
const ACTION_GROUP: &str = "group/ferrox.proxmox.proxmox";

/// Task keywords the runner understands; any other keyword needs `ansible-playbook`.
const KEYWORDS: [&str; 5] = ["name", "check_mode", "diff", "ignore_errors", "register"];

impl Env {
    /// Runs `tasks_yaml` (the same task list [`Env::play`] takes) in this process.
    pub fn run(&self, tasks_yaml: &str) -> Play {
        self.run_with(tasks_yaml, &PlayOpts::default())
    }

    /// [`Env::run`] with `--check`, `--diff`, `module_defaults` or the name index's age
    /// from `opts`; options that need Ansible are refused.
    pub fn run_with(&self, tasks_yaml: &str, opts: &PlayOpts) -> Play {
        let run = PlayRun::new(self, opts);
        let tasks = match yaml_to_json(tasks_yaml) {
            Value::Array(tasks) => tasks,
            Value::Null => Vec::new(),
            other => panic!("the tasks must be a YAML list, got {other}"),
        };
        run.play(tasks)
    }
}

/// One play's state: what the controller's stores would hold during one
/// `ansible-playbook` run.
struct PlayRun {
    defaults: Map<String, Value>,
    check: bool,
    diff: bool,
    max_age: f64,
    /// The check-mode plan's effects (`ferrox-plan.json`).
    effects: Vec<Value>,
    /// The name index per cluster key (`ferrox-names.json`), with when it was listed.
    names: Map<String, Value>,
    /// The placements the run's creates chose (`ferrox-placements.json`).
    placements: Vec<Value>,
    /// The lines `-v` would print (`binary_module.py` prints each task's `_ferrox_progress`).
    progress: Vec<String>,
    started: Instant,
}

impl PlayRun {
    fn new(env: &Env, opts: &PlayOpts) -> PlayRun {
        assert!(
            opts.ansible.is_none() && opts.hosts.is_none() && opts.vars.is_null() && opts.verbosity == 0,
            "another ansible-core, several hosts, play vars and -v need ansible-playbook: use Env::play_with"
        );
        let mut max_age = f64::from(DEFAULT_MAX_AGE_SECS);
        for (key, value) in &opts.env {
            assert!(
                key == MAX_AGE_ENV,
                "{key}: the modules' environment needs ansible-playbook (use Env::play_with); in process only {MAX_AGE_ENV} is read, by the runner"
            );
            max_age = value
                .parse()
                .unwrap_or_else(|_| panic!("{MAX_AGE_ENV} must be a number, got {value}"));
        }
        let defaults = opts
            .module_defaults
            .clone()
            .unwrap_or_else(|| env.defaults_with(env.auth()));
        let defaults = defaults
            .get(ACTION_GROUP)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        PlayRun {
            defaults,
            check: opts.check,
            diff: opts.diff,
            max_age,
            effects: Vec::new(),
            names: Map::new(),
            placements: Vec::new(),
            progress: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Every task in order; like Ansible, the play stops at a failure that is not ignored.
    fn play(mut self, tasks: Vec<Value>) -> Play {
        let mut results = Vec::new();
        let mut rc = 0;
        for task in tasks {
            let (outcome, ignored) = self.task(&task);
            let failed = outcome.failed && !ignored;
            results.push(outcome);
            if failed {
                rc = 2;
                break;
            }
        }
        let stdout: String =
            self.progress.iter().map(|line| format!("{line}\n")).collect::<String>() + &recap(&results);
        Play {
            rc,
            stdout,
            stderr: String::new(),
            results,
        }
    }

    /// One task: its module run with the arguments the action plugin would send.
    fn task(&mut self, task: &Value) -> (TaskOutcome, bool) {
        let task = task
            .as_object()
            .unwrap_or_else(|| panic!("a task must be a mapping, got {task}"));
        refuse_templating(&Value::Object(task.clone()));
        let (action, module, task_args) = module_of(task);
        let flag = |key: &str, default: bool| task.get(key).and_then(Value::as_bool).unwrap_or(default);
        let check = flag("check_mode", self.check);
        let mut args = self.defaults.clone();
        args.extend(task_args);
        let private = self.private_args(module, &args, check);
        args.extend(private);
        args.insert("_ansible_check_mode".into(), Value::Bool(check));
        args.insert("_ansible_diff".into(), Value::Bool(flag("diff", self.diff)));
        args.insert("_ansible_module_name".into(), Value::String(action.clone()));
        args.insert("_ansible_version".into(), Value::String(ansible_core_version()));
        args.insert(MODULE_ARG.into(), Value::String(module.to_string()));
        args.insert(PROTOCOL_ARG.into(), Value::from(PROTOCOL_VERSION));
        let (result, code) = run_in_process(&ferrox::MODULES, ferrox_run::read_private_state, args);
        let Value::Object(mut result) = result else {
            panic!("{module} answered with something other than an object: {result}")
        };
        self.keep_private_results(module, &mut result);
        let failed = code != 0 || result.get("failed").and_then(Value::as_bool) == Some(true);
        let changed = result.get("changed").and_then(Value::as_bool).unwrap_or(false);
        result.insert("changed".into(), Value::Bool(changed));
        let name = task.get("name").and_then(Value::as_str).unwrap_or(&action).to_string();
        let outcome = TaskOutcome {
            name,
            host: "localhost".into(),
            result: Value::Object(result),
            failed,
            changed,
            skipped: false,
        };
        (outcome, flag("ignore_errors", false))
    }

    /// The run's state handed to `module` (`binary_module.py`'s `_run_binary`).
    fn private_args(&self, module: &str, args: &Map<String, Value>, check: bool) -> Map<String, Value> {
        let mut private = Map::new();
        if let Some(names) = self.names_for(module, args) {
            private.insert(NAMES_ARG.into(), names);
        }
        if coordinated(module, args) {
            private.insert(PLACEMENTS_ARG.into(), Value::Array(self.placements.clone()));
        }
        if check {
            private.insert(PLAN_ARG.into(), json!({ "effects": self.effects }));
        }
        private
    }

    /// `name_index.py`'s `for_task`: the index entries for the task's name, when it
    /// looks its VM up by name alone.
    fn names_for(&self, module: &str, args: &Map<String, Value>) -> Option<Value> {
        let name = args.get("name").and_then(Value::as_str).filter(|n| !n.is_empty())?;
        let by_vmid = args
            .get("vmid")
            .is_some_and(|v| ![Value::Null, json!(""), json!(0), json!("0")].contains(v));
        if !ferrox::NAME_INDEX_MODULES.contains(&module) || self.max_age == 0.0 || by_vmid {
            return None;
        }
        let now = self.started.elapsed().as_secs_f64();
        let clusters: Map<String, Value> = self
            .names
            .iter()
            .map(|(key, entry)| {
                let at = entry["at"].as_f64().unwrap_or(0.0);
                let guests = entry["names"].get(name).cloned().unwrap_or_else(|| json!([]));
                let cluster = json!({
                    "age": now - at,
                    "nodes": entry["nodes"],
                    "storages": entry["storages"],
                    "guests": guests,
                });
                (key.clone(), cluster)
            })
            .collect();
        Some(json!({ "max_age": self.max_age, "clusters": clusters }))
    }

    /// Takes the private keys out of a result and keeps them, as the action plugin does
    /// before anything else sees the result.
    fn keep_private_results(&mut self, module: &str, result: &mut Map<String, Value>) {
        if let Some(Value::Object(fresh)) = result.remove(NAMES_KEY) {
            if let Some(cluster) = fresh.get("cluster").and_then(Value::as_str) {
                let age = fresh.get("age").and_then(Value::as_f64).unwrap_or(0.0).max(0.0);
                let entry = json!({
                    "at": self.started.elapsed().as_secs_f64() - age,
                    "nodes": fresh.get("nodes").cloned().unwrap_or_else(|| json!([])),
                    "storages": fresh.get("storages").cloned().unwrap_or_else(|| json!([])),
                    "names": fresh.get("names").cloned().unwrap_or_else(|| json!({})),
                });
                self.names.insert(cluster.to_string(), entry);
            }
        }
        result.remove(TICKET_KEY);
        if let Some(Value::Array(lines)) = result.remove(PROGRESS_KEY) {
            let lines = lines.iter().filter_map(Value::as_str);
            self.progress
                .extend(lines.map(|line| format!("<localhost> {COLLECTION}.{module}: {line}")));
        }
        if let Some(Value::Array(effects)) = result.remove(EFFECTS_KEY) {
            self.effects.extend(effects);
        }
        let placed = result.remove(PLACEMENT_KEY);
        if let Some(placed @ Value::Object(_)) = placed {
            if module == "proxmox_kvm" {
                self.placements.push(placed);
            }
        }
    }
}

/// `placements.py`'s `coordinated`: a placing task, which depends on the run's other
/// placements (every strategy holds the nodes to their memory).
fn coordinated(module: &str, args: &Map<String, Value>) -> bool {
    let placing = args.get("placement").is_some_and(Value::is_object);
    let node_given = args.get("node").is_some_and(|n| !n.is_null() && n != "");
    module == "proxmox_kvm" && placing && !node_given
}

/// The task's action as written, the module it runs and its arguments; anything but one
/// of the collection's modules with plain arguments is refused.
fn module_of(task: &Map<String, Value>) -> (String, &'static str, Map<String, Value>) {
    let mut actions = task.iter().filter(|(k, _)| !KEYWORDS.contains(&k.as_str()));
    let (action, args) = actions
        .next()
        .unwrap_or_else(|| panic!("a task without a module: {task:?}"));
    if let Some((extra, _)) = actions.next() {
        panic!("{extra}: this task keyword needs ansible-playbook (use Env::play); in process: {KEYWORDS:?}");
    }
    let short = action.strip_prefix(&format!("{COLLECTION}.")).unwrap_or(action);
    let module = ferrox::MODULES
        .iter()
        .find(|m| m.name == short)
        .unwrap_or_else(|| {
            panic!("{action} is not a module of {COLLECTION}: it needs ansible-playbook (use Env::play)")
        })
        .name;
    let args = match args {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => panic!("{action}: arguments must be a mapping in process (got {other}); use Env::play"),
    };
    (action.clone(), module, args)
}

/// Panics on a Jinja expression anywhere in the task: only Ansible templates.
fn refuse_templating(value: &Value) {
    match value {
        Value::String(s) if s.contains("{{") || s.contains("{%") => {
            panic!("{s:?}: templating needs ansible-playbook (use Env::play)")
        }
        Value::Array(items) => items.iter().for_each(refuse_templating),
        Value::Object(map) => map.values().for_each(refuse_templating),
        _ => {}
    }
}

/// The recap line `Play::recap` reads, counted as Ansible counts.
fn recap(results: &[TaskOutcome]) -> String {
    let count = |f: fn(&TaskOutcome) -> bool| results.iter().filter(|t| f(t)).count();
    format!(
        "PLAY RECAP\nlocalhost                  : ok={} changed={} unreachable=0 failed={} skipped=0 rescued=0 ignored=0\n",
        count(|t| !t.failed),
        count(|t| t.changed && !t.failed),
        count(|t| t.failed),
    )
}

/// The task list as JSON, read by PyYAML (the YAML reader ansible-core uses) in the
/// venv's Python.
fn yaml_to_json(yaml: &str) -> Value {
    use std::io::Write;
    let python = python_next_to(&ansible_playbook());
    let mut child = Command::new(&python)
        .args([
            "-c",
            "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(dedent(yaml).as_bytes())
        .expect("write the tasks");
    let out = child.wait_with_output().expect("PyYAML's answer");
    assert!(
        out.status.success(),
        "the tasks are not valid YAML:\n{}\n{}",
        yaml,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("PyYAML printed JSON")
}

/// The ansible-core version the plays use (its dist-info in the venv), sent as
/// `_ansible_version` so messages take that version's wording.
fn ansible_core_version() -> String {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| {
            let venv = ansible_playbook()
                .parent()
                .and_then(|bin| bin.parent())
                .map(|v| v.join("lib"))
                .expect("the venv of ansible-playbook");
            let dist = std::fs::read_dir(&venv)
                .into_iter()
                .flatten()
                .flatten()
                .flat_map(|py| {
                    std::fs::read_dir(py.path().join("site-packages"))
                        .into_iter()
                        .flatten()
                        .flatten()
                })
                .filter_map(|e| e.file_name().into_string().ok())
                .find_map(|n| {
                    n.strip_prefix("ansible_core-")
                        .and_then(|v| v.strip_suffix(".dist-info"))
                        .map(str::to_string)
                });
            dist.unwrap_or_else(|| panic!("no ansible_core-*.dist-info under {}", venv.display()))
        })
        .clone()
}
