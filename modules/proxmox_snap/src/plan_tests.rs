use serde_json::{json, Map, Value};

use ferrox_ansible::options::Params;

use super::*;
use crate::options::options;

fn task(args: Value) -> Result<SnapTask, String> {
    let mut map: Map<String, Value> = options()
        .iter()
        .map(|o| (o.name.to_string(), o.default.clone().unwrap_or(Value::Null)))
        .collect();
    map.insert("vmid".into(), json!(100));
    for (k, v) in args.as_object().unwrap() {
        map.insert(k.clone(), v.clone());
    }
    SnapTask::from_params(&Params::new(map))
}

fn snap(name: &str, snaptime: u64, parent: Option<&str>) -> Snapshot {
    Snapshot {
        name: name.into(),
        snaptime: Some(snaptime),
        parent: parent.map(str::to_string),
        vmstate: false,
        snapstate: None,
    }
}

fn three() -> Vec<Snapshot> {
    vec![
        snap("cc", 300, Some("bb")),
        snap("aa", 100, None),
        snap("bb", 200, Some("aa")),
    ]
}

fn vm(snapshots: &[Snapshot], running: bool) -> Vm<'_> {
    Vm {
        vmid: 100,
        template: false,
        running,
        snapshots,
    }
}

#[test]
fn each_state_changes_exactly_when_the_snapshot_is_not_as_asked() {
    let snaps = three();
    let table = [
        (json!({"snapname": "bb"}), None, "Snapshot bb is already present"),
        (
            json!({"snapname": "dd"}),
            Some(Action::Take {
                retention_removes: vec![],
            }),
            "Snapshot dd would be created",
        ),
        (
            json!({"snapname": "dd", "state": "absent"}),
            None,
            "Snapshot dd does not exist",
        ),
        (
            json!({"snapname": "aa", "state": "absent"}),
            Some(Action::Remove),
            "Snapshot aa would be removed",
        ),
        (
            json!({"snapname": "aa", "state": "rollback"}),
            Some(Action::Rollback {
                stops: false,
                starts: false,
                ram: false,
            }),
            "Snapshot aa would be rolled back",
        ),
    ];
    for (args, action, predicted) in table {
        let p = plan(&task(args.clone()).unwrap(), vm(&snaps, false)).unwrap();
        assert_eq!(p.action, action, "{args}");
        assert_eq!(p.predicted_msg, predicted, "{args}");
        assert_eq!(
            p.diff.before.is_empty(),
            p.action.is_none() || matches!(p.action, Some(Action::Rollback { .. }))
        );
    }
}

#[test]
fn retention_removes_the_oldest_beyond_the_newest_kept() {
    let snaps = three();
    assert_eq!(retention_removals(&snaps, 2, true), ["aa", "bb"]);
    assert_eq!(retention_removals(&snaps, 3, true), ["aa"]);
    assert_eq!(retention_removals(&snaps, 4, true), Vec::<String>::new());
    assert_eq!(retention_removals(&snaps, 0, true), Vec::<String>::new());
    assert_eq!(retention_removals(&snaps, 1, false), ["aa", "bb"]);
    // Same second: the parent chain decides.
    let same = vec![
        snap("yy", 5, Some("xx")),
        snap("xx", 5, None),
        snap("zz", 5, Some("yy")),
    ];
    assert_eq!(retention_removals(&same, 1, true), ["xx", "yy", "zz"]);
    // A snapshot only the run's plan has taken is the newest.
    let mut planned = three();
    planned[1].snaptime = None;
    assert_eq!(retention_removals(&planned, 3, true), ["bb"]);
    let p = plan(
        &task(json!({"snapname": "dd", "retention": 2})).unwrap(),
        vm(&snaps, false),
    )
    .unwrap();
    assert_eq!(
        p.action,
        Some(Action::Take {
            retention_removes: vec!["aa".into(), "bb".into()]
        })
    );
    assert_eq!(p.diff.before["snapshots"], json!(["cc", "aa", "bb"]));
    assert_eq!(p.diff.after["snapshots"], json!(["cc", "dd"]));
}

#[test]
fn a_rollback_predicts_the_stop_of_a_running_vm_and_its_start() {
    let mut snaps = three();
    let stopping = plan(
        &task(json!({"snapname": "aa", "state": "rollback"})).unwrap(),
        vm(&snaps, true),
    )
    .unwrap();
    assert_eq!(
        stopping.action,
        Some(Action::Rollback {
            stops: true,
            starts: false,
            ram: false,
        })
    );
    assert!(
        stopping.warnings[0].contains("set start: true"),
        "{:?}",
        stopping.warnings
    );
    let started = plan(
        &task(json!({"snapname": "aa", "state": "rollback", "start": true})).unwrap(),
        vm(&snaps, true),
    )
    .unwrap();
    assert_eq!(
        started.action,
        Some(Action::Rollback {
            stops: true,
            starts: true,
            ram: false,
        })
    );
    snaps[1].vmstate = true;
    let with_ram = plan(
        &task(json!({"snapname": "aa", "state": "rollback"})).unwrap(),
        vm(&snaps, false),
    )
    .unwrap();
    assert_eq!(
        with_ram.action,
        Some(Action::Rollback {
            stops: false,
            starts: true,
            ram: true,
        })
    );
    assert!(with_ram.warnings.is_empty());
}

#[test]
fn refusals_name_the_cause_and_the_fix() {
    let mut snaps = three();
    let missing = plan(
        &task(json!({"snapname": "nope", "state": "rollback"})).unwrap(),
        vm(&snaps, false),
    )
    .unwrap_err();
    assert_eq!(
        missing,
        "Snapshot nope does not exist: VM 100 has the snapshots cc, aa, bb; snapname names the snapshot to roll back to"
    );
    snaps[0].snapstate = Some("delete".into());
    let incomplete = plan(
        &task(json!({"snapname": "cc", "state": "rollback"})).unwrap(),
        vm(&snaps, false),
    )
    .unwrap_err();
    assert!(
        incomplete.contains("unable to rollback to incomplete snapshot (snapstate = delete)"),
        "{incomplete}"
    );
    let present = plan(&task(json!({"snapname": "cc"})).unwrap(), vm(&snaps, false)).unwrap();
    assert_eq!(present.action, None);
    assert!(
        present.warnings[0].contains("is incomplete (snapstate = delete)"),
        "{:?}",
        present.warnings
    );
    let template = Vm {
        template: true,
        ..vm(&[], false)
    };
    let refused = plan(&task(json!({"snapname": "s1"})).unwrap(), template).unwrap_err();
    assert!(
        refused.contains("you can't take a snapshot if it's a template"),
        "{refused}"
    );
    for (name, state, why) in [
        (
            "current",
            "present",
            "unable to use snapshot name 'current' (reserved name)",
        ),
        (
            "PENDING",
            "present",
            "unable to use snapshot name 'pending' (reserved name)",
        ),
        (
            "pre upgrade",
            "absent",
            "invalid format - invalid configuration ID 'pre upgrade'",
        ),
    ] {
        let e = task(json!({"snapname": name, "state": state})).unwrap_err();
        assert!(
            e.starts_with(&format!("snapname {name:?}: Proxmox VE refuses it ({why})")),
            "{e}"
        );
    }
}

#[test]
fn the_list_is_read_without_current() {
    let list = json!([
        {"name": "aa", "snaptime": 100, "vmstate": 1, "description": ""},
        {"name": "bb", "snaptime": 200, "vmstate": 0, "description": "", "parent": "aa", "snapstate": "prepare"},
        {"name": "current", "description": "You are here!", "parent": "bb", "running": 0}
    ]);
    let read = read_list(&list);
    assert_eq!(read.len(), 2);
    assert!(read[0].vmstate);
    assert_eq!(read[1].snapstate.as_deref(), Some("prepare"));
    assert_eq!(read[1].parent.as_deref(), Some("aa"));
}
