# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_snap.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_snap
short_description: Take, remove or roll back a snapshot of a QEMU VM in Proxmox VE
version_added: "0.2.0"
description:
  - Take, remove or roll back one snapshot of a QEMU VM.
  - Option-compatible with C(community.proxmox.proxmox_snap); see the notes for where it behaves better.
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  description:
    description:
      - The snapshot's description (shown in the web interface). Used when the snapshot is taken; an existing snapshot keeps its own.
    type: str
  force:
    description:
      - "With O(state=absent): remove the snapshot from the configuration even if removing a disk's snapshot fails (Proxmox VE's C(force))."
    type: bool
    default: false
  hostname:
    description:
      - The name of the VM. Used only when O(vmid) is not given; must match exactly one QEMU VM.
    type: str
  retention:
    description:
      - "With O(state=present), after a snapshot is taken: remove the oldest snapshots until at most this many are left (the new one counts). V(0) keeps all.
        Each removal is waited for before the next; RV(removed) lists them."
      - Nothing is removed when no snapshot is taken (one of that name exists).
    type: int
    default: 0
  snapname:
    description:
      - "The snapshot's name: a letter, then letters, digits, V(-) or V(_); at most 40 characters. V(current) and V(pending) are reserved by Proxmox VE."
    type: str
    default: ansible_snap
  start:
    description:
      - "With O(state=rollback): start the VM after the rollback (Proxmox VE's C(start); needs C(VM.PowerMgmt)). Proxmox VE starts it with a task of its own
        once the rollback ends; the module waits for that task too, and a start that fails fails the module. A snapshot with RAM starts the VM anyway, within
        the rollback."
      - Not in community.proxmox.
    type: bool
    default: false
  state:
    description:
      - V(present) takes the snapshot unless one of that name exists; V(absent) removes it if it exists; V(rollback) rolls the VM back to it.
      - A rollback stops a running VM first (Proxmox VE does so); RV(stopped) says whether it did, and check mode predicts it.
    type: str
    default: present
    choices:
      - present
      - absent
      - rollback
  timeout:
    description:
      - How many seconds to wait for each Proxmox VE task (the snapshot, each removal, the rollback). A task that fails ends the wait at once with Proxmox VE's
        error.
    type: int
    default: 30
  unbind:
    description:
      - community.proxmox's option for LXC containers with mount points. This module manages snapshots of QEMU VMs only, so it has no effect; kept so that
        tasks written for community.proxmox run unchanged.
    type: bool
    default: false
  vmid:
    description:
      - The VMID of the VM. Takes precedence over O(hostname).
    type: int
  vmstate:
    description:
      - Include the VM's RAM in the snapshot. Proxmox VE saves it only from a running VM; for a stopped VM the option has no effect.
    type: bool
    default: false
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
    details: Reads the VM's snapshots, lock and power state and reports exactly what a real run would do (C(changed) included, and the stop a rollback causes),
      writing nothing.
  diff_mode:
    support: full
    details: Shows the VM's snapshot names before and after.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - "Idempotent by name: V(present) changes nothing when a snapshot of that name exists, V(absent) nothing when none does. A rollback always changes the VM."
  - Check mode reports C(changed) exactly when a real run would change something (community.proxmox reported V(false) for a snapshot it would take or remove),
    the old snapshots O(retention) would remove as RV(removed), and whether a rollback would stop the running VM as RV(stopped), with a warning.
  - "Each Proxmox VE task is waited on: a task that fails (C(VM is locked (backup)), C(snapshot feature is not available)) fails the module at once with
    Proxmox VE's exit status and the end of the task log, not after O(timeout) as a timeout. O(retention)'s removals run one at a time, oldest first, each
    waited on, so none runs into another's lock."
  - "Refused before anything is written, with Proxmox VE's words: a name Proxmox VE does not take (reserved V(current) and V(pending), or not a letter followed
    by letters, digits, V(-) or V(_)), a locked VM, a template, a disk on a storage without snapshots (one storage listing of the node), a rollback to a
    snapshot that does not exist or is incomplete, a rollback Proxmox VE's ZFS storage refuses (a snapshot taken after the one rolled back to on a ZFS disk:
    the later snapshots are named, to be removed first), and a missing privilege (C(VM.Snapshot); a rollback C(VM.Snapshot) or C(VM.Snapshot.Rollback), with
    O(start) also C(VM.PowerMgmt))."
  - "QEMU VMs only: a container fails with a message naming it. community.proxmox's O(unbind) (containers with mount points) has no effect here."
  - Unlike community.proxmox, O(vmid) or O(hostname) is required (community.proxmox reported success without doing anything), and a rollback to a snapshot that
    does not exist fails (as community.proxmox 2.0 does).
  - "In a check-mode run the snapshot and its removals are part of the run's plan: a later task sees them in the VM's snapshot list, and a snapshot of a VM an
    earlier task only planned to create is planned on that VM."
  - "Requests made: one C(GET /cluster/resources) (by name through the run's name index, one C(GET .../status/current) instead), the VM's config and snapshot
    list, for a rollback its status; to take a snapshot one storage listing of the node, the snapshot task, and with O(retention) one more snapshot list and
    one task per removal; to roll back to a snapshot that is not the newest, its config, one storage listing of the node and, with a disk on ZFS, the config of
    each later snapshot; each task's status is polled until it ends."
  - "A guest looked up by O(hostname) alone (no O(vmid)) that an earlier task of the same C(ansible-playbook) run listed is found through the run's name index:
    one C(GET /nodes/{node}/{type}/{vmid}/status/current) confirms it (its name, its node) instead of a C(GET /cluster/resources) of the whole cluster. A guest
    renamed, moved or removed since, a name the index lacks (or, for one VM, holds twice), and an index older than its maximum age (60 seconds;
    C(FERROX_NAME_INDEX_MAX_AGE) in the controller's environment sets it, V(0) turns the index off) are looked up in a fresh listing; the listings of every
    module with this note refresh the index. Within that age a guest another tool gave the same name is not seen; creates, clones, migrations, removals and
    pool moves always list."
seealso:
  - module: ferrox.proxmox.proxmox_snap_info
  - module: ferrox.proxmox.proxmox_kvm
"""

EXAMPLES = r"""
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
"""

RETURN = r"""
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
    'hostname': {'type': 'str'},
    'vmid': {'type': 'int'},
    'state': {'type': 'str', 'default': 'present', 'choices': ['present', 'absent', 'rollback']},
    'force': {'type': 'bool', 'default': False},
    'unbind': {'type': 'bool', 'default': False},
    'vmstate': {'type': 'bool', 'default': False},
    'description': {'type': 'str'},
    'timeout': {'type': 'int', 'default': 30},
    'snapname': {'type': 'str', 'default': 'ansible_snap'},
    'retention': {'type': 'int', 'default': 0},
    'start': {'type': 'bool', 'default': False},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_snap.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_snap; the module is a binary, run '
    'by the action plugin ferrox.proxmox.proxmox_snap. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_snap) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, required_one_of=[['hostname', 'vmid']])
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
