//! The one task driver (`ferrox_run::driver`) in process against the simulator, with a
//! probe task that records which of its steps ran: the order of the steps, a plan that
//! changes nothing reported at once, a lock refused before any further read or write,
//! a failed check writing nothing, and the effects of a check run reaching the run.

use std::cell::RefCell;

use serde_json::{json, Map, Value};

use ferrox_ansible::options::{ModuleSpec, Opt, Rules, Support};
use ferrox_ansible::protocol::{
    run_in_process, Failure, Module, Output, Registered, MODULE_ARG, PROTOCOL_ARG, PROTOCOL_VERSION,
};
use ferrox_dryrun::{Effect, EFFECTS_KEY};
use ferrox_integration::Env;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::connection;
use ferrox_run::driver::{self, Cx, Decided, Guard, Lock, Outcome, Prediction, Subject, Task};
use ferrox_run::vm_task::{self, InfoWording, LockWording};

thread_local! {
    /// The steps the probe ran, in order.
    static STEPS: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

fn step(name: &'static str) {
    STEPS.with(|s| s.borrow_mut().push(name));
}

/// A task on VM 100's `description`: `change` sets it to `driver`, `held_lock` is the
/// lock its observe adds to the config read, `fail_check` makes its check refuse.
struct Probe {
    change: bool,
    held_lock: Option<String>,
    fail_check: bool,
}

struct ProbePlan(bool);

impl Decided for ProbePlan {
    fn changes(&self) -> bool {
        self.0
    }
}

impl Task for Probe {
    type Seen = Value;
    type Plan = ProbePlan;
    type Done = Value;

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Value, Failure> {
        step("observe");
        let mut config = vm_task::read_config(cx.client, "pve1", 100, InfoWording::Vmid)?;
        if let Some(lock) = &self.held_lock {
            config["lock"] = json!(lock);
        }
        Ok(config)
    }

    fn plan(&self, seen: &Value) -> Result<ProbePlan, Failure> {
        step("plan");
        Ok(ProbePlan(self.change && seen["description"] != json!("driver")))
    }

    fn guard<'s>(&self, seen: &'s Value, _plan: &ProbePlan) -> Guard<'s> {
        step("guard");
        Guard {
            subject: Subject::Vm {
                vmid: 100,
                node: "pve1",
            },
            lock: Some(Lock {
                held: vm_task::config_lock(seen),
                skiplock: false,
                wording: LockWording::Vmid,
            }),
            writes: vec![Write::Config {
                vmid: 100,
                set: vec![("description".into(), "driver".into(), None)],
                delete: vec![],
            }],
        }
    }

    fn check(&self, _cx: &mut Cx<'_>, _seen: &Value, _plan: &ProbePlan) -> Result<(), Failure> {
        step("check");
        if self.fail_check {
            return Err(Failure::new("the probe's check refused"));
        }
        Ok(())
    }

    fn predict(&mut self, _cx: &mut Cx<'_>, _seen: &Value, _plan: &ProbePlan) -> Result<Prediction, Failure> {
        step("predict");
        let mut effect = Effect::config(100, "pve1");
        if let Effect::Config { set, .. } = &mut effect {
            set.insert("description".into(), json!("driver"));
        }
        Ok(Prediction {
            effects: vec![effect],
            warnings: vec!["the probe predicted".into()],
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, _seen: &Value, _plan: &ProbePlan) -> Result<Value, Failure> {
        step("execute");
        cx.client
            .put("/nodes/pve1/qemu/100/config", &[("description", "driver".into())])
            .map_err(|e| Failure::new(e.to_string()))
    }

    fn report(
        self,
        _cx: &mut Cx<'_>,
        _seen: &Value,
        plan: &ProbePlan,
        outcome: Outcome<Value>,
    ) -> Result<Output, Failure> {
        step(match outcome {
            Outcome::Unchanged => "report unchanged",
            Outcome::Predicted => "report predicted",
            Outcome::Done(_) => "report done",
        });
        Ok(Output::new(plan.0, "probed"))
    }
}

fn spec() -> ModuleSpec {
    let mut options = connection::options();
    options.extend([
        Opt::bool("change").default(false).desc("Set the description."),
        Opt::str("held_lock").desc("The lock the guard reports."),
        Opt::bool("fail_check").default(false).desc("Refuse in the check."),
    ]);
    ModuleSpec {
        name: "driver_probe",
        short_description: "The driver's probe",
        description: vec![],
        version_added: "0.1.0",
        options,
        rules: Rules::default(),
        check_mode: (Support::Full, ""),
        diff_mode: (Support::None, ""),
        notes: vec![],
        seealso: vec![],
        examples: "",
        returns: "",
    }
}

fn body(m: &mut Module) -> Result<Output, Failure> {
    let task = Probe {
        change: m.params.bool("change").unwrap_or(false),
        held_lock: m.params.str("held_lock").map(str::to_string),
        fail_check: m.params.bool("fail_check").unwrap_or(false),
    };
    driver::run(m, task)
}

const PROBE: [Registered; 1] = [Registered {
    name: "driver_probe",
    spec,
    body,
}];

/// Runs the probe with `task` (its options) in check mode or not: the result, and the
/// steps it ran.
fn probe(env: &Env, task: Value, check: bool) -> (Map<String, Value>, Vec<&'static str>) {
    STEPS.with(|s| s.borrow_mut().clear());
    let mut args: Map<String, Value> = env.auth().as_object().cloned().unwrap_or_default();
    args.extend(task.as_object().cloned().unwrap_or_default());
    args.insert("_ansible_check_mode".into(), Value::Bool(check));
    args.insert(MODULE_ARG.into(), json!("driver_probe"));
    args.insert(PROTOCOL_ARG.into(), Value::from(PROTOCOL_VERSION));
    if check {
        args.insert(ferrox_dryrun::PLAN_ARG.into(), json!({"effects": []}));
    }
    let (result, _) = run_in_process(&PROBE, ferrox_run::read_private_state, args);
    let Value::Object(result) = result else {
        panic!("not an object: {result}")
    };
    (result, STEPS.with(|s| s.borrow().clone()))
}

#[test]
fn the_driver_runs_each_step_once_in_order() {
    let env = Env::start();
    let (out, steps) = probe(&env, json!({}), false);
    assert_eq!(steps, ["observe", "plan", "report unchanged"], "{out:?}");
    assert_eq!(out["changed"], json!(false));

    let (out, steps) = probe(&env, json!({"change": true}), true);
    assert_eq!(
        steps,
        ["observe", "plan", "guard", "check", "predict", "report predicted"],
        "{out:?}"
    );
    assert_eq!(out["changed"], json!(true));
    assert_eq!(out["warnings"], json!(["the probe predicted"]));
    let effects = out[EFFECTS_KEY]
        .as_array()
        .expect("the check run's effects reach the run");
    assert_eq!(effects.len(), 1, "{effects:?}");
    assert_eq!(effects[0]["set"]["description"], json!("driver"));
    assert!(env.writes().is_empty(), "check mode wrote: {:?}", env.writes());

    let (out, steps) = probe(&env, json!({"change": true}), false);
    assert_eq!(
        steps,
        ["observe", "plan", "guard", "check", "execute", "report done"],
        "{out:?}"
    );
    assert!(out.get(EFFECTS_KEY).is_none(), "a real run plans nothing: {out:?}");
    assert_eq!(
        env.api_get("/nodes/pve1/qemu/100/config")["description"],
        json!("driver")
    );
}

#[test]
fn a_lock_or_a_failed_check_stops_the_task_before_any_write() {
    let env = Env::start();
    for check in [true, false] {
        let (out, steps) = probe(&env, json!({"change": true, "held_lock": "backup"}), check);
        assert_eq!(steps, ["observe", "plan", "guard"], "check mode {check}: {out:?}");
        assert_eq!(
            out["msg"],
            json!("VM 100 is locked (backup): wait until the backup operation has finished, then run the task again")
        );
        let (out, steps) = probe(&env, json!({"change": true, "fail_check": true}), check);
        assert_eq!(
            steps,
            ["observe", "plan", "guard", "check"],
            "check mode {check}: {out:?}"
        );
        assert_eq!(out["msg"], json!("the probe's check refused"));
        assert!(out.get(EFFECTS_KEY).is_none_or(|e| e == &json!([])), "{out:?}");
    }
    assert!(env.writes().is_empty(), "{:?}", env.writes());
}
