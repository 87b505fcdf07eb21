//! The prose of the module's documentation (options are described in `options.rs`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "Create, converge, grow, move, detach or delete one disk (or CD-ROM drive, EFI vars disk, TPM state) of a QEMU VM.".into(),
        "Option-compatible with C(community.proxmox.proxmox_disk); see the notes for where it behaves better.".into(),
        "Supports check mode and diff mode for every state: the plan is computed from the VM's live configuration, and a real run executes exactly that plan.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "O(state=present) converges: options are compared with the disk's current options after normalising (V(on) = V(1), V(10) = V(10.0), V(32G) = V(32768M), defaults), only what differs is written, and options the task does not mention are kept (community.proxmox 1.6 removed them).".into(),
        "Nothing deletes a volume except O(state=absent). O(create=forced), O(state=detached) and O(state=moved) without O(delete_moved) keep the old volume as an C(unusedN) entry and return its key as RV(unused).".into(),
        "Disks never shrink: a smaller O(size) fails with the current size in the message.".into(),
        "Every configuration write carries the config C(digest) read for the plan, so a concurrent change makes the task fail instead of being overwritten; rerun it to converge.".into(),
        "A Proxmox VE task that ends with warnings counts as success; the warnings are returned.".into(),
        "Requests made: one C(GET /cluster/resources) (by name through the run's name index, one C(GET .../status/current) instead), one config read (two for a move to another VM), and on change the write(s), the task polls, and one config read for the result.".into(),
        ferrox_run::name_index::doc_note("name"),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: Create a 32 GiB disk on local-lvm (or converge its options)
  ferrox.proxmox.proxmox_disk:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    vmid: 100
    disk: scsi1
    storage: local-lvm
    size: 32
    discard: "on"
    iothread: true
    ssd: true

- name: Grow the disk to 64 GiB (no change when it already is)
  ferrox.proxmox.proxmox_disk:
    vmid: 100
    disk: scsi1
    state: resized
    size: 64G

- name: Insert an ISO image
  ferrox.proxmox.proxmox_disk:
    name: web01
    disk: ide2
    media: cdrom
    iso_image: isos:iso/debian-13-netinst.iso

- name: Eject it
  ferrox.proxmox.proxmox_disk:
    name: web01
    disk: ide2
    media: cdrom
    iso_image: none

- name: Move the disk to another storage, deleting the source after the copy
  ferrox.proxmox.proxmox_disk:
    vmid: 100
    disk: scsi1
    state: moved
    target_storage: vmdata
    delete_moved: true

- name: Import a cloud image as the boot disk
  ferrox.proxmox.proxmox_disk:
    vmid: 101
    disk: scsi0
    storage: local-lvm
    import_from: local:import/debian-13-genericcloud-amd64.qcow2

- name: Detach a disk, keeping its volume as unusedN
  ferrox.proxmox.proxmox_disk:
    vmid: 100
    disk: scsi1
    state: detached
  register: detached

- name: Delete the kept volume
  ferrox.proxmox.proxmox_disk:
    vmid: 100
    disk: "{{ detached.unused }}"
    state: absent
"#;

pub(crate) const RETURN: &str = r#"
vmid:
  description: The VMID of the VM the task acted on.
  returned: success
  type: int
  sample: 101
msg:
  description: What happened (community.proxmox's wording).
  returned: always
  type: str
  sample: Disk scsi3 created in VM 101
changes:
  description: One line per change made (or, in check mode, that would be made). Empty when nothing changes.
  returned: success
  type: list
  elements: str
  sample: ["cache: writeback -> none", "size: 32G -> 64G"]
disk:
  description: The disk's config key, on the VM named by RV(disk_vmid) (after a move to another VM, the target's key).
  returned: success, when the disk exists after the task
  type: str
  sample: scsi1
disk_vmid:
  description: The VMID of the VM holding the disk after the task.
  returned: success, when the disk exists after the task
  type: int
  sample: 100
disk_config:
  description:
    - The disk's config entry after the task, as Proxmox VE stores it. Null after O(state=detached) and O(state=absent).
    - In check mode, the entry that would be written (a volume Proxmox VE has yet to allocate shows as C(STORAGE:(known after apply)), and RV(volume) is null and listed in RV(known_after_apply)).
  returned: success
  type: str
  sample: local-lvm:vm-100-disk-1,discard=on,iothread=1,size=32G,ssd=1
volume:
  description:
    - The volume id (or C(none), C(cdrom), a device path) of the disk after the task.
    - In check mode, null for a disk still to be allocated, since Proxmox VE names the volume when it creates it; RV(size) then gives the size that would be allocated.
  returned: success, when the disk exists after the task
  type: str
  sample: local-lvm:vm-100-disk-1
storage:
  description: The storage of RV(volume).
  returned: success, when the disk is a storage volume
  type: str
  sample: local-lvm
size:
  description: The disk's size as Proxmox VE writes it.
  returned: success, when the disk has a size
  type: str
  sample: 32G
size_bytes:
  description: RV(size) in bytes.
  returned: success, when the disk has a size
  type: int
  sample: 34359738368
pending:
  description: Whether the change waits for the VM's next restart (Proxmox VE could not apply it to the running VM, for example a cache mode change, or an IDE disk added or removed while running). A warning says so too. In check mode, predicted from the hotplug rules of Proxmox VE.
  returned: success, after a change (always false for a stopped VM)
  type: bool
  sample: false
unused:
  description: The C(unusedN) key that keeps the volume replaced (O(create=forced)), detached (O(state=detached)) or left behind by a move (O(state=moved) without O(delete_moved)).
  returned: when a volume was kept
  type: str
  sample: unused0
unused_volume:
  description: The volume kept as RV(unused).
  returned: when a volume was kept
  type: str
  sample: local-lvm:vm-100-disk-1
known_after_apply:
  description:
    - In check mode, the result keys whose value only Proxmox VE decides when the change is applied (the volume of a disk still to be allocated or moved; the size of an imported or EFI disk); they are null in the result, and the config values in the C(diff) and RV(disk_config) show C((known after apply)) in their place.
  returned: check mode, when such a value is part of the result
  type: list
  elements: str
  sample: ["volume"]
"#;
