//! Every power state, `current`, `template` and `absent` from every power state a VM
//! can be found in: the actions and 1.6's messages, or the refusal.

use serde_json::{json, Value};

use super::power::{decide, not_found, AlreadyAbsent, Decision};
use crate::api::{Power, Vm};
use crate::guest_wait::wait_refusal;
use crate::observe::Now;
use crate::observe::PowerObserved;
use crate::plan::{Action, Plan, PowerCall};
use crate::task::testing::task;
use crate::task::State;

/// The power states the tables start from.
#[derive(Debug, Clone, Copy)]
enum Found {
    IsRunning,
    IsStopped,
    IsPaused,
    IsHibernated,
    IsTemplate,
    HaRunning,
    HaStopped,
    /// Running, its HA resource `ignored`: not managed, the entry still there.
    IgnoredRunning,
    IgnoredStopped,
    /// Running, HA-managed until the cluster was disarmed with mode `ignore`.
    DisarmedRunning,
    /// Running, locked by a backup.
    LockedRunning,
    /// Stopped, locked by a backup.
    LockedStopped,
}

fn now(found: Found) -> Now {
    // `ha`: `status/current`'s `ha.managed`; `hastate`: the listing's.
    let (status, qmp, lock, template, ha, hastate) = match found {
        Found::IsRunning => ("running", "running", None, false, false, None),
        Found::IsStopped => ("stopped", "stopped", None, false, false, None),
        Found::IsPaused => ("running", "paused", None, false, false, None),
        Found::IsHibernated => ("stopped", "stopped", Some("suspended"), false, false, None),
        Found::IsTemplate => ("stopped", "stopped", None, true, false, None),
        Found::HaRunning => ("running", "running", None, false, true, Some("started")),
        Found::HaStopped => ("stopped", "stopped", None, false, true, Some("stopped")),
        Found::IgnoredRunning => ("running", "running", None, false, false, Some("ignored")),
        Found::IgnoredStopped => ("stopped", "stopped", None, false, false, Some("ignored")),
        Found::DisarmedRunning => ("running", "running", None, false, false, Some("started")),
        Found::LockedRunning => ("running", "running", Some("backup"), false, false, None),
        Found::LockedStopped => ("stopped", "stopped", Some("backup"), false, false, None),
    };
    let power = Power {
        status: status.into(),
        qmpstatus: Some(qmp.into()),
        lock: lock.map(str::to_string),
        ha_managed: ha,
    };
    Now::of(&power, template).with_ha_resource(hastate.map(str::to_string))
}

const HA_REFUSED: &str = "deletion of VM 100 failed with exception: VM 100 is HA-managed, and PVE removes a VM with an HA resource only with purge: true (which also drops it from backup jobs and replication). Set purge: true, or remove the HA resource first (ha-manager remove vm:100). Nothing was changed";
const IGNORED_REFUSED: &str = "deletion of VM 100 failed with exception: VM 100 has an HA resource (state ignored); PVE does not manage it through HA now, but removes a VM with an HA resource only with purge: true (which also drops it from backup jobs and replication). Set purge: true, or remove the HA resource first (ha-manager remove vm:100). Nothing was changed";
const DISARMED_REFUSED: &str = "deletion of VM 100 failed with exception: VM 100 has an HA resource (state started); PVE does not manage it through HA now, but removes a VM with an HA resource only with purge: true (which also drops it from backup jobs and replication). Set purge: true, or remove the HA resource first (ha-manager remove vm:100). Nothing was changed";

fn observed(found: Found) -> PowerObserved {
    PowerObserved {
        vm: Vm {
            node: "pve1".into(),
            vmid: 100,
        },
        name: "web".into(),
        now: now(found),
        waiting: None,
    }
}

/// What a row expects.
#[derive(Debug)]
enum Want {
    /// Changed: the message, the actions (as the `actions` result lists them), the
    /// state after.
    Act(&'static str, &'static [&'static str], &'static str),
    /// Unchanged, with the status (`current`, or already there).
    Same(&'static str),
    /// Unchanged: already a template.
    Template(&'static str),
    /// Unchanged: a running VM left running by `absent` without `force`.
    LeftRunning(&'static str),
    /// Refused before any write.
    Fail(&'static str),
    /// Refused as locked, the refused action first.
    Locked(&'static str),
}

fn check(options: Value, state: State, found: Found, want: &Want) {
    let task = task(options.clone());
    let observed = observed(found);
    let got = decide(&task, state, &observed);
    let row = format!("{state:?} from {found:?} with {options}");
    match (got, want) {
        (Ok(Decision::Act { actions, msg, after }), Want::Act(w_msg, w_actions, w_after)) => {
            let plan = Plan::of(observed.vm.clone(), actions);
            assert_eq!(msg, *w_msg, "{row}");
            assert_eq!(plan.describe(), *w_actions, "{row}");
            assert_eq!(after, *w_after, "{row}");
        }
        (Ok(Decision::Report(msg) | Decision::AlreadyThere(msg)), Want::Same(w)) => assert_eq!(msg, *w, "{row}"),
        (Ok(Decision::AlreadyTemplate(msg)), Want::Template(w)) => assert_eq!(msg, *w, "{row}"),
        (Ok(Decision::LeftRunning(msg)), Want::LeftRunning(w)) => assert_eq!(msg, *w, "{row}"),
        (Err(f), Want::Fail(w)) => assert_eq!(f.msg, *w, "{row}"),
        (Err(f), Want::Locked(prefix)) => assert_eq!(f.msg, format!("{prefix}{LOCKED}"), "{row}"),
        (got, want) => panic!("{row}: got {got:?}, want {want:?}"),
    }
}

const LOCKED: &str = "VM is locked (backup): wait until the backup operation has finished and run the task again (root@pam can override with skiplock: true)";

#[test]
fn the_power_states_from_every_power_state() {
    use Found::*;
    use State::*;
    let plain = json!({"vmid": 100});
    let rows: &[(State, Found, Want)] = &[
        (Current, IsRunning, Want::Same("VM web with vmid = 100 is running")),
        (Current, IsStopped, Want::Same("VM web with vmid = 100 is stopped")),
        (Current, LockedRunning, Want::Same("VM web with vmid = 100 is running")),
        (Started, IsRunning, Want::Same("VM 100 is already running")),
        (Started, IsStopped, Want::Act("VM 100 started", &["start VM 100"], "running")),
        (Started, IsPaused, Want::Act("VM 100 started", &["resume VM 100"], "running")),
        (Started, IsHibernated, Want::Act("VM 100 started", &["resume VM 100"], "running")),
        (Started, HaStopped, Want::Act("VM 100 started", &["start VM 100"], "running")),
        (Started, LockedRunning, Want::Same("VM 100 is already running")),
        (Stopped, IsStopped, Want::Same("VM 100 is already stopped")),
        (Stopped, IsHibernated, Want::Same("VM 100 is already stopped")),
        (Stopped, IsRunning, Want::Act("VM 100 is shutting down", &["shutdown VM 100"], "stopped")),
        (Stopped, IsPaused, Want::Act("VM 100 is shutting down", &["shutdown VM 100"], "stopped")),
        (Stopped, HaRunning, Want::Act("VM 100 is shutting down", &["shutdown VM 100"], "stopped")),
        (Restarted, IsStopped, Want::Same("VM 100 is not running")),
        (Restarted, IsRunning, Want::Act("VM 100 is restarted", &["reboot VM 100"], "running")),
        (Paused, IsRunning, Want::Act("VM 100 is suspending", &["suspend VM 100"], "paused")),
        (Paused, IsPaused, Want::Same("VM 100 is already paused")),
        (Paused, IsStopped, Want::Same("VM 100 is not running")),
        (Hibernated, IsRunning, Want::Act("VM 100 is suspending", &["hibernate VM 100"], "hibernated")),
        (Hibernated, IsPaused, Want::Act("VM 100 is suspending", &["hibernate VM 100"], "hibernated")),
        (Hibernated, IsHibernated, Want::Same("VM 100 is not running")),
        (Hibernated, IsStopped, Want::Same("VM 100 is not running")),
        (Template, IsTemplate, Want::Template("VM 100 is already a template")),
        (Template, IsStopped, Want::Act("VM 100 is converting to template", &["convert VM 100 to a template"], "template")),
        (Template, IsRunning, Want::Fail("conversion of VM 100 to template failed with exception: you can't convert a VM to template if VM is running; stop it first (state: stopped) or use force: true")),
        (Absent, IsStopped, Want::Act("VM 100 removed", &["remove VM 100"], "absent")),
        (Absent, IsTemplate, Want::Act("VM 100 removed", &["remove VM 100"], "absent")),
        (Absent, IsRunning, Want::LeftRunning("VM 100 is running. Stop it before deletion or use force=true.")),
        (Absent, IsPaused, Want::LeftRunning("VM 100 is running. Stop it before deletion or use force=true.")),
        (Absent, IsHibernated, Want::Fail("deletion of VM 100 failed with exception: VM 100 is hibernated (locked 'suspended'); use force: true to wake it up and power it off first, or start it (state: started)")),
        (Absent, HaStopped, Want::Fail(HA_REFUSED)),
        (Absent, HaRunning, Want::Fail(HA_REFUSED)),
        (Absent, IgnoredStopped, Want::Fail(IGNORED_REFUSED)),
        (Absent, IgnoredRunning, Want::Fail(IGNORED_REFUSED)),
        (Absent, DisarmedRunning, Want::Fail(DISARMED_REFUSED)),
        // Unmanaged, the power calls are the plain ones (PVE routes them to qmstart/qmstop).
        (Started, IgnoredStopped, Want::Act("VM 100 started", &["start VM 100"], "running")),
        (Stopped, IgnoredRunning, Want::Act("VM 100 is shutting down", &["shutdown VM 100"], "stopped")),
    ];
    for (state, found, want) in rows {
        check(plain.clone(), *state, *found, want);
    }
}

#[test]
fn force_powers_off_resets_and_removes_what_runs() {
    use Found::*;
    use State::*;
    let force = json!({"vmid": 100, "force": true, "timeout": 20});
    let rows: &[(State, Found, Want)] = &[
        (
            Stopped,
            IsRunning,
            Want::Act(
                "VM 100 is shutting down",
                &["shut down VM 100 (power off after 20 s)"],
                "stopped",
            ),
        ),
        (
            Restarted,
            IsRunning,
            Want::Act("VM 100 is restarted", &["reset VM 100"], "running"),
        ),
        (Restarted, IsStopped, Want::Same("VM 100 is not running")),
        (
            Template,
            IsRunning,
            Want::Act(
                "VM 100 is converting to template",
                &[
                    "shut down VM 100 (power off after 20 s)",
                    "convert VM 100 to a template",
                ],
                "template",
            ),
        ),
        (
            Absent,
            IsRunning,
            Want::Act(
                "VM 100 removed",
                &["shut down VM 100 (power off after 20 s)", "remove VM 100"],
                "absent",
            ),
        ),
        (
            Absent,
            IsHibernated,
            Want::Act(
                "VM 100 removed",
                &[
                    "resume VM 100",
                    "shut down VM 100 (power off after 20 s)",
                    "remove VM 100",
                ],
                "absent",
            ),
        ),
        (Absent, HaRunning, Want::Fail(HA_REFUSED)),
        // Refused before the shutdown force would otherwise send first.
        (Absent, IgnoredRunning, Want::Fail(IGNORED_REFUSED)),
        (Absent, DisarmedRunning, Want::Fail(DISARMED_REFUSED)),
    ];
    for (state, found, want) in rows {
        check(force.clone(), *state, *found, want);
    }
    let purge = json!({"vmid": 100, "force": true, "purge": true, "timeout": 20});
    for found in [HaRunning, IgnoredRunning, DisarmedRunning] {
        check(
            purge.clone(),
            Absent,
            found,
            &Want::Act(
                "VM 100 removed",
                &["shut down VM 100 (power off after 20 s)", "remove VM 100"],
                "absent",
            ),
        );
    }
}

#[test]
fn a_locked_vm_is_refused_before_any_write_unless_skiplock() {
    use Found::*;
    use State::*;
    let plain = json!({"vmid": 100});
    let refusals: &[(State, Found, &str)] = &[
        (Started, LockedStopped, "Unable to start VM 100: "),
        (Stopped, LockedRunning, "Unable to stop VM 100: "),
        (Restarted, LockedRunning, "Unable to restart VM 100: "),
        (Paused, LockedRunning, "Unable to pause VM 100: "),
        (Hibernated, LockedRunning, "Unable to hibernate VM 100: "),
        (Template, LockedStopped, "Unable to convert to template VM 100: "),
        (Absent, LockedStopped, "Unable to remove VM 100: "),
    ];
    for (state, found, prefix) in refusals {
        check(plain.clone(), *state, *found, &Want::Locked(prefix));
    }
    // Nothing to do needs no lock; skiplock lets PVE change a locked VM.
    check(plain, Stopped, LockedStopped, &Want::Same("VM 100 is already stopped"));
    let skiplock = json!({"vmid": 100, "skiplock": true});
    check(
        skiplock,
        Stopped,
        LockedRunning,
        &Want::Act("VM 100 is shutting down", &["shutdown VM 100"], "stopped"),
    );
}

#[test]
fn removal_passes_purge_and_unreferenced_disks_to_pve() {
    let task = task(json!({"vmid": 100, "purge": true, "destroy_unreferenced_disks": true}));
    let Ok(Decision::Act { actions, .. }) = decide(&task, State::Absent, &observed(Found::HaStopped)) else {
        panic!("an HA-managed VM is removed with purge");
    };
    assert_eq!(
        actions,
        [Action::Destroy {
            purge: true,
            unreferenced_disks: true
        }]
    );
    let task = crate::task::testing::task(json!({"vmid": 100, "timeout": 45}));
    let Ok(Decision::Act { actions, .. }) = decide(&task, State::Stopped, &observed(Found::IsRunning)) else {
        panic!("a running VM is shut down");
    };
    assert_eq!(
        actions,
        [Action::Power(PowerCall::Shutdown {
            force: false,
            timeout: 45
        })]
    );
}

#[test]
fn current_names_an_unnamed_vm_so() {
    let task = task(json!({"vmid": 100}));
    let mut unnamed = observed(Found::IsStopped);
    unnamed.name = String::new();
    assert_eq!(
        decide(&task, State::Current, &unnamed).map_err(|f| f.msg),
        Ok(Decision::Report("VM (unnamed) with vmid = 100 is stopped".into()))
    );
}

#[test]
fn a_missing_vm_is_absent_already_and_fails_every_other_state() {
    let by_id = task(json!({"vmid": 100}));
    let by_name = task(json!({"name": "web"}));
    assert_eq!(
        not_found(&by_id, State::Absent).map_err(|f| f.msg),
        Ok(AlreadyAbsent {
            msg: "VM 100 is already absent".into(),
            vmid: Some(100)
        })
    );
    assert_eq!(
        not_found(&by_name, State::Absent).map_err(|f| f.msg),
        Ok(AlreadyAbsent {
            msg: "VM with name = web is already absent".into(),
            vmid: None
        })
    );
    for state in [State::Started, State::Stopped, State::Current, State::Template] {
        assert_eq!(
            not_found(&by_id, state).map_err(|f| f.msg),
            Err("VM with vmid 100 does not exist in cluster".into())
        );
        assert_eq!(
            not_found(&by_name, state).map_err(|f| f.msg),
            Err("VM with name = web does not exist in cluster".into())
        );
    }
}

#[test]
fn restarted_with_a_guest_wait_refuses_a_vm_that_is_not_running() {
    let waits = task(json!({"vmid": 100, "wait_for_agent": true}));
    let refused = wait_refusal(&waits, State::Restarted, 100, now(Found::IsStopped).running).map(|f| f.msg);
    assert_eq!(
        refused.as_deref(),
        Some("wait_for_agent: VM 100 is not running, so it is not restarted and no guest can answer; use state: started to start it and wait")
    );
    assert!(wait_refusal(&waits, State::Restarted, 100, now(Found::IsRunning).running).is_none());
    assert!(wait_refusal(&waits, State::Started, 100, now(Found::IsStopped).running).is_none());
    let no_wait = task(json!({"vmid": 100}));
    assert!(wait_refusal(&no_wait, State::Restarted, 100, now(Found::IsStopped).running).is_none());
}

#[test]
fn the_diff_says_paused_and_hibernated_for_what_pve_calls_running_and_stopped() {
    assert_eq!(now(Found::IsPaused).describe(), "paused");
    assert_eq!(now(Found::IsHibernated).describe(), "hibernated");
    assert_eq!(now(Found::IsRunning).describe(), "running");
    assert_eq!(now(Found::LockedStopped).describe(), "stopped");
}
