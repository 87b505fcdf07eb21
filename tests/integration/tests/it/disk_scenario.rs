//! The shape every disk and NIC playbook test follows: a task in check mode (which
//! must write nothing), then for real (which must do what check mode said), then
//! again (which must change nothing). Included by `disk.rs` and `nic.rs`.

use ferrox_integration::{Env, PlayOpts, TaskOutcome};
use serde_json::Value;

/// The three runs of one scenario.
pub struct Runs {
    pub dry: TaskOutcome,
    pub real: TaskOutcome,
    pub again: TaskOutcome,
    /// API calls of the real run alone: `"METHOD /path"` -> count (task polls folded
    /// into `GET .../tasks/*/status`).
    pub real_calls: Vec<(String, u64)>,
}

fn task_yaml(name: &str, module: &str, options: &str) -> String {
    format!("- name: {name}\n  {module}: {options}\n  ignore_errors: true\n")
}

/// The calls logged since the last clear, with task UPIDs folded.
pub fn calls(env: &Env) -> Vec<(String, u64)> {
    let counts = env.requests()["counts"].as_object().cloned().unwrap_or_default();
    let mut folded: std::collections::BTreeMap<String, u64> = Default::default();
    for (k, v) in counts {
        let key = match k.find("/tasks/UPID:") {
            Some(at) => {
                let tail = k[at..].rsplit('/').next().unwrap_or("").to_string();
                format!("{}/tasks/*/{tail}", &k[..at])
            }
            None => k,
        };
        *folded.entry(key).or_default() += v.as_u64().unwrap_or(0);
    }
    folded.into_iter().collect()
}

/// Writes (POST/PUT/DELETE) in a call list; a login is not one.
pub fn writes(calls: &[(String, u64)]) -> u64 {
    calls
        .iter()
        .filter(|(k, _)| !k.starts_with("GET ") && !k.ends_with("/access/ticket"))
        .map(|(_, n)| n)
        .sum()
}

/// Runs `module` with `options` (a YAML flow mapping) in check mode, for real, and
/// again, all with `--diff`, asserting the contract between them.
pub fn converge(env: &Env, module: &str, options: &str) -> Runs {
    converge_with(env, module, options, &PlayOpts::default())
}

/// [`converge`] with other play options (e.g. `module_defaults` for root).
pub fn converge_with(env: &Env, module: &str, options: &str, base: &PlayOpts) -> Runs {
    let dry_opts = PlayOpts {
        check: true,
        diff: true,
        ..base.clone()
    };
    let real_opts = PlayOpts {
        diff: true,
        ..base.clone()
    };
    let before = env.sim_state();
    env.clear_requests();
    let dry = env.run_with(&task_yaml("dry", module, options), &dry_opts);
    let dry = dry.task("dry").clone();
    assert!(!dry.failed, "check mode failed: {}", dry.result);
    assert_eq!(writes(&calls(env)), 0, "check mode wrote: {:?}", calls(env));
    assert_eq!(env.sim_state(), before, "check mode changed the cluster");

    env.clear_requests();
    let real = env.run_with(&task_yaml("real", module, options), &real_opts);
    let real = real.task("real").clone();
    assert!(!real.failed, "real run failed: {}", real.result);
    let real_calls = calls(env);
    let again = env.run_with(&task_yaml("again", module, options), &real_opts);
    let again = again.task("again").clone();
    assert!(!again.failed, "second run failed: {}", again.result);

    assert_eq!(dry.changed, real.changed, "check mode and real run disagree on changed");
    assert_eq!(
        dry.result["changes"], real.result["changes"],
        "check mode planned other changes"
    );
    assert_eq!(dry.msg(), real.msg());
    assert!(!again.changed, "second run changed again: {}", again.result);
    assert_eq!(again.result["changes"], Value::Array(vec![]));
    if real.changed {
        assert!(
            dry.result.get("diff").is_some() && real.result.get("diff").is_some(),
            "no diff: {}",
            real.result
        );
    }
    Runs {
        dry,
        real,
        again,
        real_calls,
    }
}

/// Play options authenticating as root@pam with its password (for what PVE allows
/// only root, like device passthrough).
pub fn as_root(env: &Env) -> PlayOpts {
    let mut auth = env.auth();
    auth["api_user"] = "root@pam".into();
    auth["api_password"] = ferrox_integration::creds::ROOT_PASSWORD.into();
    auth.as_object_mut().unwrap().remove("api_token_id");
    auth.as_object_mut().unwrap().remove("api_token_secret");
    PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        ..Default::default()
    }
}

/// One task, run once (for failures and single steps).
pub fn once(env: &Env, module: &str, options: &str, check: bool) -> TaskOutcome {
    let play = env.run_with(
        &task_yaml("t", module, options),
        &PlayOpts {
            check,
            diff: true,
            ..Default::default()
        },
    );
    play.task("t").clone()
}

/// Extension: the simulator's cluster state without volatile parts, for "nothing changed".
pub trait SimState {
    fn sim_state(&self) -> Value;
}

impl SimState for Env {
    fn sim_state(&self) -> Value {
        let mut cfgs = serde_json::Map::new();
        for (node, vmid) in [("pve1", 100), ("pve1", 9000), ("pve1", 101), ("pve2", 102)] {
            let (status, body) = self.api("GET", &format!("/nodes/{node}/qemu/{vmid}/config"), &[]);
            if status == 200 {
                cfgs.insert(format!("{vmid}"), body["data"].clone());
            }
        }
        Value::Object(cfgs)
    }
}
