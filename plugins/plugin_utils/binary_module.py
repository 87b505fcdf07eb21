# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller-side shim in front of every ferrox.proxmox module.

Every module is in one static binary per platform, ``plugins/modules/__bin/<platform>/ferrox``
(hidden from ``ansible-doc -l``, which lists the docs-only ``plugins/modules/<m>.py``).
The action plugin of the same name picks the binary for the task's target and runs it
with ``_execute_module``, naming the module in ``_ferrox_module``, so copying, become,
async, check mode, diff, no_log and module_defaults work as for any module.

Platform of the target, first answer wins:
  1. the variable ``ferrox_platform`` (e.g. ``linux_aarch64``) of the task or of the host
     it runs on (the delegated one's when delegated);
  2. ``FERROX_PLATFORM`` in the controller's environment;
  3. a local connection (``delegate_to: localhost``): Python's ``platform`` module;
  4. gathered facts of the host the task runs on (``system``, ``architecture``);
  5. one ``uname -sm`` on the target.

A platform without a shipped binary fails the task before anything runs, naming the
host the task runs on (the node it is delegated to, in local mode).

Seams for subclasses: ``module_args`` builds what the binary receives,
``post_process`` edits its result.

In check mode the binary also gets the playbook run's plan and returns its own planned
effects (``planning.py``), so every check-mode task sees what the earlier ones would do.

A task that looks its VM up by name gets the run's name index, and a task that listed
the cluster returns a fresh one (``name_index.py``); async tasks do neither. A task that
logs in with a password gets the run's ticket for its identity, and one that got a ticket
leaves it (``ticket_store.py``); the first login of a user on a cluster is serialized
across forks and ``api_host`` spellings, so one TOTP code logs in once per cluster. Async
tasks get the ticket but leave none.

The binary's lines of progress (``_ferrox_progress``: calls it repeated because Proxmox VE
did not act on them, such as a 503 from a proxy in front of pveproxy) are printed under
``-v``, one line each, and taken out of the result.

A ``proxmox_kvm`` task that has ferrox choose its node (``placement`` without ``node``)
gets the run's placements and leaves its own, under the run's placement lock
(``placements.py``).

The binary and this shim speak one protocol version (``PROTOCOL_VERSION``, sent in
``_ferrox_protocol``; ``common/ansible/src/protocol.rs`` holds the same number): a binary
of another build fails the task naming both versions and ``cargo collection build``.
"""

from __future__ import annotations

import os
import platform

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import _wire, name_index, placements, ticket_store
from ansible_collections.ferrox.proxmox.plugins.plugin_utils.planning import run_planned

COLLECTION = 'ferrox.proxmox'
PLATFORM_VAR = 'ferrox_platform'
PLATFORM_ENV = 'FERROX_PLATFORM'
# The binary of every module, and the argument that names the module it runs
# (modules/ferrox and common/ansible/src/protocol.rs).
BINARY = _wire.BINARY
MODULE_ARG = _wire.MODULE_ARG
# The private arguments and result keys this shim and the binary exchange, versioned.
PROTOCOL_ARG = _wire.PROTOCOL_ARG
PROTOCOL_VERSION = _wire.PROTOCOL_VERSION
# What the collection's tarball ships (collection/src/platform.rs builds the same).
RELEASED_PLATFORMS = _wire.RELEASED_PLATFORMS
# The binary's lines of progress (calls repeated because PVE did not act on them).
PROGRESS_KEY = _wire.PROGRESS_KEY

display = Display()

# plugins/modules/__bin, next to this file's plugins/plugin_utils.
BIN_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules', '__bin')

# (system, machine) as uname/platform spell them -> the __bin folder name.
# collection/src/platform.rs names the same folders for the build.
_PLATFORMS = {
    ('linux', 'x86_64'): 'linux_x86_64',
    ('linux', 'amd64'): 'linux_x86_64',
    ('linux', 'aarch64'): 'linux_aarch64',
    ('linux', 'arm64'): 'linux_aarch64',
    ('darwin', 'arm64'): 'darwin_arm64',
    ('darwin', 'aarch64'): 'darwin_arm64',
    ('darwin', 'x86_64'): 'darwin_x86_64',
}


def platform_name(system, machine):
    """The ``__bin`` folder for a system/machine pair (unknown pairs get a descriptive name)."""
    key = (str(system).strip().lower(), str(machine).strip().lower())
    return _PLATFORMS.get(key, '%s_%s' % key)


def shipped_platforms():
    """The platforms this installation carries the binary for."""
    try:
        names = os.listdir(BIN_ROOT)
    except OSError:
        return []
    return sorted(n for n in names if os.path.isfile(os.path.join(BIN_ROOT, n, BINARY)))


def missing_platform_message(module, target, how, shipped, where=None):
    """Why ``module`` cannot run on ``target`` (found ``how``) and the ways out; ``where``
    names the host it would run on (the delegated node in local mode), when there is one."""
    if target in RELEASED_PLATFORMS:
        way_out = (
            "The released collection ships %s: install it from Galaxy, or build every platform with "
            "`cargo collection build --all-platforms` before `cargo collection tarball`"
            % ', '.join(RELEASED_PLATFORMS)
        )
    else:
        way_out = (
            "The collection ships %s only: build the binaries on such a machine with `cargo collection build` "
            "and install the collection from there (see the collection's README, \"Platforms\")"
            % ', '.join(RELEASED_PLATFORMS)
        )
    return (
        "%s.%s has no binary for platform %s%s (%s). Platforms shipped in this installation: %s. "
        "%s, or run the task on a host of a shipped platform, such as a Proxmox VE node, with delegate_to."
        % (COLLECTION, module, target, ' of %s' % where if where else '', how,
           ', '.join(shipped) or 'none', way_out)
    )


class BinaryModuleAction(ActionBase):
    """Runs ``MODULE``'s binary for the task's target platform."""

    MODULE = ''
    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(BinaryModuleAction, self).run(tmp, task_vars)
        del tmp  # tmp no longer has any effect

        target, how = self.target_platform(task_vars)
        shipped = shipped_platforms()
        if target not in shipped:
            result.update(failed=True, changed=False,
                          msg=missing_platform_message(self.MODULE, target, how, shipped, self.runs_on(task_vars)))
            return result

        wrap_async = self._task.async_val and not self._connection.has_native_async

        def execute(module_args):
            return self._execute_module(
                module_name='%s.__bin.%s.%s' % (COLLECTION, target, BINARY),
                module_args=module_args,
                task_vars=task_vars,
                wrap_async=wrap_async,
            )

        module_args = self.module_args(task_vars)
        try:
            names = None if wrap_async else name_index.for_task(self.MODULE, module_args)
            with ticket_store.handover(module_args, wrap_async) as (ticket, refusal):
                if refusal is not None:
                    result.update(failed=True, changed=False, msg=refusal)
                    return result
                module_result = self._run_binary(execute, module_args, names, ticket, wrap_async)
        except ValueError as e:
            result.update(failed=True, changed=False, msg=str(e))
            return result
        # One line per call repeated because PVE did not act on it, under -v.
        for line in module_result.pop(PROGRESS_KEY, None) or ():
            display.v('%s: %s' % (self._task.action, line), host=task_vars.get('inventory_hostname'))
        result = merge_hash(result, self.post_process(module_result, task_vars))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _run_binary(self, execute, module_args, names, ticket, wrap_async):
        """One run of the binary with the run's index, ticket and (check mode) plan; the
        ticket it got, and the cluster it showed its endpoint to be, are stored before the
        caller releases the user's login lock."""
        if names is not None:
            module_args[name_index.NAMES_ARG] = names
        if ticket is not None:
            module_args[ticket_store.TICKET_ARG] = ticket
        with placements.reserving(self.MODULE, module_args) as store_placement:
            if self._task.check_mode and not wrap_async:
                # One plan for the whole --check run: the binary plans against the cluster as
                # the earlier tasks would leave it, and its effects join the plan.
                module_result = run_planned(execute, module_args)
            else:
                module_result = execute(module_args)
            store_placement(module_result)
        name_index.store(module_result.pop(name_index.NAMES_KEY, None))
        # Taken out before anything (callbacks, -vvv, register) sees the result.
        got = module_result.pop(ticket_store.TICKET_KEY, None)
        if ticket is not None and not wrap_async:
            ticket_store.store(module_args, got)
        return module_result

    def module_args(self, task_vars):
        """The task's arguments (module_defaults already applied) the binary receives."""
        return dict(self._task.args)

    def post_process(self, module_result, task_vars):
        """The binary's result as the task reports it."""
        return module_result

    def _update_module_args(self, module_name, module_args, task_vars, *args, **kwargs):
        # The binary names itself in messages ("Unsupported parameters for (...) module")
        # after _ansible_module_name: keep that the name the task used, not __bin.<platform>.
        super(BinaryModuleAction, self)._update_module_args(module_name, module_args, task_vars, *args, **kwargs)
        module_args['_ansible_module_name'] = self._task.action
        module_args[MODULE_ARG] = self.MODULE
        module_args[PROTOCOL_ARG] = PROTOCOL_VERSION

    def runs_on(self, task_vars):
        """The host the task runs on, in the user's terms: the node it is delegated to (where a
        task without ``api_host`` finds ``pvesh``), else the play's host."""
        if self._task.delegate_to:
            return '%s, the host the task is delegated to' % self._task.delegate_to
        return "%s, the task's host" % task_vars.get('inventory_hostname', 'localhost')

    def _host_vars(self, task_vars):
        """The variables of the host the task runs on: a delegated task's ``task_vars`` are
        the play host's, its node's are in ``ansible_delegated_vars``."""
        if self._task.delegate_to:
            return (task_vars.get('ansible_delegated_vars') or {}).get(self._task.delegate_to) or {}
        return task_vars

    def target_platform(self, task_vars):
        """``(platform, how it was found)`` for the host the task runs on."""
        override = self._host_vars(task_vars).get(PLATFORM_VAR)
        if override:
            return str(override), 'from the variable %s' % PLATFORM_VAR
        override = os.environ.get(PLATFORM_ENV)
        if override:
            return override, 'from %s in the controller environment' % PLATFORM_ENV
        if self._connection.transport in ('local', 'ansible.builtin.local'):
            return platform_name(platform.system(), platform.machine()), 'the controller, local connection'
        facts = self._target_facts(task_vars)
        if facts.get('system') and facts.get('architecture'):
            return platform_name(facts['system'], facts['architecture']), 'from gathered facts'
        res = self._low_level_execute_command('uname -sm', sudoable=False)
        words = res.get('stdout', '').split()
        if res.get('rc') != 0 or len(words) != 2:
            return 'unknown', '`uname -sm` on the target answered %r' % (res.get('stdout', '') + res.get('stderr', '')).strip()
        return platform_name(words[0], words[1]), 'from `uname -sm` on the target'

    def _target_facts(self, task_vars):
        if self._task.delegate_to:
            hostvars = task_vars.get('hostvars', {}).get(self._task.delegate_to, {})
            return hostvars.get('ansible_facts', {}) or {}
        return task_vars.get('ansible_facts', {}) or {}
