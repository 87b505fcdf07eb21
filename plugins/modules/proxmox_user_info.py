# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_user_info.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_user_info
short_description: Retrieve information about one or more Proxmox VE users
version_added: "0.2.0"
description:
  - "Retrieve information about one or more Proxmox VE users: their realm, whether they are enabled, their groups and API tokens."
  - Option-compatible with C(community.proxmox.proxmox_user_info); see the notes for where it differs.
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  domain:
    description:
      - Restrict the results to users of this authentication realm (V(pam), V(pve), an LDAP or AD realm).
    type: str
    aliases:
      - realm
  user:
    description:
      - Restrict the results to the user with this login name (the part before C(@)).
      - With O(domain), the one user O(user)C(@)O(domain) is read; without it, the users of that name in every realm are listed (community.proxmox 1.6 ignored
        O(user) then and returned every user).
    type: str
    aliases:
      - name
  userid:
    description:
      - Restrict the results to the user with this ID, C(name@realm).
      - A user that does not exist gives an empty RV(proxmox_users) (as in community.proxmox 1.6, so a playbook can test for it); a read Proxmox VE refuses
        fails, naming the cause.
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
    details: The module only reads, so check mode runs it normally.
  diff_mode:
    support: none
    details: The module changes nothing, so there is nothing to diff.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - As in community.proxmox 1.6, a O(userid) that does not exist gives an empty RV(proxmox_users), so a playbook can assert that a user exists.
  - "Unlike community.proxmox 1.6, a read Proxmox VE refuses (no privilege to see the user: 403; a login or server failure) fails the task and names the cause
    and the privilege, instead of answering as if the user did not exist. Proxmox VE shows a user to callers with C(User.Modify) or C(Sys.Audit) on
    C(/access/groups), or on a group the user is in; a login with a password always sees its own user, an API token does not see its owner without those
    privileges."
  - Unlike community.proxmox 1.6, O(user) without O(domain) lists the users of that login name in every realm (1.6 ignored it and listed every user).
  - The listing holds only the users the caller may see (see above), as the Proxmox VE API itself filters it.
  - "Requests made: one C(GET /access/users/{userid}) for one user, else one C(GET /access/users?full=1)."
seealso:
  - module: ferrox.proxmox.proxmox_access_acl
"""

EXAMPLES = r"""
- name: List existing users
  ferrox.proxmox.proxmox_user_info:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
  register: proxmox_users

- name: List the users of the pve realm
  ferrox.proxmox.proxmox_user_info:
    domain: pve
  register: proxmox_users_pve

- name: Fail early when the VM's owner does not exist
  ferrox.proxmox.proxmox_user_info:
    userid: "{{ owner }}@ad"
  register: owner_info
  failed_when: owner_info.proxmox_users | length == 0

- name: Alternative way to retrieve information about admin@pve
  ferrox.proxmox.proxmox_user_info:
    user: admin
    domain: pve
"""

RETURN = r"""
proxmox_users:
  description:
    - The users found, each as community.proxmox 1.6 returns it.
    - Empty for a O(userid) that does not exist.
  returned: always
  type: list
  elements: dict
  contains:
    userid:
      description: The user ID, C(name@realm).
      returned: always
      type: str
      sample: jdoe@ad
    user:
      description: The login name, the part of RV(proxmox_users[].userid) before C(@).
      returned: always
      type: str
      sample: jdoe
    domain:
      description: The realm, the part of RV(proxmox_users[].userid) after C(@).
      returned: always
      type: str
      sample: ad
    enabled:
      description: Whether the account is enabled.
      returned: always
      type: bool
      sample: true
    expire:
      description: Expiration date (seconds since epoch); V(0) means no expiration.
      returned: always
      type: int
      sample: 0
    groups:
      description: The groups the user is in.
      returned: always
      type: list
      elements: str
      sample: [admins]
    tokens:
      description: The user's API tokens.
      returned: always
      type: list
      elements: dict
      contains:
        tokenid:
          description: The token's name.
          type: str
          sample: automation
        privsep:
          description: Whether the token's privileges are separated from the user's.
          type: bool
          sample: true
        expire:
          description: Expiration date (seconds since epoch); V(0) means none.
          type: int
          sample: 0
        comment:
          description: The token's comment.
          type: str
    realm-type:
      description: The realm's type (V(pam), V(pve), V(ad), V(ldap), ...); only in the listing.
      returned: when listing
      type: str
      sample: ad
    comment:
      description: The user's comment.
      returned: when set
      type: str
    email:
      description: The user's e-mail address.
      returned: when set
      type: str
    firstname:
      description: The user's first name.
      returned: when set
      type: str
    lastname:
      description: The user's last name.
      returned: when set
      type: str
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
    'domain': {'type': 'str', 'aliases': ['realm']},
    'user': {'type': 'str', 'aliases': ['name']},
    'userid': {'type': 'str'},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_user_info.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_user_info; the module is a '
    'binary, run by the action plugin ferrox.proxmox.proxmox_user_info. Something ran this file instead: call the module by its name '
    '(ferrox.proxmox.proxmox_user_info) and do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
        mutually_exclusive=[['user', 'userid'], ['domain', 'userid']],
    )
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
