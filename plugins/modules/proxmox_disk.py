# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_disk.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_disk
short_description: Manage one disk of a QEMU VM in Proxmox VE
version_added: "0.1.0"
description:
  - Create, converge, grow, move, detach or delete one disk (or CD-ROM drive, EFI vars disk, TPM state) of a QEMU VM.
  - Option-compatible with C(community.proxmox.proxmox_disk); see the notes for where it behaves better.
  - "Supports check mode and diff mode for every state: the plan is computed from the VM's live configuration, and a real run executes exactly that plan."
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  aio:
    description:
      - AIO type to use.
    type: str
    choices:
      - native
      - threads
      - io_uring
  backup:
    description:
      - "Whether the drive is included in backups (Proxmox VE's default when unset: V(true))."
    type: bool
  bps_max_length:
    description:
      - Maximum length of total I/O bursts in seconds.
    type: int
  bps_rd_max_length:
    description:
      - Maximum length of read I/O bursts in seconds.
    type: int
  bps_wr_max_length:
    description:
      - Maximum length of write I/O bursts in seconds.
    type: int
  bwlimit:
    description:
      - Override the I/O bandwidth limit of O(state=moved), in KiB/s.
    type: int
  cache:
    description:
      - The drive's cache mode.
    type: str
    choices:
      - none
      - writethrough
      - writeback
      - unsafe
      - directsync
  check_mode_assume:
    description:
      - "Only in check mode: references the task may take as existing because an earlier task of another collection, one that cannot run in check mode (so
        C(--check) skips it), creates them. Without it such a check run fails, as the real run would if the earlier task had not made them."
      - Ignored in real runs, which check every reference. Each assumption used is named in a warning.
    type: dict
    version_added: "0.2.0"
    suboptions:
      pools:
        description:
          - Resource pools to take as existing.
        type: list
        elements: str
      volumes:
        description:
          - Volumes (C(storage:iso/name.iso), C(storage:import/name.qcow2)) to take as existing.
        type: list
        elements: str
  create:
    description:
      - "With O(state=present): V(regular) creates the disk when the key is free and converges it otherwise; V(disabled) never creates, only converges an
        existing disk; V(forced) always creates a new volume, and an existing one is kept as C(unusedN) (named by RV(unused)), never deleted."
    type: str
    default: regular
    choices:
      - disabled
      - regular
      - forced
  cyls:
    description:
      - Force the drive's physical geometry to have a specific cylinder count. Not accepted by Proxmox VE 9; kept for option compatibility.
    type: int
  delete_moved:
    description:
      - "With O(state=moved) to another storage: delete the source volume after the copy. When false or unset the source volume is kept as C(unusedN), named by
        RV(unused)."
    type: bool
  detect_zeroes:
    description:
      - Whether to detect and try to optimize writing zeroes.
    type: bool
  discard:
    description:
      - Whether to pass discard/trim requests to the underlying storage.
    type: str
    choices:
      - ignore
      - "on"
  disk:
    description:
      - "The disk's config key: C(ide0)-C(ide3), C(sata0)-C(sata5), C(scsi0)-C(scsi30), C(virtio0)-C(virtio15), C(unused0)-C(unused255), C(efidisk0) or
        C(tpmstate0)."
    type: str
    required: true
  format:
    description:
      - "The drive's backing file's data format. For O(state=moved), the format of the moved copy. The format of an existing disk cannot change in place: a
        different value fails and names O(state=moved) with O(format)."
    type: str
    choices:
      - raw
      - cow
      - qcow
      - qed
      - qcow2
      - vmdk
      - cloop
  heads:
    description:
      - Force the drive's physical geometry to have a specific head count. Not accepted by Proxmox VE 9; kept for option compatibility.
    type: int
  import_from:
    description:
      - "Import an existing volume as the new disk: C(STORAGE:VMID/FILE), C(STORAGE:import/FILE) (Proxmox VE 9) or an absolute path (root only). Used only when
        the disk is created; O(storage) is where the copy goes. Mutually exclusive with O(size)."
    type: str
  iops:
    description:
      - Maximum r/w I/O in operations per second.
    type: int
  iops_max:
    description:
      - Maximum unthrottled r/w I/O pool in operations per second.
    type: int
  iops_max_length:
    description:
      - Maximum length of I/O bursts in seconds.
    type: int
  iops_rd:
    description:
      - Maximum read I/O in operations per second.
    type: int
  iops_rd_max:
    description:
      - Maximum unthrottled read I/O pool in operations per second.
    type: int
  iops_rd_max_length:
    description:
      - Maximum length of read I/O bursts in seconds.
    type: int
  iops_wr:
    description:
      - Maximum write I/O in operations per second.
    type: int
  iops_wr_max:
    description:
      - Maximum unthrottled write I/O pool in operations per second.
    type: int
  iops_wr_max_length:
    description:
      - Maximum length of write I/O bursts in seconds.
    type: int
  iothread:
    description:
      - Whether to use iothreads for this drive (only for SCSI and VirtIO).
    type: bool
  iso_image:
    description:
      - "The CD-ROM media: C(STORAGE:iso/NAME), V(cdrom) (the host's drive) or V(none) (empty). Requires O(media=cdrom)."
    type: str
  mbps:
    description:
      - Maximum total r/w speed in megabytes per second.
    type: float
  mbps_max:
    description:
      - Maximum unthrottled total r/w pool in megabytes per second.
    type: float
  mbps_rd:
    description:
      - Maximum read speed in megabytes per second.
    type: float
  mbps_rd_max:
    description:
      - Maximum unthrottled read pool in megabytes per second.
    type: float
  mbps_wr:
    description:
      - Maximum write speed in megabytes per second.
    type: float
  mbps_wr_max:
    description:
      - Maximum unthrottled write pool in megabytes per second.
    type: float
  media:
    description:
      - The drive's media type.
    type: str
    choices:
      - cdrom
      - disk
  name:
    description:
      - The name of the VM. Used only when O(vmid) is not given; must match exactly one QEMU VM.
    type: str
  queues:
    description:
      - Number of queues (SCSI only, at least 2).
    type: int
  replicate:
    description:
      - "Whether the drive is considered for replication jobs (Proxmox VE's default when unset: V(true))."
    type: bool
  rerror:
    description:
      - Read error action.
    type: str
    choices:
      - ignore
      - report
      - stop
  ro:
    description:
      - Whether the drive is read-only (SCSI and VirtIO).
    type: bool
  scsiblock:
    description:
      - Whether to use scsi-block for full passthrough of a host block device (SCSI only).
    type: bool
  secs:
    description:
      - Force the drive's physical geometry to have a specific sector count. Not accepted by Proxmox VE 9; kept for option compatibility.
    type: int
  serial:
    description:
      - The drive's reported serial number, url-encoded, up to 20 bytes long.
    type: str
  shared:
    description:
      - Mark this locally-managed volume as available on all nodes (does not share the volume).
    type: bool
  size:
    description:
      - "With O(state=present): the size of a new disk, in GiB when a bare number (V(32)), or with a unit V(K), V(M), V(G), V(T) (V(512M)). For an existing
        disk a larger size grows it; a smaller one fails (disks never shrink)."
      - "With O(state=resized): an absolute size with a unit (V(500G): no change when the disk already has it; a smaller size fails) or a relative one
        (V(+100G)). A relative size grows the disk on B(every) run, as in community.proxmox: prefer an absolute size for idempotent playbooks. A bare number is
        rejected, because Proxmox VE would read it as bytes."
    type: str
  snapshot:
    description:
      - Whether the drive is a temporary snapshot drive (changes are discarded when the VM stops).
    type: bool
  ssd:
    description:
      - Whether to expose this drive as an SSD rather than a rotational disk (not on VirtIO).
    type: bool
  state:
    description:
      - "V(present): create the disk or converge its options (and grow it when O(size) is larger). Options the task does not mention are kept."
      - "V(resized): grow the disk to an absolute O(size) (V(500G)), or by a relative one (V(+100G))."
      - "V(detached): detach the disk; its volume is kept as an C(unusedN) entry, named by RV(unused)."
      - "V(moved): move the disk to another storage (O(target_storage)) or another VM (O(target_vmid))."
      - "V(absent): detach the disk and delete its volume. The only state that deletes data."
    type: str
    default: present
    choices:
      - present
      - resized
      - detached
      - moved
      - absent
  storage:
    description:
      - The storage a new disk is allocated on (O(state=present)). Required to create a disk (except a CD-ROM) and with O(create=forced).
    type: str
  target_disk:
    description:
      - "With O(state=moved) and O(target_vmid): the disk key on the target VM. Defaults to O(disk)."
    type: str
  target_storage:
    description:
      - "With O(state=moved): the storage to move the disk to (same VM). Already there: no change."
    type: str
  target_vmid:
    description:
      - "With O(state=moved): the VM to move the disk to (the volume is reassigned, not copied). When the disk is already on the target VM (and gone from the
        source), the task succeeds without change."
    type: int
  timeout:
    description:
      - Seconds to wait for the Proxmox VE task of a create, import, resize or move. When it runs longer the module fails, says the task is still running, and
        a rerun converges once it finished.
    type: int
    default: 600
  trans:
    description:
      - Force the disk geometry BIOS translation mode. Not accepted by Proxmox VE 9; kept for option compatibility.
    type: str
    choices:
      - auto
      - lba
      - none
  vmid:
    description:
      - The VMID of the VM. Takes precedence over O(name).
    type: int
  werror:
    description:
      - Write error action.
    type: str
    choices:
      - enospc
      - ignore
      - report
      - stop
  wwn:
    description:
      - The drive's worldwide name, encoded as 16 bytes hex string, prefixed by C(0x).
    type: str
extends_documentation_fragment:
  - ferrox.proxmox.connection
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
    details: The action plugin picks the binary built for the target's platform (C(uname -sm), or the controller's own platform on a local connection).
  async:
    support: full
    details: Like every binary module, C(async) needs Python on the target host for ansible-core's async wrapper.
  bypass_host_loop:
    support: none
  platform:
    support: full
    platforms: posix
    details: Binaries run on the host the task targets, usually the controller (C(delegate_to) C(localhost)) or a Proxmox VE node; the collection's README
      lists the platforms shipped.
  check_mode:
    support: full
    details: Reads the VM's live configuration and reports exactly what a real run would change, writing nothing.
  diff_mode:
    support: full
    details: Shows the disk's config entry (and any C(unusedN) entry that keeps a volume) before and after.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - "O(state=present) converges: options are compared with the disk's current options after normalising (V(on) = V(1), V(10) = V(10.0), V(32G) = V(32768M),
    defaults), only what differs is written, and options the task does not mention are kept (community.proxmox 1.6 removed them)."
  - Nothing deletes a volume except O(state=absent). O(create=forced), O(state=detached) and O(state=moved) without O(delete_moved) keep the old volume as an
    C(unusedN) entry and return its key as RV(unused).
  - "Disks never shrink: a smaller O(size) fails with the current size in the message."
  - Every configuration write carries the config C(digest) read for the plan, so a concurrent change makes the task fail instead of being overwritten; rerun it
    to converge.
  - A Proxmox VE task that ends with warnings counts as success; the warnings are returned.
  - "Requests made: one C(GET /cluster/resources) (by name through the run's name index, one C(GET .../status/current) instead), one config read (two for a
    move to another VM), and on change the write(s), the task polls, and one config read for the result."
  - "A guest looked up by O(name) alone (no O(vmid)) that an earlier task of the same C(ansible-playbook) run listed is found through the run's name index: one
    C(GET /nodes/{node}/{type}/{vmid}/status/current) confirms it (its name, its node) instead of a C(GET /cluster/resources) of the whole cluster. A guest
    renamed, moved or removed since, a name the index lacks (or, for one VM, holds twice), and an index older than its maximum age (60 seconds;
    C(FERROX_NAME_INDEX_MAX_AGE) in the controller's environment sets it, V(0) turns the index off) are looked up in a fresh listing; the listings of every
    module with this note refresh the index. Within that age a guest another tool gave the same name is not seen; creates, clones, migrations, removals and
    pool moves always list."
seealso:
  - module: ferrox.proxmox.proxmox_kvm
  - module: ferrox.proxmox.proxmox_nic
"""

EXAMPLES = r"""
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
"""

RETURN = r"""
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
    - In check mode, the entry that would be written (a volume Proxmox VE has yet to allocate shows as C(STORAGE:(known after apply)), and RV(volume) is null
      and listed in RV(known_after_apply)).
  returned: success
  type: str
  sample: local-lvm:vm-100-disk-1,discard=on,iothread=1,size=32G,ssd=1
volume:
  description:
    - The volume id (or C(none), C(cdrom), a device path) of the disk after the task.
    - In check mode, null for a disk still to be allocated, since Proxmox VE names the volume when it creates it; RV(size) then gives the size that would be
      allocated.
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
  description: Whether the change waits for the VM's next restart (Proxmox VE could not apply it to the running VM, for example a cache mode change, or an IDE
    disk added or removed while running). A warning says so too. In check mode, predicted from the hotplug rules of Proxmox VE.
  returned: success, after a change (always false for a stopped VM)
  type: bool
  sample: false
unused:
  description: The C(unusedN) key that keeps the volume replaced (O(create=forced)), detached (O(state=detached)) or left behind by a move (O(state=moved)
    without O(delete_moved)).
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
    - In check mode, the result keys whose value only Proxmox VE decides when the change is applied (the volume of a disk still to be allocated or moved; the
      size of an imported or EFI disk); they are null in the result, and the config values in the C(diff) and RV(disk_config) show C((known after apply)) in
      their place.
  returned: check mode, when such a value is part of the result
  type: list
  elements: str
  sample: ["volume"]
"""

from ansible.module_utils import basic
from ansible.module_utils.basic import env_fallback

ARGUMENT_SPEC = {
    'api_host': {'type': 'str', 'fallback': (env_fallback, ['PROXMOX_HOST'])},
    'api_port': {'type': 'int', 'fallback': (env_fallback, ['PROXMOX_PORT'])},
    'api_user': {'type': 'str', 'default': 'root@pam', 'fallback': (env_fallback, ['PROXMOX_USER'])},
    'api_password': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_PASSWORD'])},
    'api_token_id': {'type': 'str', 'no_log': False, 'fallback': (env_fallback, ['PROXMOX_TOKEN_ID'])},
    'api_token_secret': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_TOKEN_SECRET'])},
    'api_otp': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_OTP'])},
    'validate_certs': {'type': 'bool', 'default': True, 'fallback': (env_fallback, ['PROXMOX_VALIDATE_CERTS'])},
    'ca_path': {'type': 'path', 'fallback': (env_fallback, ['PROXMOX_CA_PATH'])},
    'api_cert_fingerprint': {'type': 'str', 'fallback': (env_fallback, ['PROXMOX_CERT_FINGERPRINT'])},
    'api_timeout': {'type': 'int', 'default': 5, 'fallback': (env_fallback, ['PROXMOX_API_TIMEOUT'])},
    'name': {'type': 'str'},
    'vmid': {'type': 'int'},
    'disk': {'type': 'str', 'required': True},
    'state': {'type': 'str', 'default': 'present', 'choices': ['present', 'resized', 'detached', 'moved', 'absent']},
    'create': {'type': 'str', 'default': 'regular', 'choices': ['disabled', 'regular', 'forced']},
    'storage': {'type': 'str'},
    'size': {'type': 'str'},
    'bwlimit': {'type': 'int'},
    'delete_moved': {'type': 'bool'},
    'target_disk': {'type': 'str'},
    'target_storage': {'type': 'str'},
    'target_vmid': {'type': 'int'},
    'timeout': {'type': 'int', 'default': 600},
    'iso_image': {'type': 'str'},
    'aio': {'type': 'str', 'choices': ['native', 'threads', 'io_uring']},
    'backup': {'type': 'bool'},
    'bps_max_length': {'type': 'int'},
    'bps_rd_max_length': {'type': 'int'},
    'bps_wr_max_length': {'type': 'int'},
    'cache': {'type': 'str', 'choices': ['none', 'writethrough', 'writeback', 'unsafe', 'directsync']},
    'cyls': {'type': 'int'},
    'detect_zeroes': {'type': 'bool'},
    'discard': {'type': 'str', 'choices': ['ignore', 'on']},
    'format': {'type': 'str', 'choices': ['raw', 'cow', 'qcow', 'qed', 'qcow2', 'vmdk', 'cloop']},
    'heads': {'type': 'int'},
    'import_from': {'type': 'str'},
    'iops': {'type': 'int'},
    'iops_max': {'type': 'int'},
    'iops_max_length': {'type': 'int'},
    'iops_rd': {'type': 'int'},
    'iops_rd_max': {'type': 'int'},
    'iops_rd_max_length': {'type': 'int'},
    'iops_wr': {'type': 'int'},
    'iops_wr_max': {'type': 'int'},
    'iops_wr_max_length': {'type': 'int'},
    'iothread': {'type': 'bool'},
    'mbps': {'type': 'float'},
    'mbps_max': {'type': 'float'},
    'mbps_rd': {'type': 'float'},
    'mbps_rd_max': {'type': 'float'},
    'mbps_wr': {'type': 'float'},
    'mbps_wr_max': {'type': 'float'},
    'media': {'type': 'str', 'choices': ['cdrom', 'disk']},
    'queues': {'type': 'int'},
    'replicate': {'type': 'bool'},
    'rerror': {'type': 'str', 'choices': ['ignore', 'report', 'stop']},
    'ro': {'type': 'bool'},
    'scsiblock': {'type': 'bool'},
    'secs': {'type': 'int'},
    'serial': {'type': 'str'},
    'shared': {'type': 'bool'},
    'snapshot': {'type': 'bool'},
    'ssd': {'type': 'bool'},
    'trans': {'type': 'str', 'choices': ['auto', 'lba', 'none']},
    'werror': {'type': 'str', 'choices': ['enospc', 'ignore', 'report', 'stop']},
    'wwn': {'type': 'str'},
    'check_mode_assume': {'type': 'dict', 'options': {'volumes': {'type': 'list', 'elements': 'str'}, 'pools': {'type': 'list', 'elements': 'str'}}},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_disk.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_disk; the module is a binary, run '
    'by the action plugin ferrox.proxmox.proxmox_disk. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_disk) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
        mutually_exclusive=[
            ['target_vmid', 'target_storage'],
            ['mbps', 'mbps_rd'],
            ['mbps', 'mbps_wr'],
            ['iops', 'iops_rd'],
            ['iops', 'iops_wr'],
            ['import_from', 'size'],
        ],
        required_one_of=[['name', 'vmid']],
        required_if=[('create', 'forced', ['storage']), ('state', 'resized', ['size'])],
        required_by={
            'target_disk': ['target_vmid'],
            'mbps_max': ['mbps'],
            'mbps_rd_max': ['mbps_rd'],
            'mbps_wr_max': ['mbps_wr'],
            'bps_max_length': ['mbps_max'],
            'bps_rd_max_length': ['mbps_rd_max'],
            'bps_wr_max_length': ['mbps_wr_max'],
            'iops_max': ['iops'],
            'iops_rd_max': ['iops_rd'],
            'iops_wr_max': ['iops_wr'],
            'iops_max_length': ['iops_max'],
            'iops_rd_max_length': ['iops_rd_max'],
            'iops_wr_max_length': ['iops_wr_max'],
            'iso_image': ['media'],
        },
    )
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
