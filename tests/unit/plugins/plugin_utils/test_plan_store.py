# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plan_store.py: the check-mode plan file of one run, read, replaced and appended to."""

from __future__ import annotations

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import plan_store


def create(vmid):
    return {'kind': 'create', 'vmid': vmid, 'node': 'pve1', 'config': {}}


def test_an_empty_directory_reads_as_an_empty_plan(tmp_path):
    assert plan_store.read_plan(str(tmp_path)) == {'effects': []}


def test_a_written_plan_reads_back(tmp_path):
    plan = {'effects': [create(100)]}
    plan_store.write_plan(plan, str(tmp_path))
    assert plan_store.read_plan(str(tmp_path)) == plan


def test_a_damaged_file_reads_as_an_empty_plan_rather_than_failing_every_task(tmp_path):
    with open(plan_store.plan_path(str(tmp_path)), 'w') as f:
        f.write('{not json')
    assert plan_store.read_plan(str(tmp_path)) == {'effects': []}


def test_a_file_without_a_list_of_effects_reads_as_an_empty_plan(tmp_path):
    for stored in ('[]', '{"effects": {}}', '{}'):
        with open(plan_store.plan_path(str(tmp_path)), 'w') as f:
            f.write(stored)
        assert plan_store.read_plan(str(tmp_path)) == {'effects': []}, stored


def test_reserved_vmids_are_those_of_creates_only():
    plan = {'effects': [create(100), {'kind': 'remove', 'vmid': 101, 'node': 'pve1'}, create(102)]}
    assert plan_store.reserved(plan) == {100, 102}


def test_conflicts_are_the_vmids_both_reserve_sorted():
    plan = {'effects': [create(103), create(101)]}
    assert plan_store.conflicts(plan, [create(101), create(103), create(104)]) == [101, 103]
    assert plan_store.conflicts(plan, [create(105)]) == []


def test_with_effects_appends_without_changing_the_plan():
    plan = {'effects': [create(100)]}
    assert plan_store.with_effects(plan, [create(101)]) == {'effects': [create(100), create(101)]}
    assert plan == {'effects': [create(100)]}
