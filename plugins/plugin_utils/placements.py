# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nodes this run's creates chose (``proxmox_kvm``'s ``placement``), kept on the controller.

A task that places (no ``node``, ``placement`` given) runs under the run's placement lock:
it gets every placement made so far in ``_ferrox_placements``, chooses, creates, and
returns its own in ``_ferrox_placement``, which is appended here before the lock is
released. So ten forks choosing at once see each other's choices; placed creates of one
run are serialized while they choose and create. ``strategy: spread`` too: its node
follows from the name, but no node is configured past its memory, and whether the name's
node is full depends on what the run placed there (in check mode nothing else tells).

Where and how: ``ferrox-placements.json`` in the run's directory, replaced atomically under
``ferrox-placements.lock`` (``run_dir.py``), beside the plan's lock.
"""

from __future__ import annotations

import contextlib

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import _wire, run_dir

PLACEMENTS_ARG = _wire.PLACEMENTS_ARG
PLACEMENT_KEY = _wire.PLACEMENT_KEY
PLACEMENTS_FILE = 'ferrox-placements.json'
LOCK_FILE = 'ferrox-placements.lock'
MODULE = 'proxmox_kvm'


def coordinated(module, module_args):
    """Whether the task chooses a node from what the run's other placements took: every
    placing task, since every strategy holds the nodes to their memory."""
    placement = module_args.get('placement')
    return module == MODULE and isinstance(placement, dict) and not module_args.get('node')


def read(directory=None):
    stored = run_dir.read_json(PLACEMENTS_FILE, directory)
    return stored if isinstance(stored, list) else []


@contextlib.contextmanager
def reserving(module, module_args, directory=None):
    """For a coordinated task: holds the lock, hands the placements in ``module_args`` and
    yields a function that stores the binary's result's placement. Otherwise a no-op."""
    if not coordinated(module, module_args):
        yield lambda result: result.pop(PLACEMENT_KEY, None)
        return
    with run_dir.locked(LOCK_FILE, directory):
        placements = read(directory)
        module_args[PLACEMENTS_ARG] = placements

        def store(result):
            placed = result.pop(PLACEMENT_KEY, None)
            if isinstance(placed, dict):
                run_dir.write_json(PLACEMENTS_FILE, placements + [placed], directory)

        yield store
