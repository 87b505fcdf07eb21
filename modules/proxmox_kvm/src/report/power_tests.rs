//! The results of the power states: which keys each answer carries (1.6 reported the
//! status found before acting, but not for `template` and `absent`), and the state diff.

use ferrox_ansible::protocol::Output;
use serde_json::{json, Value};

use super::power::{already_absent, output};
use crate::api::{Power, Vm};
use crate::decide::power::{AlreadyAbsent, Decision};
use crate::observe::Now;
use crate::observe::PowerObserved;
use crate::task::State;

fn observed(status: &str, qmpstatus: &str) -> PowerObserved {
    let power = Power {
        status: status.into(),
        qmpstatus: Some(qmpstatus.into()),
        lock: None,
        ha_managed: false,
    };
    PowerObserved {
        vm: Vm {
            node: "pve1".into(),
            vmid: 100,
        },
        name: "web".into(),
        now: Now::of(&power, false),
        waiting: None,
    }
}

fn fields(out: &Output) -> Value {
    Value::Object(out.fields().clone())
}

#[test]
fn unchanged_answers_carry_the_keys_1_6_returned() {
    let running = observed("running", "running");
    let rows = [
        (
            Decision::AlreadyThere("VM 100 is already running".into()),
            json!({"changed": false, "msg": "VM 100 is already running", "vmid": 100, "status": "running", "actions": []}),
        ),
        (
            Decision::AlreadyTemplate("VM 100 is already a template".into()),
            json!({"changed": false, "msg": "VM 100 is already a template", "vmid": 100, "actions": []}),
        ),
        (
            Decision::LeftRunning("VM 100 is running. Stop it before deletion or use force=true.".into()),
            json!({"changed": false, "msg": "VM 100 is running. Stop it before deletion or use force=true.", "vmid": 100}),
        ),
    ];
    for (decision, want) in rows {
        let mut out = output(State::Started, &running, decision, Vec::new());
        assert_eq!(fields(&out), want);
        assert!(out.take_diff().is_none());
    }
    let by_name = already_absent(AlreadyAbsent {
        msg: "VM with name = web is already absent".into(),
        vmid: None,
    });
    assert_eq!(
        fields(&by_name),
        json!({"changed": false, "msg": "VM with name = web is already absent"})
    );
}

#[test]
fn an_action_reports_the_status_before_it_except_for_template_and_absent() {
    let paused = observed("running", "paused");
    let act = || Decision::Act {
        actions: Vec::new(),
        msg: "VM 100 started".into(),
        after: "running",
    };
    let mut started = output(State::Started, &paused, act(), vec!["resume VM 100".into()]);
    assert_eq!(
        fields(&started),
        json!({"changed": true, "msg": "VM 100 started", "vmid": 100, "actions": ["resume VM 100"], "status": "running"})
    );
    let diff = started.take_diff().map(|d| d.to_value());
    assert_eq!(
        diff.map(|d| (d["before"].clone(), d["after"].clone())),
        Some((json!({"state": "paused"}), json!({"state": "running"})))
    );
    let removed = output(State::Absent, &paused, act(), vec!["remove VM 100".into()]);
    assert_eq!(removed.get("status"), None);
    let template = output(State::Template, &paused, act(), Vec::new());
    assert_eq!(template.get("status"), None);
}
