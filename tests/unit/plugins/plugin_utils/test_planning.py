# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""planning.py: one check-mode run of a binary with the run's plan, its effects appended,
and the re-run when another fork reserved the same vmid first."""

from __future__ import annotations

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import plan_store
from ansible_collections.ferrox.proxmox.plugins.plugin_utils.planning import EFFECTS_KEY, PLAN_ARG, run_planned


def create(vmid):
    return {'kind': 'create', 'vmid': vmid, 'node': 'pve1', 'config': {}}


def fake_binary(calls, sneak=None):
    """A binary predicting the lowest vmid from 100 not reserved in the plan it got;
    ``sneak`` runs between its read and its answer (another fork finishing first)."""
    def run(args):
        taken = plan_store.reserved(args[PLAN_ARG])
        vmid = next(i for i in range(100, 200) if i not in taken)
        calls.append(vmid)
        if sneak and len(calls) == 1:
            sneak()
        return {'changed': True, 'vmid': vmid, EFFECTS_KEY: [create(vmid)]}
    return run


def test_a_run_gets_the_plan_and_its_effects_are_appended_not_returned(tmp_path):
    calls = []
    result = run_planned(fake_binary(calls), {'name': 'a'}, directory=str(tmp_path))
    assert result == {'changed': True, 'vmid': 100}
    assert EFFECTS_KEY not in result
    assert calls == [100]
    assert plan_store.reserved(plan_store.read_plan(str(tmp_path))) == {100}


def test_the_binary_gets_the_task_args_and_the_plan_so_far(tmp_path):
    d = str(tmp_path)
    plan_store.write_plan({'effects': [create(100)]}, d)
    seen = []

    def binary(args):
        seen.append(args)
        return {'changed': False}
    assert run_planned(binary, {'name': 'a'}, directory=d) == {'changed': False}
    assert seen == [{'name': 'a', PLAN_ARG: {'effects': [create(100)]}}]


def test_a_vmid_another_fork_took_meanwhile_means_one_rerun_under_the_lock(tmp_path):
    d = str(tmp_path)
    run_planned(fake_binary([]), {'name': 'a'}, directory=d)

    def other_fork():
        with plan_store.locked(d):
            plan_store.write_plan(plan_store.with_effects(plan_store.read_plan(d), [create(101)]), d)
    calls = []
    result = run_planned(fake_binary(calls, sneak=other_fork), {'name': 'b'}, directory=d)
    assert calls == [101, 102]
    assert result['vmid'] == 102
    assert [e['vmid'] for e in plan_store.read_plan(d)['effects']] == [100, 101, 102]


def test_a_failed_run_leaves_the_plan_alone(tmp_path):
    d = str(tmp_path)
    run_planned(fake_binary([]), {'name': 'a'}, directory=d)
    result = run_planned(lambda args: {'failed': True, 'msg': 'no'}, {}, directory=d)
    assert result == {'failed': True, 'msg': 'no'}
    assert [e['vmid'] for e in plan_store.read_plan(d)['effects']] == [100]
