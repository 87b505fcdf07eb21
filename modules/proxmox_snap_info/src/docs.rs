//! The prose of the module's documentation (options are described in `lib.rs`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "List the snapshots of a QEMU VM or an LXC container, or return one of them.".into(),
        "Option- and result-compatible with C(community.proxmox.proxmox_snap_info).".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "RV(snapshots) is Proxmox VE's list as it returns it, ending with its C(current) entry (the VM as it is now, with its C(parent)); a snapshot a task is making or removing carries C(snapstate).".into(),
        "A name O(snapname) does not find is no failure: RV(snapshots) is empty and the message says so, as in community.proxmox.".into(),
        "Unlike community.proxmox, O(vmid) or O(hostname) is required; O(hostname) matches QEMU VMs only (a container is found by O(vmid)).".into(),
        "Requests made: one C(GET /cluster/resources) (by name through the run's name index, one C(GET .../status/current) instead) and one snapshot list.".into(),
        ferrox_run::name_index::doc_note("hostname"),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: List the snapshots of a VM
  ferrox.proxmox.proxmox_snap_info:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    vmid: 100
  register: snaps

- name: Fail unless the pre-upgrade snapshot exists
  ferrox.proxmox.proxmox_snap_info:
    hostname: web01
    snapname: pre-upgrade
  register: pre
  failed_when: pre.snapshot is not defined
"#;

pub(crate) const RETURN: &str = r#"
snapshot:
  description: The snapshot O(snapname) names (Proxmox VE's list entry).
  returned: when O(snapname) is given and the snapshot exists
  type: dict
  sample: {"name": "pre-upgrade", "description": "", "snaptime": 1767225600, "vmstate": 0, "parent": "nightly"}
snapshots:
  description: The snapshots, Proxmox VE's list entries, ending with C(current); empty when O(snapname) finds none.
  returned: when O(snapname) is not given, or finds nothing
  type: list
  elements: dict
  sample:
    - {"name": "pre-upgrade", "description": "", "snaptime": 1767225600, "vmstate": 0}
    - {"name": "current", "description": "You are here!", "parent": "pre-upgrade", "running": 1}
msg:
  description: Empty, or C(Snapshot 'NAME' not found).
  returned: always
  type: str
"#;
