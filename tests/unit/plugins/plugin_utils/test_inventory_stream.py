# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The inventory plugin builds the inventory from the binary's lines as they come, and an
inventory source that fails after some hosts were added leaves none of them behind.
The binary is stood in for by a script that prints lines as ``ferrox inventory -`` does."""

from __future__ import annotations

import json
import stat
import sys

import pytest

from ansible.errors import AnsibleError
from ansible.inventory.data import InventoryData
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader, inventory_loader
from ansible.utils.collection_loader import AnsibleCollectionConfig

NAME = 'ferrox.proxmox.proxmox'

NODE = {'node': {'name': 'pve1', 'type': 'node', 'online': True}}


def guest(vmid, name):
    return {'guest': {'name': name, 'type': 'qemu', 'node': 'pve1', 'status': 'running',
                      'vars': {'proxmox_vmid': vmid, 'proxmox_name': name}}}


@pytest.fixture
def plugin():
    """The plugin as ansible-inventory loads it (its options come from its documentation)."""
    if AnsibleCollectionConfig.collection_finder is None:
        init_plugin_loader()
    loaded = inventory_loader.get(NAME)
    assert loaded is not None
    return loaded


def binary_printing(tmp_path, monkeypatch, plugin, records, code):
    """A stand-in binary that prints ``records`` (one JSON line each) and exits ``code``."""
    script = tmp_path / 'ferrox'
    lines = ''.join("printf '%%s\\n' '%s'\n" % json.dumps(r) for r in records)
    script.write_text('#!/bin/sh\ncat >/dev/null\n%sexit %d\n' % (lines, code))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(sys.modules[type(plugin).__module__], 'binary_path', lambda: str(script))


def source(tmp_path):
    path = tmp_path / 'cluster.proxmox.yml'
    path.write_text('plugin: ferrox.proxmox.proxmox\nuser: root@pam\npassword: secret\n')
    return str(path)


def inventory_with_another_source():
    inventory = InventoryData()
    inventory.add_group('existing')
    inventory.add_host('elsewhere', group='existing')
    return inventory


def test_the_hosts_come_from_the_lines_and_the_cache_keeps_them(tmp_path, monkeypatch, plugin):
    records = [NODE, guest(100, 'web1'), guest(101, 'web2'), {'done': {'guests': 2, 'requests': 4}}]
    binary_printing(tmp_path, monkeypatch, plugin, records, 0)
    inventory = inventory_with_another_source()
    plugin.parse(inventory, DataLoader(), source(tmp_path), cache=False)
    assert {'web1', 'web2', 'pve1', 'elsewhere'} <= set(inventory.hosts)
    assert inventory.get_host('web2').vars['proxmox_vmid'] == 101
    assert 'proxmox_pve1_qemu' in inventory.groups


def test_a_source_that_fails_after_some_hosts_leaves_none_of_them(tmp_path, monkeypatch, plugin):
    records = [NODE, guest(100, 'web1'), guest(101, 'web2'),
               {'error': 'the credentials are no longer accepted (401)'}]
    binary_printing(tmp_path, monkeypatch, plugin, records, 1)
    inventory = inventory_with_another_source()
    with pytest.raises(AnsibleError, match='no longer accepted'):
        plugin.parse(inventory, DataLoader(), source(tmp_path), cache=False)
    assert set(inventory.hosts) == {'elsewhere'}
    assert set(inventory.groups) == {'all', 'ungrouped', 'existing'}
    assert [h.name for h in inventory.groups['existing'].get_hosts()] == ['elsewhere']


def test_a_binary_that_ends_before_done_fails_the_source_naming_its_exit_code(tmp_path, monkeypatch, plugin):
    binary_printing(tmp_path, monkeypatch, plugin, [NODE, guest(100, 'web1')], 3)
    inventory = InventoryData()
    with pytest.raises(AnsibleError, match='exit code 3 before the inventory was complete'):
        plugin.parse(inventory, DataLoader(), source(tmp_path), cache=False)
    assert 'web1' not in inventory.hosts and 'pve1' not in inventory.hosts
