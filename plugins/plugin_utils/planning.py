# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One check-mode run of a module binary with the playbook run's plan.

The exchange (the binaries' side is ``common/dryrun``):
  1. the plan is read under the lock and handed to the binary in ``_ferrox_plan``;
  2. the binary plans against the cluster with the plan applied and returns its own
     effects in ``_ferrox_plan_effects`` (removed from the task's result here);
  3. under the lock, the effects are appended, unless one of them takes a vmid another
     fork reserved in the meantime: then the binary runs again, still under the lock,
     with the plan as it is now, and that run's effects are appended.
The binaries run in parallel; only the rare re-run is serialised, so parallel hosts get
distinct predicted vmids at the cost of at most one more run each.
"""

from __future__ import annotations

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import _wire, plan_store

PLAN_ARG = _wire.PLAN_ARG
EFFECTS_KEY = _wire.EFFECTS_KEY


def run_planned(run_binary, module_args, directory=None):
    """``run_binary(args) -> result`` in check mode, with the plan given and recorded."""
    with plan_store.locked(directory):
        plan = plan_store.read_plan(directory)
    result = run_binary(dict(module_args, **{PLAN_ARG: plan}))
    effects = result.pop(EFFECTS_KEY, None)
    if not effects:
        return result
    with plan_store.locked(directory):
        current = plan_store.read_plan(directory)
        if plan_store.conflicts(current, effects):
            result = run_binary(dict(module_args, **{PLAN_ARG: current}))
            effects = result.pop(EFFECTS_KEY, None) or []
        if effects:
            plan_store.write_plan(plan_store.with_effects(current, effects), directory)
    return result
