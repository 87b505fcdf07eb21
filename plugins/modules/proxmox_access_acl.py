# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_access_acl.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_access_acl
short_description: Manage ACL entries of a Proxmox VE cluster
version_added: "0.2.0"
description:
  - Give a user, group or API token a role on an ACL path of a Proxmox VE cluster, or remove entries of a path (C(PUT /access/acl)).
  - Option-compatible with C(community.proxmox.proxmox_access_acl); see the notes for where it differs.
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  path:
    description:
      - "The ACL path: V(/), V(/vms/<vmid>), V(/storage/<id>), V(/pool/<id>), V(/nodes/<node>), V(/access/groups/<group>), V(/sdn/...), V(/mapping/...)."
      - Proxmox VE does not look the VM of a V(/vms/<vmid>) path up, so the entry can be set right after the VM's create, without a pause, or before it exists.
    type: str
  propagate:
    description:
      - Whether the entry also applies below O(path). Ignored with O(state=absent).
    type: bool
    default: true
  roleid:
    description:
      - The role, a built-in one (V(PVEVMUser), V(PVEAuditor), ...) or a custom one.
    type: str
  state:
    description:
      - V(present) gives O(roleid) to O(ugid) on O(path) with the O(propagate) asked (an entry with the other O(propagate) is changed); V(absent) removes the
        entries of O(path) that match the O(roleid), O(type) and O(ugid) given, whatever their O(propagate).
      - With V(absent) and only O(path), every entry of the path is removed, as community.proxmox documents it (its 1.6 removed only the propagating ones).
    type: str
    default: present
    choices:
      - present
      - absent
  type:
    description:
      - What O(ugid) names.
    type: str
    choices:
      - user
      - group
      - token
  ugid:
    description:
      - The user (V(name@realm)), group, or API token (V(name@realm!token)) the entry is for.
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
    details: Reads the path's entries and reports exactly what a real run would change, writing nothing; later tasks of a check run see the entries it plans.
  diff_mode:
    support: full
    details: Shows the entries of the task's path before and after.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - "Unlike community.proxmox (which has no check mode: C(--check) skips its task), check mode reads the path's entries and reports what a real run would
    change; later tasks of the same check run see the entries it plans, and C(--diff) shows the path's entries before and after."
  - "Unlike community.proxmox 1.6, O(propagate) converges both ways: an entry with the other O(propagate) is changed (1.6 compared it only when true, so
    V(false) never replaced a propagating entry)."
  - Unlike community.proxmox 1.6, O(state=absent) with only O(path) removes every entry of the path, as its documentation says (1.6 removed only the
    propagating ones).
  - Unlike community.proxmox, RV(old_acls) and RV(new_acls) list only the entries of the task's path, not every entry the caller may see (which put other
    tenants' grants into logs).
  - "Proxmox VE checks a V(/vms/<vmid>) path against a pattern and never looks the VM up: the entry can be set right after the VM's create task, with no
    pause."
  - "Privileges (as Proxmox VE checks them): C(Permissions.Modify) on the path, or below V(/vms) C(VM.Allocate), below V(/storage) C(Datastore.Allocate), below
    V(/pool) C(Pool.Allocate); without C(Permissions.Modify) the caller may only hand out (or take away) a role whose every privilege it holds on the path
    itself (propagating, for a propagating entry), and never V(NoAccess). A task the caller would be refused fails before any write, check mode included."
  - A user, group or token that does not exist fails before any write with Proxmox VE's words when the caller may see every user (C(Sys.Audit) or
    C(User.Modify) on V(/access/groups)); otherwise Proxmox VE refuses it and nothing changes.
  - "Requests made: one C(GET /access/acl) when nothing changes; a change adds C(GET /access/roles), the user or group listing (see above), one C(PUT
    /access/acl) per user, group or token, and one C(GET /access/acl) to read the result back."
seealso:
  - module: ferrox.proxmox.proxmox_user_info
  - module: ferrox.proxmox.proxmox_kvm
"""

EXAMPLES = r"""
- name: Give the VM's owner a role on it, right after the create (no pause needed)
  ferrox.proxmox.proxmox_access_acl:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    state: present
    path: /vms/100
    type: user
    ugid: jdoe@ad
    roleid: PVEVMUser
    propagate: false

- name: Give a group the auditor role on a pool
  ferrox.proxmox.proxmox_access_acl:
    path: /pool/prod
    type: group
    ugid: auditors
    roleid: PVEAuditor

- name: Delete all ACEs for a given path
  ferrox.proxmox.proxmox_access_acl:
    state: absent
    path: /vms/100
"""

RETURN = r"""
path:
  description: The ACL path, normalised as Proxmox VE stores it.
  returned: always
  type: str
  sample: /vms/100
old_acls:
  description:
    - The entries of the task's path before the task, as Proxmox VE lists them.
    - Unlike community.proxmox, only the task's path.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/vms/100", "type": "user", "ugid": "jdoe@ad", "roleid": "PVEVMUser", "propagate": 1}]
new_acls:
  description:
    - The entries of the task's path after the task (in check mode, as predicted).
  returned: when changed
  type: list
  elements: dict
changes:
  description: What the task changed (or would change), in words; empty when nothing changes.
  returned: always
  type: list
  elements: str
  sample: ["grant PVEVMUser to user jdoe@ad (not propagating)"]
msg:
  description: What the task did.
  returned: always
  type: str
  sample: "ACL of /vms/100 updated: grant PVEVMUser to user jdoe@ad (not propagating)"
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
    'state': {'type': 'str', 'default': 'present', 'choices': ['present', 'absent']},
    'path': {'type': 'str'},
    'roleid': {'type': 'str'},
    'type': {'type': 'str', 'choices': ['user', 'group', 'token']},
    'ugid': {'type': 'str'},
    'propagate': {'type': 'bool', 'default': True},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_access_acl.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_access_acl; the module is a '
    'binary, run by the action plugin ferrox.proxmox.proxmox_access_acl. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_access_acl) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
        required_if=[('state', 'present', ['path', 'roleid', 'type', 'ugid']), ('state', 'absent', ['path'])],
    )
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
