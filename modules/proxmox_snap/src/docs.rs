//! The prose of the module's documentation (options are described in `options.rs`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "Take, remove or roll back one snapshot of a QEMU VM.".into(),
        "Option-compatible with C(community.proxmox.proxmox_snap); see the notes for where it behaves better.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "Idempotent by name: V(present) changes nothing when a snapshot of that name exists, V(absent) nothing when none does. A rollback always changes the VM.".into(),
        "Check mode reports C(changed) exactly when a real run would change something (community.proxmox reported V(false) for a snapshot it would take or remove), the old snapshots O(retention) would remove as RV(removed), and whether a rollback would stop the running VM as RV(stopped), with a warning.".into(),
        "Each Proxmox VE task is waited on: a task that fails (C(VM is locked (backup)), C(snapshot feature is not available)) fails the module at once with Proxmox VE's exit status and the end of the task log, not after O(timeout) as a timeout. O(retention)'s removals run one at a time, oldest first, each waited on, so none runs into another's lock.".into(),
        "Refused before anything is written, with Proxmox VE's words: a name Proxmox VE does not take (reserved V(current) and V(pending), or not a letter followed by letters, digits, V(-) or V(_)), a locked VM, a template, a disk on a storage without snapshots (one storage listing of the node), a rollback to a snapshot that does not exist or is incomplete, a rollback Proxmox VE's ZFS storage refuses (a snapshot taken after the one rolled back to on a ZFS disk: the later snapshots are named, to be removed first), and a missing privilege (C(VM.Snapshot); a rollback C(VM.Snapshot) or C(VM.Snapshot.Rollback), with O(start) also C(VM.PowerMgmt)).".into(),
        "QEMU VMs only: a container fails with a message naming it. community.proxmox's O(unbind) (containers with mount points) has no effect here.".into(),
        "Unlike community.proxmox, O(vmid) or O(hostname) is required (community.proxmox reported success without doing anything), and a rollback to a snapshot that does not exist fails (as community.proxmox 2.0 does).".into(),
        "In a check-mode run the snapshot and its removals are part of the run's plan: a later task sees them in the VM's snapshot list, and a snapshot of a VM an earlier task only planned to create is planned on that VM.".into(),
        "Requests made: one C(GET /cluster/resources) (by name through the run's name index, one C(GET .../status/current) instead), the VM's config and snapshot list, for a rollback its status; to take a snapshot one storage listing of the node, the snapshot task, and with O(retention) one more snapshot list and one task per removal; to roll back to a snapshot that is not the newest, its config, one storage listing of the node and, with a disk on ZFS, the config of each later snapshot; each task's status is polled until it ends.".into(),
        ferrox_run::name_index::doc_note("hostname"),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: Snapshot the VM before upgrading it
  ferrox.proxmox.proxmox_snap:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    hostname: web01
    snapname: pre-upgrade
    description: Before the upgrade to Debian 13

- name: Take a nightly snapshot and keep the newest 7
  ferrox.proxmox.proxmox_snap:
    vmid: 100
    snapname: "nightly-{{ '%Y%m%d' | strftime }}"
    retention: 7
  register: snap

- name: Show what retention removed
  ansible.builtin.debug:
    msg: "{{ snap.removed }}"

- name: Roll back and start the VM again
  ferrox.proxmox.proxmox_snap:
    vmid: 100
    state: rollback
    snapname: pre-upgrade
    start: true

- name: Remove the snapshot
  ferrox.proxmox.proxmox_snap:
    vmid: 100
    state: absent
    snapname: pre-upgrade
"#;

pub(crate) const RETURN: &str = r#"
msg:
  description: What happened (community.proxmox's wording; in check mode C(would be created), C(would be removed), C(would be rolled back)).
  returned: always
  type: str
  sample: Snapshot pre-upgrade created
vmid:
  description: The VMID of the VM.
  returned: success
  type: int
  sample: 100
snapname:
  description: The snapshot's name.
  returned: success
  type: str
  sample: pre-upgrade
removed:
  description: The old snapshots O(retention) removed (in check mode, would remove), oldest first.
  returned: success
  type: list
  elements: str
  sample: ["nightly-20260101", "nightly-20260102"]
stopped:
  description: Whether the rollback stopped the running VM (in check mode, would stop it). Proxmox VE stops a running VM before rolling it back.
  returned: success, with O(state=rollback)
  type: bool
  sample: true
started:
  description: Whether the VM is started after the rollback (O(start), or a snapshot that holds the RAM).
  returned: success, with O(state=rollback)
  type: bool
  sample: false
"#;
