//! `delete` and `revert` as one flow: the keys dropped, skipped or refused, 1.6's
//! messages, the diff, and what stays pending.

use serde_json::{json, Map, Value};

use super::config_keys::{decide, pending_after, reads_back, Decision, KeysWrite};
use crate::api::Vm;
use crate::observe::KeysObserved;
use crate::plan::Action;
use crate::task::KeyEdit;

fn keys(list: &[&str]) -> Vec<String> {
    list.iter().map(|k| k.to_string()).collect()
}

fn map(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// VM 100 `web` on pve1 as the listing shows it, with its config (`delete`) or pending
/// values (`revert`).
fn observed(found: Value, running: bool, lock: Option<&str>) -> KeysObserved {
    KeysObserved {
        vm: Vm {
            node: "pve1".into(),
            vmid: 100,
        },
        name: "web".into(),
        lock: lock.map(str::to_string),
        running,
        found: map(found),
    }
}

/// What a row expects: the message, the action's keys, the diff's before, and the
/// deletions predicted pending; or the refusal.
enum Want {
    Same(&'static str),
    Act(&'static str, &'static [&'static str], Value, Value),
    Fail(&'static str),
}

fn check(edit: KeyEdit, wanted: &[&str], skiplock: bool, observed: &KeysObserved, want: Want) {
    let got = decide(edit, &keys(wanted), skiplock, observed);
    let row = format!("{edit:?} {wanted:?} on {:?}", observed.found);
    match (got, want) {
        (Ok(Decision::Unchanged(msg)), Want::Same(w)) => assert_eq!(msg, w, "{row}"),
        (Ok(Decision::Act(write)), Want::Act(w_msg, w_keys, w_before, w_predicted)) => {
            let KeysWrite {
                action,
                msg,
                diff,
                keys: dropped,
                predicted,
            } = *write;
            assert_eq!(msg, w_msg, "{row}");
            assert_eq!(dropped, keys(w_keys), "{row}");
            let w_action = match edit {
                KeyEdit::Delete => Action::DeleteKeys(keys(w_keys)),
                KeyEdit::Revert => Action::RevertKeys(keys(w_keys)),
            };
            assert_eq!(action, w_action, "{row}");
            assert_eq!(Value::Object(diff.before), w_before, "{row}");
            assert!(diff.after.is_empty(), "{row}");
            assert_eq!(Value::Object(predicted), w_predicted, "{row}");
        }
        (Err(f), Want::Fail(w)) => assert_eq!(f.msg, w, "{row}"),
        (got, _) => panic!("{row}: unexpected {got:?}"),
    }
}

#[test]
fn delete_drops_the_keys_that_are_set_and_skips_the_rest() {
    let config = json!({"ciuser": "admin", "tags": "a;b", "memory": 2048, "hotplug": "network,disk,usb"});
    let stopped = observed(config.clone(), false, None);
    check(
        KeyEdit::Delete,
        &["ciuser", "sshkeys"],
        false,
        &stopped,
        Want::Act(
            "Settings has deleted on VM web with vmid 100",
            &["ciuser"],
            json!({"ciuser": "admin"}),
            json!({}),
        ),
    );
    check(
        KeyEdit::Delete,
        &["sshkeys", "ipconfig0"],
        false,
        &stopped,
        Want::Same("Settings sshkeys, ipconfig0 are not set on VM web with vmid 100"),
    );
    // A number is shown as PVE's text.
    check(
        KeyEdit::Delete,
        &["memory"],
        false,
        &stopped,
        Want::Act(
            "Settings has deleted on VM web with vmid 100",
            &["memory"],
            json!({"memory": "2048"}),
            json!({}),
        ),
    );
}

#[test]
fn delete_on_a_running_vm_predicts_what_its_hotplug_keeps_pending() {
    let config = json!({"ciuser": "admin", "memory": 2048, "net1": "virtio=AA:BB:CC:DD:EE:FF,bridge=vmbr0", "hotplug": "network,disk,usb"});
    let running = observed(config, true, None);
    check(
        KeyEdit::Delete,
        &["memory", "net1"],
        false,
        &running,
        Want::Act(
            "Settings has deleted on VM web with vmid 100",
            &["memory", "net1"],
            json!({"memory": "2048", "net1": "virtio=AA:BB:CC:DD:EE:FF,bridge=vmbr0"}),
            json!({"memory": "(delete)"}),
        ),
    );
}

#[test]
fn revert_drops_the_pending_changes_named_and_skips_the_rest() {
    let pending = observed(json!({"memory": "4096", "cores": "4"}), true, None);
    check(
        KeyEdit::Revert,
        &["memory", "balloon"],
        false,
        &pending,
        Want::Act(
            "Settings has reverted on VM web with vmid 100",
            &["memory"],
            json!({"memory": "4096"}),
            json!({}),
        ),
    );
    check(
        KeyEdit::Revert,
        &["balloon"],
        false,
        &pending,
        Want::Same("No pending changes of balloon on VM web with vmid 100"),
    );
}

#[test]
fn a_locked_vm_is_refused_only_when_there_is_something_to_drop() {
    let locked = observed(json!({"ciuser": "admin"}), false, Some("backup"));
    check(
        KeyEdit::Delete,
        &["ciuser"],
        false,
        &locked,
        Want::Fail("Unable to delete settings on VM web with vmid 100: VM is locked (backup): wait until the backup operation has finished and run the task again (root@pam can override with skiplock: true)"),
    );
    check(
        KeyEdit::Revert,
        &["ciuser"],
        false,
        &locked,
        Want::Fail("Unable to revert settings on VM web with vmid 100: VM is locked (backup): wait until the backup operation has finished and run the task again (root@pam can override with skiplock: true)"),
    );
    check(
        KeyEdit::Delete,
        &["sshkeys"],
        false,
        &locked,
        Want::Same("Settings sshkeys are not set on VM web with vmid 100"),
    );
    check(
        KeyEdit::Delete,
        &["ciuser"],
        true,
        &locked,
        Want::Act(
            "Settings has deleted on VM web with vmid 100",
            &["ciuser"],
            json!({"ciuser": "admin"}),
            json!({}),
        ),
    );
}

#[test]
fn what_stays_pending_is_read_back_or_predicted() {
    // (edit, running, check mode) -> read back?
    let rows = [
        (KeyEdit::Delete, false, false, false),
        (KeyEdit::Delete, false, true, false),
        (KeyEdit::Delete, true, false, true),
        (KeyEdit::Delete, true, true, true),
        (KeyEdit::Revert, false, false, true),
        (KeyEdit::Revert, true, false, true),
        (KeyEdit::Revert, true, true, false),
    ];
    for (edit, running, check_mode, reads) in rows {
        assert_eq!(
            reads_back(edit, running, check_mode),
            reads,
            "{edit:?} {running} {check_mode}"
        );
    }
    let config = observed(json!({"memory": 2048, "cores": 2}), true, None);
    let dropped = keys(&["memory", "cores"]);
    // Check mode of delete: what was pending already, the predictions, without the
    // pending values of the deleted keys (their deletion replaces them).
    let already = map(json!({"sockets": "2", "cores": "4", "memory": "(delete)"}));
    let predicted = map(json!({"memory": "(delete)"}));
    let got = pending_after(
        KeyEdit::Delete,
        &dropped,
        predicted.clone(),
        &config,
        Some(already),
        true,
    );
    assert_eq!(Value::Object(got), json!({"memory": "(delete)", "sockets": "2"}));
    // A real run reports what it read back.
    let read = map(json!({"memory": "(delete)"}));
    let got = pending_after(
        KeyEdit::Delete,
        &dropped,
        predicted.clone(),
        &config,
        Some(read.clone()),
        false,
    );
    assert_eq!(got, read);
    // A stopped VM keeps nothing pending.
    let got = pending_after(KeyEdit::Delete, &dropped, Map::new(), &config, None, false);
    assert!(got.is_empty());
    // Check mode of revert: the pending changes the task leaves alone.
    let pending = observed(json!({"memory": "4096", "cores": "4"}), true, None);
    let got = pending_after(KeyEdit::Revert, &keys(&["memory"]), Map::new(), &pending, None, true);
    assert_eq!(Value::Object(got), json!({"cores": "4"}));
}
