//! proxmox_kvm power states, current, template, absent, and the delete/revert/migrate
//! flows, each run twice (the second run changes nothing) and in check mode.

use ferrox_integration::{Env, PlayOpts};
use serde_json::{json, Value};

fn task(vmid: u64, extra: &str) -> String {
    format!("- name: t\n  ferrox.proxmox.proxmox_kvm:\n    vmid: {vmid}\n{extra}")
}

fn status(env: &Env, vmid: u64) -> Value {
    env.api_get(&format!("/nodes/pve1/qemu/{vmid}/status/current"))
}

fn check() -> PlayOpts {
    PlayOpts {
        check: true,
        ..Default::default()
    }
}

#[test]
fn start_stop_restart_converge() {
    let env = Env::start();
    let dry = env.run_with(&task(100, "    state: started\n"), &check());
    assert!(dry.task("t").changed);
    assert_eq!(status(&env, 100)["status"], "stopped");

    let play = env.run(&task(100, "    state: started\n"));
    let t = play.task("t");
    assert!(t.changed);
    assert_eq!(t.msg(), "VM 100 started");
    assert_eq!(t.result["status"], "stopped");
    assert_eq!(t.result["actions"], dry.task("t").result["actions"]);
    assert_eq!(status(&env, 100)["status"], "running");
    let again = env.run(&task(100, "    state: started\n"));
    assert!(!again.task("t").changed);
    assert_eq!(again.task("t").msg(), "VM 100 is already running");

    let cur = env.run(&task(100, "    state: current\n"));
    assert_eq!(cur.task("t").msg(), "VM web01 with vmid = 100 is running");

    let restart = env.run(&task(100, "    state: restarted\n"));
    assert_eq!(restart.task("t").msg(), "VM 100 is restarted");
    let reset = env.run(&task(100, "    state: restarted\n    force: true\n"));
    assert!(reset.task("t").changed);

    let stop = env.run(&task(100, "    state: stopped\n    timeout: 20\n"));
    assert_eq!(stop.task("t").msg(), "VM 100 is shutting down");
    assert_eq!(stop.task("t").result["status"], "running");
    assert_eq!(status(&env, 100)["status"], "stopped");
    let again = env.run(&task(100, "    state: stopped\n"));
    assert_eq!(again.task("t").msg(), "VM 100 is already stopped");
    let restart = env.run(&task(100, "    state: restarted\n"));
    assert_eq!(restart.task("t").msg(), "VM 100 is not running");
    assert!(!restart.task("t").changed);
}

#[test]
fn paused_and_hibernated_work() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let play = env.run(&task(100, "    state: paused\n"));
    assert_eq!(play.task("t").msg(), "VM 100 is suspending");
    assert_eq!(status(&env, 100)["qmpstatus"], "paused");
    let again = env.run(&task(100, "    state: paused\n"));
    assert!(!again.task("t").changed);
    assert_eq!(again.task("t").msg(), "VM 100 is already paused");
    // started resumes a paused VM
    let play = env.run(&task(100, "    state: started\n"));
    assert!(play.task("t").changed);
    assert_eq!(status(&env, 100)["qmpstatus"], "running");

    let play = env.run(&task(100, "    state: hibernated\n"));
    assert_eq!(play.task("t").msg(), "VM 100 is suspending");
    let st = status(&env, 100);
    assert_eq!(st["status"], "stopped");
    assert_eq!(st["lock"], "suspended");
    let again = env.run(&task(100, "    state: hibernated\n"));
    assert_eq!(again.task("t").msg(), "VM 100 is not running");
    // A hibernated VM is locked: removing it needs force, which wakes it up first.
    let refused = env.run(&task(100, "    state: absent\n"));
    assert!(
        refused.task("t").msg().contains("is hibernated"),
        "{}",
        refused.task("t").msg()
    );
    let dry = env.run_with(&task(100, "    state: absent\n    force: true\n"), &check());
    assert_eq!(
        dry.task("t").result["actions"],
        json!([
            "resume VM 100",
            "shut down VM 100 (power off after 30 s)",
            "remove VM 100"
        ])
    );
    // started wakes a hibernated VM from its saved state.
    let woke = env.run(&task(100, "    state: started\n"));
    assert!(woke.task("t").changed, "{}", woke.task("t").result);
    assert_eq!(status(&env, 100)["status"], "running");
    assert!(status(&env, 100).get("lock").is_none());
    // And absent with force removes a hibernated VM, as the dry run said.
    env.run(&task(100, "    state: hibernated\n")).assert_ok();
    let gone = env.run(&task(100, "    state: absent\n    force: true\n"));
    gone.assert_ok();
    assert_eq!(gone.task("t").msg(), "VM 100 removed");
}

#[test]
fn template_with_force_stops_a_running_vm_first() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let refuse = env.run(&task(100, "    state: template\n"));
    assert!(refuse.task("t").failed);
    assert!(
        refuse.task("t").msg().contains("use force: true"),
        "{}",
        refuse.task("t").msg()
    );
    let play = env.run(&task(100, "    state: template\n    force: true\n"));
    play.assert_ok();
    assert_eq!(play.task("t").msg(), "VM 100 is converting to template");
    assert_eq!(env.api_get("/nodes/pve1/qemu/100/config")["template"], json!(1));
    let again = env.run(&task(100, "    state: template\n"));
    assert_eq!(again.task("t").msg(), "VM 100 is already a template");
}

#[test]
fn absent_needs_force_for_a_running_vm_and_converges() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let play = env.run(&task(100, "    state: absent\n"));
    assert!(!play.task("t").changed);
    assert_eq!(
        play.task("t").msg(),
        "VM 100 is running. Stop it before deletion or use force=true."
    );
    let dry = env.run_with(
        &task(100, "    state: absent\n    force: true\n    purge: true\n"),
        &check(),
    );
    assert!(dry.task("t").changed);
    let play = env.run(&task(100, "    state: absent\n    force: true\n    purge: true\n"));
    play.assert_ok();
    assert_eq!(play.task("t").msg(), "VM 100 removed");
    assert_eq!(play.task("t").result["actions"], dry.task("t").result["actions"]);
    let again = env.run(&task(100, "    state: absent\n"));
    assert!(!again.task("t").changed);
    let by_name = env.run("- name: t\n  ferrox.proxmox.proxmox_kvm:\n    name: web01\n    state: absent\n");
    assert_eq!(by_name.task("t").msg(), "VM with name = web01 is already absent");
}

#[test]
fn delete_and_migrate_converge() {
    let env = Env::start();
    let play = env.run(&task(100, "    delete: ide2,tablet\n"));
    play.assert_ok();
    assert_eq!(play.task("t").msg(), "Settings has deleted on VM web01 with vmid 100");
    assert!(env.api_get("/nodes/pve1/qemu/100/config").get("ide2").is_none());
    let again = env.run(&task(100, "    delete: ide2\n"));
    assert!(!again.task("t").changed);

    // Live, local disks go along only with with_local_disks (offline they always do).
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    let refused = env.run(&task(100, "    migrate: true\n    node: pve2\n"));
    assert!(
        refused.task("t").msg().contains("without with-local-disks option"),
        "the failed task says why: {}",
        refused.task("t").msg()
    );
    let play = env.run(&task(
        100,
        "    migrate: true\n    node: pve2\n    with_local_disks: true\n",
    ));
    play.assert_ok();
    assert_eq!(play.task("t").msg(), "VM 100 has been migrated from pve1 to pve2");
    env.run_task("POST", "/nodes/pve2/qemu/100/status/stop", &[]);
    env.api_get("/nodes/pve2/qemu/100/config");
    let again = env.run(&task(100, "    migrate: true\n    node: pve2\n"));
    assert_eq!(again.task("t").msg(), "VM 100 is already on pve2");
    // node is found from the cluster after the migration
    let play = env.run(&task(100, "    update: true\n    cores: 3\n"));
    play.assert_ok();
    assert_eq!(env.api_get("/nodes/pve2/qemu/100/config")["cores"], json!(3));
}

#[test]
fn revert_drops_pending_changes() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    env.run(&task(100, "    update: true\n    cores: 8\n")).assert_ok();
    let play = env.run(&task(100, "    revert: cores\n"));
    play.assert_ok();
    assert_eq!(play.task("t").msg(), "Settings has reverted on VM web01 with vmid 100");
    assert_eq!(env.api_get("/nodes/pve1/qemu/100/config")["cores"], json!(2));
    let again = env.run(&task(100, "    revert: cores\n"));
    assert!(!again.task("t").changed);
}

#[test]
fn missing_vm_fails_clearly_for_power_states() {
    let env = Env::start();
    let play = env.run("- name: t\n  ferrox.proxmox.proxmox_kvm:\n    name: nosuch\n    state: started\n");
    assert_eq!(play.task("t").msg(), "VM with name = nosuch does not exist in cluster");
}

#[test]
fn delete_and_revert_on_a_running_vm_predict_the_pending_the_real_run_reads_back() {
    let env = Env::start();
    env.run_task("POST", "/nodes/pve1/qemu/100/status/start", &[]);
    env.run(&task(100, "    update: true\n    cores: 8\n    memory: 4096\n"))
        .assert_ok();
    let check = PlayOpts {
        check: true,
        ..Default::default()
    };
    // ide2 (a CD-ROM on IDE) cannot go while running; tags can.
    let delete = task(100, "    delete: ide2,tags\n");
    let dry = env.run_with(&delete, &check);
    let real = env.run(&delete);
    real.assert_ok();
    assert_eq!(
        real.task("t").result["pending"],
        json!({"cores": 8, "ide2": "(delete)", "memory": "4096"})
    );
    assert_eq!(
        dry.task("t").result["pending"],
        real.task("t").result["pending"],
        "check mode predicts what the real run reads back"
    );
    let revert = task(100, "    revert: cores\n");
    let dry = env.run_with(&revert, &check);
    let real = env.run(&revert);
    real.assert_ok();
    assert_eq!(
        real.task("t").result["pending"],
        json!({"ide2": "(delete)", "memory": "4096"})
    );
    assert_eq!(dry.task("t").result["pending"], real.task("t").result["pending"]);
}
