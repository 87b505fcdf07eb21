//! Drop-in compatibility: the anchor playbooks written for community.proxmox 1.6 run
//! with only the collection prefix changed, and every task reports what 1.6 reports
//! (`failed`, `changed`, `msg`) — except where ferrox.proxmox deliberately does better,
//! listed here task by task with the reason.

use crate::anchor::support::{anchor_dir, shared_run, Anchor, Outcome, RunOpts};

/// The playbook's text without the tasks named in `skip`.
fn playbook_text(playbook: &str, skip: &[&str]) -> String {
    let mut text = std::fs::read_to_string(anchor_dir().join(playbook)).unwrap();
    for name in skip {
        let start = text
            .find(&format!("    - name: {name}\n"))
            .unwrap_or_else(|| panic!("no task {name:?} in {playbook}"));
        let end = text[start + 1..]
            .find("\n    - name: ")
            .map(|i| start + 2 + i)
            .unwrap_or(text.len());
        text.replace_range(start..end, "");
    }
    text
}

/// The playbook run with community.proxmox 1.6 (the anchor's run, shared with its own
/// checks) and, prefix changed and without the `skip` tasks, with ferrox.proxmox
/// against a fresh simulator of its own; returns (task, 1.6 outcome, ours) for every
/// task both ran. The skipped tasks fail in 1.6 without touching the cluster, so the
/// tasks after them see the same cluster in both runs.
fn both(playbook: &str, skip: &[&str]) -> Vec<(String, Outcome, Outcome)> {
    let theirs = shared_run(playbook);
    let anchor = Anchor::start();
    let ours_file = anchor.dir().join(format!("ferrox-{playbook}"));
    let text = playbook_text(playbook, skip);
    std::fs::write(&ours_file, text.replace("community.proxmox.", "ferrox.proxmox.")).unwrap();
    let ours = anchor.run_file(&ours_file, &RunOpts::default());
    theirs
        .results
        .iter()
        .filter(|t| !skip.contains(&t.name.as_str()))
        .map(|t| {
            let o = ours
                .results
                .iter()
                .find(|o| o.name == t.name && o.host == t.host)
                .unwrap_or_else(|| {
                    panic!(
                        "task {:?} did not run with ferrox.proxmox\n{}",
                        t.name,
                        ours.transcript()
                    )
                });
            (t.name.clone(), t.clone(), o.clone())
        })
        .collect()
}

/// Compares task by task; `better` lists the tasks where a difference is intended. A
/// message where 1.6 gave none (proxmox_vm_info) is not a difference.
fn assert_compatible(playbook: &str, skip: &[&str], better: &[(&str, &str)]) {
    let mut mismatches = Vec::new();
    for (name, theirs, ours) in both(playbook, skip) {
        let same_msg = theirs.msg() == ours.msg() || theirs.msg().is_empty();
        let same = theirs.failed == ours.failed && theirs.changed == ours.changed && same_msg;
        let intended = better.iter().find(|(n, _)| *n == name);
        match (same, intended) {
            (true, _) => {}
            (false, Some((_, why))) => eprintln!("{playbook} / {name}: differs on purpose ({why})\n  1.6:  failed={} changed={} msg={:?}\n  ours: failed={} changed={} msg={:?}", theirs.failed, theirs.changed, theirs.msg(), ours.failed, ours.changed, ours.msg()),
            (false, None) => mismatches.push(format!(
                "{name}:\n  1.6:  failed={} changed={} msg={:?}\n  ours: failed={} changed={} msg={:?}",
                theirs.failed, theirs.changed, theirs.msg(), ours.failed, ours.changed, ours.msg()
            )),
        }
    }
    assert!(
        mismatches.is_empty(),
        "{playbook}: tasks that differ from 1.6:\n{}",
        mismatches.join("\n")
    );
}

const FAILED_TASKS_AT_ONCE: &str =
    "a failed PVE task fails at once with its exit status and log, instead of waiting for a timeout";
const TOKEN_HINT: &str = "the API error names the token lacking the privilege";

#[test]
fn kvm_playbook_is_drop_in() {
    // paused/hibernated fail in 1.6 and work here: the VM would then be suspended and
    // every later task differ, so they are compared in kvm_states.rs instead.
    assert_compatible(
        "kvm.yml",
        &["paused (1.6 defect)", "hibernated (1.6 defect)"],
        &[
            (
                "update again",
                "update compares with the VM: nothing differs, nothing changes",
            ),
            (
                "clone again without newid (1.6 defect)",
                "without newid, the VM named like the clone is the clone: no second clone",
            ),
            (
                "absent second clone",
                "there is no second clone: the first was removed by the task before",
            ),
        ],
    );
}

#[test]
fn kvm_config_playbook_is_drop_in() {
    assert_compatible(
        "kvm_config.yml",
        &[],
        &[
            (
                "efidisk0 with unset sub-options (1.6 defect)",
                "unset efidisk0 sub-options are left out instead of sent as None",
            ),
            (
                "unsafe update of the nic (1.6 defect)",
                "the NIC already is as asked: it keeps its MAC instead of being re-created with a new one",
            ),
            (
                "update naming a disk the vm lacks (1.6 defect)",
                "update adds the missing disk instead of dropping it and then failing to read it back",
            ),
        ],
    );
}

#[test]
fn kvm_edges_playbook_is_drop_in() {
    assert_compatible(
        "kvm_edges.yml",
        &[],
        &[
            ("create named like a container", "name lookups consider QEMU VMs only"),
            ("ambiguous name", "the message lists the vmids that share the name"),
            ("update missing vm", "update: true creates a missing VM"),
            (
                "template of running vm",
                "the message names the fix (state: stopped or force: true)",
            ),
            (
                "template of running vm with force (1.6 defect)",
                "force shuts the VM down first, then converts it",
            ),
            ("start template fails as timeout (1.6 defect)", FAILED_TASKS_AT_ONCE),
            ("create with audit-only token", TOKEN_HINT),
            (
                "create with a bare nic (1.6 defect)",
                "mac and devices are read from the live config, so a NIC without options does not fail the create",
            ),
        ],
    );
}

#[test]
fn clone_playbook_is_drop_in() {
    assert_compatible(
        "clone.yml",
        &[],
        &[(
            "clone local vm to other node",
            "PVE refuses target for local disks: the clone is made on the source's node and migrated there",
        )],
    );
}

#[test]
fn running_playbook_is_drop_in() {
    assert_compatible(
        "running.yml",
        &[],
        &[(
            "update memory and description",
            "the message lists the changes left pending until a restart",
        )],
    );
}
