//! A Proxmox VE task that ends with warnings (`WARNINGS: n`) succeeds, and every module
//! words its warnings alike in the result: each `WARN` line of the task's log, the task
//! named (`TaskDone::result_warnings` in the client).

use crate::disk_scenario::{as_root, once};
use ferrox_integration::{Env, TaskOutcome};
use pvesim::fileserver::{FileServer, Served};
use serde_json::json;

/// The module's result warnings of a task of `task_type` that ended with two warnings.
fn warnings_of(env: &Env, task_type: &str, run: impl FnOnce() -> TaskOutcome) -> Vec<String> {
    env.fault(json!({"task_type": task_type, "warnings": 2, "times": 1}));
    let t = run();
    assert!(t.changed && !t.failed, "{}", t.result);
    t.warnings()
}

fn assert_worded(module: &str, warnings: &[String]) {
    assert_eq!(warnings.len(), 2, "{module}: {warnings:?}");
    for w in warnings {
        let (task, line) = w.split_once(": ").unwrap_or_default();
        assert!(
            task.starts_with("Proxmox VE task UPID:pve1:") && line.starts_with("WARN: simulated warning"),
            "{module}: {w}"
        );
    }
}

#[test]
fn every_module_words_a_task_s_warnings_alike() {
    let env = Env::start();
    let kvm = warnings_of(&env, "qmstart", || {
        once(&env, "ferrox.proxmox.proxmox_kvm", "{vmid: 100, state: started}", false)
    });
    assert_worded("proxmox_kvm", &kvm);

    let disk = warnings_of(&env, "qmconfig", || {
        once(
            &env,
            "ferrox.proxmox.proxmox_disk",
            "{vmid: 100, disk: scsi1, storage: local-lvm, size: 2}",
            false,
        )
    });
    assert_worded("proxmox_disk", &disk);

    let snap = warnings_of(&env, "qmsnapshot", || {
        once(
            &env,
            "ferrox.proxmox.proxmox_snap",
            "{vmid: 100, snapname: before}",
            false,
        )
    });
    assert_worded("proxmox_snap", &snap);

    let files = FileServer::start().expect("the loopback file server");
    files.add("/isos/netinst-13.iso", Served::pattern(1 << 20));
    let args = format!(
        "{{node: pve1, storage: local, content_type: iso, url: '{}'}}",
        files.url("/isos/netinst-13.iso")
    );
    let template = warnings_of(&env, "download", || {
        let play = env.run_with(
            &format!("- name: t\n  ferrox.proxmox.proxmox_template: {args}\n"),
            &as_root(&env),
        );
        play.task("t").clone()
    });
    assert_worded("proxmox_template", &template);

    let removal = warnings_of(&env, "imgdel", || {
        let args = "{node: pve1, storage: local, content_type: iso, template: netinst-13.iso, state: absent}";
        let play = env.run_with(
            &format!("- name: t\n  ferrox.proxmox.proxmox_template: {args}\n"),
            &as_root(&env),
        );
        play.task("t").clone()
    });
    assert_worded("proxmox_template state=absent", &removal);
}
