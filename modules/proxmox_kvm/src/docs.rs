//! The module's declaration ([`spec`]: its options, check and diff mode, docs) and the
//! prose of its documentation: description, notes (what differs from community.proxmox
//! 1.6), examples and return values.

use ferrox_ansible::options::{ModuleSpec, Support};

use crate::options;

/// What the collection tool and the protocol read of the module.
pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_kvm",
        short_description: SHORT,
        description: description(),
        version_added: "0.1.0",
        options: options::all(),
        rules: options::rules(),
        check_mode: (
            Support::Full,
            "Reads the live cluster and reports exactly the actions a real run would take, writing nothing.",
        ),
        diff_mode: (
            Support::Full,
            "Before and after of the config keys (or power state) that change; secrets masked.",
        ),
        notes: notes(),
        seealso: vec![
            "ferrox.proxmox.proxmox_disk",
            "ferrox.proxmox.proxmox_nic",
            "ferrox.proxmox.proxmox_vm_info",
        ],
        examples: EXAMPLES,
        returns: RETURNS,
    }
}

pub(crate) const SHORT: &str = "Management of QEMU/KVM virtual machines in a Proxmox VE cluster";

/// What the module does, in a few lines: the page's synopsis. The behaviour in detail
/// is in [`notes`] and the guides.
pub(crate) fn description() -> Vec<String> {
    [
        "Creates, clones, restores, converges, starts, stops, suspends, converts to template, migrates and removes QEMU/KVM virtual machines in a Proxmox VE cluster.",
        "Takes the options of C(community.proxmox.proxmox_kvm) 1.6 (the same defaults, choices, messages and result keys). An existing VM is converged: only what differs from the task is written, and nothing is lost on the way. Check mode and C(--diff) report exactly what a real run would do.",
        "How it converges, what waits for a restart, cloud-init, clones, vmids and waiting are in the notes below; every difference from community.proxmox is in R(Moving from community.proxmox, ansible_collections.ferrox.proxmox.docsite.guide_moving), and what reaches the guest in R(Every VM option and what reaches the guest, ansible_collections.ferrox.proxmox.docsite.guide_vms).",
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

/// The behaviour in detail, after the options on the page.
pub(crate) fn notes() -> Vec<String> {
    [
        "Convergence: with O(update=true) the task is compared with the VM's config (property strings normalised, O(tags) without regard to order, O(sshkeys) decoded, O(nameservers)/O(searchdomains) as lists) and only the keys that differ are written, guarded by the config digest. Nothing differing means C(changed=false). A VM that does not exist is created. Without O(update), an existing VM is left alone and a warning names the keys that differ from the task.",
        "Safe disks and NICs: on an existing VM a disk's options change in place and its size only grows, a new disk key is allocated, a NIC keeps its MAC unless the task names one. Shrinking a disk, or changing its storage or bus, fails with a message naming the safe route. O(update_unsafe) is therefore no longer needed.",
        "Pending changes: changes PVE cannot apply to a running VM are returned in RV(pending) (read back from PVE after the write; predicted from PVE's hotplug rules in check mode) and the message says a restart is needed; O(apply_pending=reboot) reboots the VM to apply them.",
        "Cloud-init changes: PVE writes cloud-init keys (O(ciuser), O(cipassword), O(sshkeys), O(ipconfig), O(nameservers), O(searchdomains), O(citype), O(ciupgrade), O(cicustom)) to a running VM's config at once, but the guest reads them from its cloud-init drive, which PVE rebuilds only when the VM starts (an API reboot included). Until then they are listed in RV(pending) and the message says they are not yet in the guest, also in check mode and on a rerun with nothing to write (read from C(GET .../cloudinit)); O(apply_pending=reboot) reboots the VM to bring them there. A VM whose C(hotplug) names C(cloudinit) gets them at once. PVE does not list a changed (not added or removed) O(ipconfig) entry there, so only the run that changes it reports it. Editing a C(cicustom) snippet is invisible: PVE does not track its content. Cloud-init options on a VM without a cloud-init drive get a warning.",
        "Clone: the rest of the task (cores, memory, net, ipconfig, cloud-init, ...) is applied to the clone in the same task. Without O(newid), an existing VM named O(name) is the clone, so a rerun does not clone again. A rerun converges the clone exactly as O(update=true) would (the same checks, pool move, cloud-init pending view, O(apply_pending) and O(update_password)); where 1.6 differs, so does it: no O(update) is needed, and with nothing to change the message is C(vmid <vmid> with VM name <name> already exists). The result always names the clone.",
        "Race-free vmid allocation: without O(vmid), when PVE answers that the chosen id was taken meanwhile by a parallel run, the next free id is tried (bounded). C(serial: 1) or C(throttle: 1) are not needed.",
        "Cluster consistency: after a create or clone the module returns once the VM is listed cluster-wide, so the next task finds it (no C(pause)). PVE lists a new VM's name only with its node's next status broadcast (up to 10 seconds later); until then every module that looks a VM up by name reads the name of such an unnamed VM from its config, so the lookup is exact at once and the create does not wait for the broadcast.",
        "Check mode and diff mode: the module reads the live cluster, computes the actions it would take and, in check mode, reports them without writing (C(changed) as a real run would report it; a create returns the vmid it would use). With C(--diff) the before/after of the config keys is shown.",
        "O(node) is required only to create a VM. For an existing VM the node holding it is found from the cluster; a clone is made on the source's node (O(target) moves it elsewhere).",
        "Waiting: a PVE task that fails fails the module at once with its exit status and the end of its log; a task still running after O(timeout) fails with a message naming the task (the task goes on in PVE). Creating, cloning and restoring wait at least 300 seconds.",
        "Name lookups consider QEMU VMs only (a container with the same name is not a match); several VMs with the same name fail with their vmids listed.",
        "RV(mac) and RV(devices) are read from the VM's live config and list every NIC and disk, on every result where the VM exists.",
        "O(state=paused) and O(state=hibernated) suspend the VM (to RAM, or to disk with C(todisk=1)); O(state=template) with O(force=true) shuts a running VM down first.",
        "O(force) is sent on create only together with O(archive) (PVE accepts it only for restores). O(target) and O(snapname) are used for clones only, O(pool) and O(storage) for creates and clones.",
        "The PVE-version gates of 1.6 (dropping options on PVE older than 6 or 8) are not reproduced: Proxmox VE 8 or later is assumed.",
    ]
    .into_iter()
    .map(String::from)
    .chain([ferrox_run::name_index::doc_note("name")])
    .collect()
}

pub(crate) const EXAMPLES: &str = r#"
- name: Create a VM (vmid chosen by PVE, race-free)
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    name: web01
    cores: 2
    memory: 2048
    scsihw: virtio-scsi-single
    scsi:
      scsi0: local-lvm:32,discard=on,iothread=1
    ide:
      ide2: local-lvm:cloudinit
    net:
      net0: virtio,bridge=vmbr0,tag=10
    ipconfig:
      ipconfig0: ip=dhcp
    ciuser: debian
    sshkeys: "{{ lookup('file', '~/.ssh/id_ed25519.pub') }}"
  register: vm

- name: Print its MAC
  ansible.builtin.debug:
    msg: "{{ vm.mac.net0 }}"

- name: Converge the VM (only differing keys are written; grows scsi0 to 40G)
  ferrox.proxmox.proxmox_kvm:
    name: web01
    update: true
    cores: 4
    scsi:
      scsi0: local-lvm:40,discard=on,iothread=1
    apply_pending: reboot

- name: Clone a template and configure the clone in one task
  ferrox.proxmox.proxmox_kvm:
    clone: base-debian13
    name: app01
    full: false
    memory: 4096
    net:
      net0: virtio,bridge=vmbr1
    ipconfig:
      ipconfig0: ip=192.0.2.20/24,gw=192.0.2.1

- name: Start it and wait until its guest has an IPv4 address (no fixed pause)
  ferrox.proxmox.proxmox_kvm:
    name: app01
    state: started
    wait_for_ip: true
    ip_family: ipv4
  register: app01

- name: Reach it at that address
  ansible.builtin.add_host:
    name: app01
    ansible_host: "{{ app01.ip_address }}"

- name: Hibernate it
  ferrox.proxmox.proxmox_kvm:
    name: app01
    state: hibernated

- name: Stop, powering off after 60 s if the guest ignores ACPI
  ferrox.proxmox.proxmox_kvm:
    name: app01
    state: stopped
    force: true
    timeout: 60

- name: Remove it
  ferrox.proxmox.proxmox_kvm:
    name: app01
    state: absent
    purge: true
"#;

pub(crate) const RETURNS: &str = r#"
vmid:
  description: The VM's id (for a clone, the clone's id; in check mode, the id a create would use).
  returned: success
  type: int
  sample: 115
status:
  description: The VM's power state before the action (C(running) or C(stopped)).
  returned: success, for the power states and current
  type: str
  sample: running
msg:
  description: What was done, in community.proxmox 1.6's words.
  returned: always
  type: str
  sample: VM web01 with vmid 115 deployed
mac:
  description: MAC address of every NIC (C(netN)) of the VM, read from its live config (in check mode, null for a NIC Proxmox VE has yet to give a MAC, see RV(known_after_apply)).
  returned: success, when the VM exists (state present)
  type: dict
  sample: {"net0": "BC:24:11:2E:7F:01"}
devices:
  description: Volume of every disk key of the VM, read from its live config.
  returned: success, when the VM exists (state present)
  type: dict
  sample: {"scsi0": "local-lvm:vm-115-disk-0", "ide2": "local-lvm:vm-115-cloudinit"}
changes:
  description: Config keys that differ from the task (written by an update; named in a warning otherwise).
  returned: state present on an existing VM
  type: list
  elements: str
  sample: ["cores", "net0"]
pending:
  description: Changes PVE left pending on a running VM, key to pending value; they take effect when the VM restarts (see O(apply_pending)). Includes the cloud-init keys the VM's cloud-init drive lacks (a password as C(**********), a removed key as "(delete)").
  returned: update of a running VM
  type: dict
  sample: {"cores": "4"}
done:
  description: On a failure half-way through, the steps that were already done (the message says the same); a rerun continues from there.
  returned: failure after a partial change
  type: list
  elements: str
  sample: ["set cores of VM 100"]
diff:
  description: Before and after of the config keys (or power state) that change, with C(--diff).
  returned: changed, in diff mode
  type: dict
actions:
  description: The actions the run took, or in check mode would take, in order.
  returned: always
  type: list
  elements: str
  sample: ["create VM 115 on pve1", "wait until VM 115 is listed cluster-wide"]
ip_addresses:
  description:
    - The guest's usable addresses per NIC, as its QEMU guest agent reports them, matched to C(netN) by MAC (any case); link-local, APIPA and loopback addresses are left out, and so are guest interfaces of no C(netN) (bridges, containers inside the guest).
    - In check mode null (see RV(known_after_apply)), unless the VM already runs and its agent answers.
  returned: with O(wait_for_agent) or O(wait_for_ip)
  type: dict
  sample: {"net0": {"mac": "BC:24:11:2E:7F:01", "ipv4": ["192.0.2.50"], "ipv6": ["2001:db8::50"]}}
ip_address:
  description:
    - The address to connect to (for C(add_host)'s C(ansible_host)) - the first usable address of O(ip_family) on the lowest C(netN) that has one; null when there is none (only with O(wait_for_agent)).
    - In check mode null (see RV(known_after_apply)), unless the VM already runs and its agent answers.
  returned: with O(wait_for_agent) or O(wait_for_ip)
  type: str
  sample: 192.0.2.50
node:
  description: The node O(placement) chose for the VM this task created or cloned (in check mode, the node a real run would choose); for a VM the task found existing (made earlier, or by another run at the same moment), the node it is on.
  returned: with O(placement) and no O(node), when a create (O(state=present)) or a clone without O(target) succeeds
  type: str
  sample: pve2
placement:
  description:
    - Why O(placement) chose RV(node) - the strategy, the group, the VM's memory (bytes) and CPUs, every candidate with its numbers (C(maxmem), C(maxcpu), C(configured_memory), C(configured_cpus), C(free_memory), C(group_members)) in the order ranked, and every excluded node with its reason.
  returned: with O(placement), when the task chose a node
  type: dict
  sample:
    node: pve2
    strategy: most_free
    group: web
    memory: 2147483648
    cpus: 1
    candidates:
      - {node: pve2, maxmem: 34359738368, maxcpu: 8, configured_memory: 0, configured_cpus: 0, free_memory: 34359738368, group_members: 0}
    excluded: {pve5: offline}
known_after_apply:
  description:
    - In check mode, the result keys whose value only Proxmox VE decides when the change is applied (the MAC of a new NIC, the volume of a new disk, the addresses of a guest yet to start); they are null in the result, and the config values in RV(diff) and RV(actions) show C((known after apply)) in their place.
  returned: check mode, when such a value is part of the result
  type: list
  elements: str
  sample: ["mac.net0", "devices.scsi0"]
"#;
