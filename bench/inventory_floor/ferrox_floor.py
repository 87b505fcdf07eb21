# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The floor of bench/inventory: an inventory plugin that asks no API at all.

It reads an ``ansible-inventory --list`` output (``source:`` in a ``*.floor.yml`` file)
and adds the same hosts, groups and host variables through the calls every inventory
plugin makes (``add_group``, ``add_host``, ``add_child``, ``set_variable`` of unsafe
values). Its wall time is what ``ansible-inventory`` itself costs for that inventory:
start-up, the inventory's own bookkeeping and the ``--list`` dump, which any plugin
pays, however fast it reads the cluster.
"""

from __future__ import annotations

import json

from ansible.plugins.inventory import BaseInventoryPlugin
from ansible.utils.unsafe_proxy import wrap_var

DOCUMENTATION = '''
name: ferrox_floor
short_description: bench/inventory's floor (no API)
description: Adds the hosts, groups and variables of an ansible-inventory --list output.
options:
  plugin:
    description: The name of this plugin.
    required: true
    choices: [ferrox_floor]
  source:
    description: The ansible-inventory --list output to add.
    required: true
'''


def _unwrapped(obj):
    """A value the --list output marked unsafe (``{"__ansible_unsafe": v}``, 2.19+), as v."""
    return obj['__ansible_unsafe'] if list(obj) == ['__ansible_unsafe'] else obj


class InventoryModule(BaseInventoryPlugin):
    NAME = 'ferrox_floor'

    def verify_file(self, path):
        return path.endswith('.floor.yml')

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._read_config_data(path)
        with open(self.get_option('source')) as f:
            listed = json.load(f, object_hook=_unwrapped)
        hostvars = listed.pop('_meta', {}).get('hostvars', {})
        # Empty groups are named only among their parent's children.
        named = list(listed.get('all', {}).get('children', [])) + list(listed)
        named += [c for members in listed.values() for c in members.get('children', [])]
        for group in dict.fromkeys(named):
            if group not in ('all', 'ungrouped'):
                self.inventory.add_group(group)
        for group, members in listed.items():
            for host in members.get('hosts', []):
                self.inventory.add_host(host, group=None if group in ('all', 'ungrouped') else group)
            for child in members.get('children', []):
                if group not in ('all',) and child != 'ungrouped':
                    self.inventory.add_child(group, child)
        for host, variables in hostvars.items():
            self.inventory.add_host(host)
            for key, value in variables.items():
                self.inventory.set_variable(host, key, wrap_var(value))
