//! `present` on an existing VM: the warnings of options that apply only to a new VM;
//! without `update`, the VM left alone with what differs named; with `update: true`: up to date, updated (keys, pool,
//! password rotation, reboot for pending; disks and NICs in place, with or without
//! `update_unsafe`), cloud-init changes for the guest, refused when locked; and the
//! update's message with what stays pending.

use ferrox_cluster::tags::TagCase;
use ferrox_pve_rules::cloudinit::DriveState;
use serde_json::{json, Map, Value};

use ferrox_run::vm_task::{lock_refusal, LockWording};

use super::update::{
    decide, ha_warning, held_lock, left_alone, lock_prefix, node_warning, predicted_pending, without_drive_warning,
    Decision,
};
use crate::api::Vm;
use crate::converge;
use crate::observe::reads::reads_ha_state;
use crate::observe::UpdateObserved;
use crate::plan::{Action, Plan};
use crate::report::update::{updated, Updated};
use crate::task::testing::task;
use crate::task::KvmTask;

fn map(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// VM 100 `web` on pve1 with `config`, listed in `pool`.
fn observed(config: Value, running: bool, pool: Option<&str>, cloud_init: Option<DriveState>) -> UpdateObserved {
    UpdateObserved {
        vm: Vm {
            node: "pve1".into(),
            vmid: 100,
        },
        name: "web".into(),
        config: map(config),
        running,
        pool: pool.map(str::to_string),
        cloud_init,
    }
}

/// The decision, and the driver's refusal of a locked VM when it writes.
fn decided(task: &KvmTask, observed: &UpdateObserved) -> Result<Decision, String> {
    let changes = converge::changes(&observed.config, &task.config, 100, &TagCase::known(false))?;
    let up_to_date = "VM web with vmid 100 is up to date".to_string();
    let decision = decide(task, observed, task.config.clone(), changes, up_to_date).map_err(|f| f.msg)?;
    let rebooting = match &decision {
        Decision::Update(_) => false,
        Decision::RebootForGuest { .. } => true,
        _ => return Ok(decision),
    };
    let prefix = lock_prefix(rebooting, &observed.name, observed.vm.vmid);
    let wording = LockWording::Action { prefix: &prefix };
    match lock_refusal(100, held_lock(&observed.config), task.skiplock, wording) {
        Some(refused) => Err(refused.msg),
        None => Ok(decision),
    }
}

/// The update's actions as the `actions` result lists them, its `changes` and diff.
fn update_of(task: &KvmTask, observed: &UpdateObserved) -> (Vec<String>, Vec<String>, Value, Value) {
    match decided(task, observed) {
        Ok(Decision::Update(u)) => {
            let plan = Plan::of(observed.vm.clone(), u.actions);
            (
                plan.describe(),
                u.keys,
                Value::Object(u.diff.before),
                Value::Object(u.diff.after),
            )
        }
        other => panic!("an update, got {other:?}"),
    }
}

const CONFIG: &str = r#"{"memory": "2048", "cores": 2, "digest": "d1", "ciuser": "admin", "ide2": "local-lvm:vm-100-cloudinit,media=cdrom"}"#;

fn config() -> Value {
    serde_json::from_str(CONFIG).expect("a JSON object")
}

#[test]
fn nothing_to_write_is_up_to_date_even_when_locked() {
    let task = task(json!({"vmid": 100, "update": true, "memory": 2048, "cores": 2}));
    let stopped = observed(config(), false, None, None);
    assert_eq!(
        decided(&task, &stopped),
        Ok(Decision::UpToDate("VM web with vmid 100 is up to date".into()))
    );
    let mut locked = config();
    locked["lock"] = json!("backup");
    let locked = observed(locked, false, None, None);
    assert_eq!(
        decided(&task, &locked),
        Ok(Decision::UpToDate("VM web with vmid 100 is up to date".into()))
    );
}

#[test]
fn the_keys_that_differ_are_written_under_the_digest_read() {
    let task = task(json!({"vmid": 100, "update": true, "memory": 4096, "cores": 2}));
    let vm = observed(config(), false, None, None);
    let (actions, keys, before, after) = update_of(&task, &vm);
    assert_eq!(actions, ["update VM 100: set memory"]);
    assert_eq!(keys, ["memory"]);
    assert_eq!(before, json!({"memory": "2048"}));
    assert_eq!(after, json!({"memory": "4096"}));
    let Ok(Decision::Update(u)) = decided(&task, &vm) else {
        panic!("an update");
    };
    let Action::Converge { digest, recompute, .. } = &u.actions[0] else {
        panic!("a config write first");
    };
    assert_eq!((digest.as_deref(), *recompute), (Some("d1"), false));
    // The task's digest wins over the one read.
    let pinned = crate::task::testing::task(json!({"vmid": 100, "update": true, "memory": 4096, "digest": "d0"}));
    let Ok(Decision::Update(u)) = decided(&pinned, &vm) else {
        panic!("an update");
    };
    assert!(matches!(&u.actions[0], Action::Converge { digest: Some(d), .. } if d == "d0"));
}

#[test]
fn a_pool_the_vm_is_not_listed_in_is_moved_to() {
    let rows = [
        (
            Some("old"),
            vec!["move VM 100 from pool old to pool new"],
            json!({"pool": "old"}),
        ),
        (None, vec!["add VM 100 to pool new"], json!({})),
    ];
    let task = task(json!({"vmid": 100, "update": true, "pool": "new", "memory": 2048}));
    for (listed, want_actions, want_before) in rows {
        let vm = observed(config(), false, listed, None);
        let (actions, keys, before, after) = update_of(&task, &vm);
        assert_eq!(actions, want_actions);
        assert_eq!(keys, ["pool"]);
        assert_eq!(before, want_before);
        assert_eq!(after, json!({"pool": "new"}));
    }
    let in_pool = observed(config(), false, Some("new"), None);
    assert!(matches!(decided(&task, &in_pool), Ok(Decision::UpToDate(_))));
}

#[test]
fn a_locked_vm_is_refused_before_any_write_unless_skiplock() {
    let mut locked = config();
    locked["lock"] = json!("migrate");
    let locked = observed(locked, true, None, None);
    let task = task(json!({"vmid": 100, "update": true, "memory": 4096}));
    assert_eq!(
        decided(&task, &locked),
        Err("Unable to update vm web with vmid 100: VM is locked (migrate): wait until the migrate operation has finished and run the task again (root@pam can override with skiplock: true)".into())
    );
    let skiplock = crate::task::testing::task(json!({"vmid": 100, "update": true, "memory": 4096, "skiplock": true}));
    assert!(matches!(decided(&skiplock, &locked), Ok(Decision::Update(_))));
}

#[test]
fn apply_pending_reboot_adds_the_reboot_for_what_stays_pending() {
    let task = task(json!({"vmid": 100, "update": true, "memory": 4096, "apply_pending": "reboot"}));
    let vm = observed(config(), true, None, None);
    let (actions, ..) = update_of(&task, &vm);
    assert_eq!(
        actions,
        ["update VM 100: set memory", "reboot VM 100 if changes are pending"]
    );
    let Ok(Decision::Update(u)) = decided(&task, &vm) else {
        panic!("an update");
    };
    assert_eq!(u.actions[1], Action::RebootIfPending { cloud_init: false });
    assert!(u.reboot);
}

#[test]
fn update_password_always_sends_the_password_pve_never_shows() {
    let mut with_password = config();
    with_password["cipassword"] = json!("**********");
    let vm = observed(with_password, false, None, None);
    let always = task(json!({"vmid": 100, "update": true, "cipassword": "s3cret", "update_password": "always"}));
    let (actions, keys, before, after) = update_of(&always, &vm);
    assert_eq!(actions, ["update VM 100: set cipassword"]);
    assert_eq!(keys, ["cipassword"]);
    assert_eq!(before, json!({"cipassword": "**********"}));
    assert_eq!(after, json!({"cipassword": "s3cret"}));
    let on_create = crate::task::testing::task(
        json!({"vmid": 100, "update": true, "cipassword": "s3cret", "update_password": "on_create"}),
    );
    assert!(matches!(decided(&on_create, &vm), Ok(Decision::UpToDate(_))));
}

fn drive_lacking(keys: Value) -> DriveState {
    DriveState {
        waiting: map(keys),
        in_drive: Map::new(),
    }
}

#[test]
fn cloud_init_changes_the_drive_lacks_are_listed_or_brought_by_a_reboot() {
    let vm = observed(config(), true, None, Some(drive_lacking(json!({"ciuser": "admin"}))));
    let keep = task(json!({"vmid": 100, "update": true, "ciuser": "admin"}));
    assert_eq!(
        decided(&keep, &vm),
        Ok(Decision::NotInGuest {
            msg: "VM web with vmid 100 is up to date; not yet in the guest: ciuser (cloud-init reads them from its drive, which PVE rebuilds when the VM starts: restart the VM with state: restarted, or use apply_pending: reboot)".into(),
            waiting: map(json!({"ciuser": "admin"})),
        })
    );
    let reboot = task(json!({"vmid": 100, "update": true, "ciuser": "admin", "apply_pending": "reboot"}));
    let Ok(Decision::RebootForGuest { msg, diff, actions }) = decided(&reboot, &vm) else {
        panic!("a reboot for the guest");
    };
    assert_eq!(
        msg,
        "VM web with vmid 100 rebooted to bring its cloud-init changes to the guest: ciuser"
    );
    assert_eq!(actions, [Action::Power(crate::plan::PowerCall::Reboot)]);
    assert_eq!(Value::Object(diff.before), json!({"cloud-init drive": "lacks ciuser"}));
    assert_eq!(
        Value::Object(diff.after),
        json!({"cloud-init drive": "rebuilt at the reboot"})
    );
    let mut locked = config();
    locked["lock"] = json!("backup");
    let locked = observed(locked, true, None, Some(drive_lacking(json!({"ciuser": "admin"}))));
    assert_eq!(
        decided(&reboot, &locked),
        Err("Unable to reboot VM 100: VM is locked (backup): wait until the backup operation has finished and run the task again (root@pam can override with skiplock: true)".into())
    );
}

#[test]
fn a_cloud_init_key_written_to_a_running_vm_is_not_in_the_guest_yet() {
    let vm = observed(config(), true, None, Some(drive_lacking(json!({}))));
    let task = task(json!({"vmid": 100, "update": true, "ciuser": "ops", "apply_pending": "reboot"}));
    let Ok(Decision::Update(u)) = decided(&task, &vm) else {
        panic!("an update");
    };
    assert_eq!(u.not_in_guest.keys().collect::<Vec<_>>(), ["ciuser"]);
    assert_eq!(u.actions[1], Action::RebootIfPending { cloud_init: true });
}

#[test]
fn cloud_init_keys_without_a_drive_are_warned_of() {
    let task = task(json!({"vmid": 100, "ciuser": "ops", "memory": 1024}));
    assert_eq!(
        without_drive_warning("VM 100", &task.config, &map(json!({"memory": "512"}))).as_deref(),
        Some("VM 100 has no cloud-init drive, so ciuser reach no guest: add one (for example ide: {ide2: 'local-lvm:cloudinit'}) or leave the cloud-init options out")
    );
    assert_eq!(without_drive_warning("VM 100", &task.config, &map(config())), None);
    let no_cloud_init = crate::task::testing::task(json!({"vmid": 100, "memory": 1024}));
    assert_eq!(
        without_drive_warning("VM 100", &no_cloud_init.config, &Map::new()),
        None
    );
}

#[test]
fn check_mode_predicts_pending_changes_and_keeps_those_already_pending() {
    let task = task(json!({"vmid": 100, "update": true, "memory": 4096, "cores": 4}));
    let current = map(json!({"memory": "2048", "cores": "2", "hotplug": "network,disk,usb"}));
    let changes = converge::changes(&current, &task.config, 100, &TagCase::known(false)).unwrap_or_default();
    let already = map(json!({"sockets": "2", "memory": "3072"}));
    let predicted = predicted_pending(&changes, &current, already);
    assert_eq!(
        Value::Object(predicted),
        json!({"cores": "4", "memory": "4096", "sockets": "2"})
    );
}

fn outcome(rebooted: bool, pending: Value, not_in_guest: Value) -> Updated {
    Updated {
        name: "web".into(),
        vmid: 100,
        keys: vec!["memory".into()],
        actions: vec!["update VM 100: set memory".into()],
        diff: ferrox_ansible::diff::Diff::new("VM 100"),
        rebooted_for_pending: rebooted,
        pending: map(pending),
        not_in_guest: map(not_in_guest),
    }
}

#[test]
fn the_update_message_says_what_stays_pending_or_what_a_reboot_applied() {
    let clause = "not yet in the guest: ciuser (cloud-init reads them from its drive, which PVE rebuilds when the VM starts: restart the VM with state: restarted, or use apply_pending: reboot)";
    let rows = [
        (outcome(false, json!({}), json!({})), "VM web with vmid 100 updated".to_string(), json!({})),
        (
            outcome(false, json!({"memory": "4096"}), json!({})),
            "VM web with vmid 100 updated; pending until the VM restarts: memory (restart it, or use apply_pending: reboot)".to_string(),
            json!({"memory": "4096"}),
        ),
        (
            outcome(false, json!({}), json!({"ciuser": "ops"})),
            format!("VM web with vmid 100 updated; {clause}"),
            json!({"ciuser": "ops"}),
        ),
        (
            outcome(true, json!({"memory": "4096"}), json!({"ciuser": "ops"})),
            "VM web with vmid 100 updated; rebooted to apply ciuser, memory".to_string(),
            json!({}),
        ),
    ];
    for (u, msg, pending) in rows {
        let (out, _) = updated(u);
        assert_eq!(out.get("msg"), Some(&json!(msg)));
        assert_eq!(out.get("pending"), Some(&pending));
        assert_eq!(out.get("changed"), Some(&json!(true)));
        assert_eq!(out.get("changes"), Some(&json!(["memory"])));
    }
}

#[test]
fn update_unsafe_changes_nothing_disks_grow_in_place_and_nics_keep_their_macs() {
    let current = json!({
        "digest": "d1",
        "scsi0": "local-lvm:vm-100-disk-0,size=10G",
        "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0",
    });
    let vm = observed(current, false, None, None);
    let options = json!({
        "vmid": 100,
        "update": true,
        "scsi": {"scsi0": "local-lvm:20"},
        "net": {"net0": "virtio,bridge=vmbr1"},
    });
    let mut with_unsafe = options.clone();
    with_unsafe["update_unsafe"] = json!(true);
    let without = task(options);
    let safe = update_of(&without, &vm);
    // 1.6 drops disks and NICs from an update unless `update_unsafe`, then recreates
    // them; here they always change in place, so the flag changes no decision.
    assert_eq!(update_of(&task(with_unsafe), &vm), safe);
    let (actions, keys, before, after) = safe;
    assert_eq!(actions, ["update VM 100: set net0; grow scsi0 from 10G to 20G"]);
    assert_eq!(keys, ["net0", "scsi0"]);
    assert_eq!(
        before,
        json!({"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0", "scsi0 size": "10G"})
    );
    assert_eq!(
        after,
        json!({"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr1", "scsi0 size": "20G"})
    );
    // What is sent: the NIC with its MAC, and the disk grown on its own volume.
    let Ok(Decision::Update(u)) = decided(&without, &vm) else {
        panic!("an update");
    };
    let Action::Converge { changes, .. } = &u.actions[0] else {
        panic!("a config write first");
    };
    assert_eq!(
        changes.set.get("net0").map(String::as_str),
        Some("virtio=BC:24:11:00:00:01,bridge=vmbr1")
    );
    assert!(!changes.set.contains_key("scsi0"), "the disk is not re-declared");
    assert_eq!(
        changes
            .grow
            .iter()
            .map(|g| (g.key.as_str(), g.to.as_str()))
            .collect::<Vec<_>>(),
        [("scsi0", "20G")]
    );
}

fn vm() -> Vm {
    Vm {
        node: "pve1".into(),
        vmid: 100,
    }
}

#[test]
fn a_node_other_than_the_vms_is_warned_of() {
    let elsewhere = task(json!({"vmid": 100, "node": "pve2"}));
    assert_eq!(
        node_warning(&elsewhere, &vm()).as_deref(),
        Some("VM 100 is on node pve1, not pve2: node only says where to create a VM (use migrate: true to move it)")
    );
    assert_eq!(node_warning(&task(json!({"vmid": 100, "node": "pve1"})), &vm()), None);
    assert_eq!(node_warning(&task(json!({"vmid": 100})), &vm()), None);
}

#[test]
fn ha_managed_on_a_vm_that_is_not_is_warned_of_and_read_only_then() {
    let ha = task(json!({"vmid": 100, "ha_managed": true}));
    assert!(reads_ha_state(&ha));
    assert_eq!(
        ha_warning(&ha, &vm(), false, None).as_deref(),
        Some("VM 100 exists and is not HA-managed: ha_managed applies when a VM is created. Add it to HA with ha-manager add vm:100 (or POST /cluster/ha/resources)")
    );
    assert_eq!(ha_warning(&ha, &vm(), true, Some("started")), None);
    // An HA resource entry PVE does not manage: adding it again would be refused.
    assert_eq!(
        ha_warning(&ha, &vm(), false, Some("ignored")).as_deref(),
        Some("VM 100 exists and its HA resource is in state ignored, so PVE does not manage it: ha_managed applies when a VM is created. Set the resource's state with ha-manager set vm:100 --state started")
    );
    assert_eq!(
        ha_warning(&ha, &vm(), false, Some("started")).as_deref(),
        Some("VM 100 exists and has an HA resource (state started) that PVE does not manage now, as the HA stack is disarmed with mode ignore: ha_managed applies when a VM is created. Re-arm the HA stack with ha-manager crm-command arm-ha")
    );
    let plain = task(json!({"vmid": 100}));
    assert!(!reads_ha_state(&plain));
    assert_eq!(ha_warning(&plain, &vm(), false, Some("ignored")), None);
}

#[test]
fn without_update_the_vm_is_left_alone_and_what_differs_is_named() {
    let with_pool = task(json!({"vmid": 100, "pool": "prod"}));
    let plain = task(json!({"vmid": 100}));
    let other_pool = Some("dev".to_string());
    let same_pool = Some("prod".to_string());
    let msg = "VM with vmid <100> already exists";
    let differ_in = |keys: &str| {
        vec![format!(
            "VM 100 differs from the task in: {keys}. Nothing was changed: add update: true to converge it."
        )]
    };
    let rows = [
        (&plain, None, Ok(vec![]), vec![]),
        (
            &plain,
            None,
            Ok(vec!["cores".to_string(), "memory".to_string()]),
            differ_in("cores, memory"),
        ),
        (
            &with_pool,
            other_pool.as_ref(),
            Ok(vec!["memory".to_string()]),
            differ_in("memory, pool"),
        ),
        (&with_pool, None, Ok(vec![]), differ_in("pool")),
        (&with_pool, same_pool.as_ref(), Ok(vec![]), vec![]),
        (
            &plain,
            None,
            Err("scsi0: shrinking is refused".to_string()),
            vec!["VM 100 differs from the task: scsi0: shrinking is refused".to_string()],
        ),
    ];
    for (task, listed_pool, differ, warnings) in rows {
        assert_eq!(
            left_alone(task, &vm(), listed_pool, differ.clone()),
            (msg.to_string(), warnings),
            "{differ:?} in {listed_pool:?}"
        );
    }
}
