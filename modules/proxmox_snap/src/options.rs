//! The options of proxmox_snap, declared once.

use ferrox_ansible::options::read::Choice;
use ferrox_ansible::options::{Opt, Rules};
use ferrox_run::connection;

pub(crate) fn options() -> Vec<Opt> {
    let mut opts = connection::options();
    opts.extend([
        Opt::str("hostname").desc("The name of the VM. Used only when O(vmid) is not given; must match exactly one QEMU VM."),
        Opt::vmid("vmid").desc("The VMID of the VM. Takes precedence over O(hostname)."),
        Opt::str("state")
            .default(State::ALL[0].0)
            .choices(&State::names())
            .desc("V(present) takes the snapshot unless one of that name exists; V(absent) removes it if it exists; V(rollback) rolls the VM back to it.")
            .desc("A rollback stops a running VM first (Proxmox VE does so); RV(stopped) says whether it did, and check mode predicts it."),
        Opt::bool("force")
            .default(false)
            .desc("With O(state=absent): remove the snapshot from the configuration even if removing a disk's snapshot fails (Proxmox VE's C(force))."),
        Opt::bool("unbind")
            .default(false)
            .desc("community.proxmox's option for LXC containers with mount points. This module manages snapshots of QEMU VMs only, so it has no effect; kept so that tasks written for community.proxmox run unchanged."),
        Opt::bool("vmstate")
            .default(false)
            .desc("Include the VM's RAM in the snapshot. Proxmox VE saves it only from a running VM; for a stopped VM the option has no effect."),
        Opt::str("description").desc("The snapshot's description (shown in the web interface). Used when the snapshot is taken; an existing snapshot keeps its own."),
        Opt::int("timeout")
            .default(30)
            .at_least(1)
            .desc("How many seconds to wait for each Proxmox VE task (the snapshot, each removal, the rollback). A task that fails ends the wait at once with Proxmox VE's error."),
        Opt::str("snapname")
            .default("ansible_snap")
            .desc("The snapshot's name: a letter, then letters, digits, V(-) or V(_); at most 40 characters. V(current) and V(pending) are reserved by Proxmox VE."),
        Opt::int("retention")
            .default(0)
            .at_least(0)
            .desc("With O(state=present), after a snapshot is taken: remove the oldest snapshots until at most this many are left (the new one counts). V(0) keeps all. Each removal is waited for before the next; RV(removed) lists them.")
            .desc("Nothing is removed when no snapshot is taken (one of that name exists)."),
        Opt::bool("start")
            .default(false)
            .desc("With O(state=rollback): start the VM after the rollback (Proxmox VE's C(start); needs C(VM.PowerMgmt)). Proxmox VE starts it with a task of its own once the rollback ends; the module waits for that task too, and a start that fails fails the module. A snapshot with RAM starts the VM anyway, within the rollback.")
            .desc("Not in community.proxmox."),
    ]);
    opts
}

pub(crate) fn rules() -> Rules {
    Rules::default()
        .required_one_of(&["hostname", "vmid"])
        .required_if("unbind", true, &["api_password"])
        .merge(connection::rules())
}

/// What the task asks of the snapshot (`state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Present,
    Absent,
    Rollback,
}

impl Choice for State {
    const ALL: &'static [(&'static str, State)] = &[
        ("present", State::Present),
        ("absent", State::Absent),
        ("rollback", State::Rollback),
    ];
}
