# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""binary_module.py: the action plugin picks the platform of the host the task runs on
(the delegated node's, in local mode), and a platform without a binary fails the task
before anything runs, naming that host."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import binary_module
from ansible_collections.ferrox.proxmox.plugins.plugin_utils.binary_module import BinaryModuleAction


class KvmAction(BinaryModuleAction):
    MODULE = 'proxmox_kvm'

    def _execute_module(self, *args, **kwargs):
        raise AssertionError('the binary ran for a platform without one')

    def _low_level_execute_command(self, *args, **kwargs):
        raise AssertionError('the target was asked for its platform although the facts tell it')


def action(delegate_to=None):
    task = SimpleNamespace(async_val=0, check_mode=False, args={'node': 'pve1', 'vmid': 100},
                           action='ferrox.proxmox.proxmox_kvm', delegate_to=delegate_to)
    connection = SimpleNamespace(transport='ssh', has_native_async=False, _shell=SimpleNamespace(tmpdir='/tmp/x'))
    return KvmAction(task, connection, play_context=None, loader=None, templar=None)


def facts(system, machine):
    return {'ansible_facts': {'system': system, 'architecture': machine}}


@pytest.fixture(autouse=True)
def shipped_linux_x86_64_only(monkeypatch):
    monkeypatch.setattr(binary_module, 'shipped_platforms', lambda: ['linux_x86_64'])
    monkeypatch.delenv(binary_module.PLATFORM_ENV, raising=False)


def test_a_delegated_task_without_a_binary_for_its_node_names_the_node():
    task_vars = {'inventory_hostname': 'localhost',
                 'hostvars': {'pve1': facts('Linux', 'riscv64'), 'localhost': facts('Linux', 'x86_64')},
                 'ansible_delegated_vars': {'pve1': {'inventory_hostname': 'pve1'}}}
    result = action(delegate_to='pve1').run(task_vars=task_vars)
    assert result['failed'] and not result['changed']
    assert result['msg'].startswith(
        'ferrox.proxmox.proxmox_kvm has no binary for platform linux_riscv64 of pve1, '
        'the host the task is delegated to (from gathered facts). '
        'Platforms shipped in this installation: linux_x86_64.'), result['msg']


def test_a_task_on_its_own_host_names_that_host():
    task_vars = {'inventory_hostname': 'web01', 'ansible_facts': {'system': 'FreeBSD', 'architecture': 'amd64'}}
    result = action().run(task_vars=task_vars)
    assert result['failed']
    assert "for platform freebsd_amd64 of web01, the task's host (from gathered facts)" in result['msg']


def test_the_delegated_nodes_ferrox_platform_is_the_one_that_counts():
    task_vars = {'inventory_hostname': 'localhost', 'ferrox_platform': 'linux_x86_64',
                 'hostvars': {}, 'ansible_delegated_vars': {'pve1': {'ferrox_platform': 'linux_aarch64'}}}
    result = action(delegate_to='pve1').run(task_vars=task_vars)
    assert result['failed']
    assert 'for platform linux_aarch64 of pve1, the host the task is delegated to (from the variable ferrox_platform)' in result['msg']
