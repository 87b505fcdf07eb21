# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: plan
type: aggregate
short_description: Summary of what a C(--check) run of ferrox.proxmox tasks would change
description:
  - At the end of an C(ansible-playbook --check) run, prints per VM what the ferrox.proxmox tasks of the run would
    create, change (which config keys, the power state) or destroy, then the totals, the way C(terraform plan) ends.
  - The summary is read from the run's plan, which the collection's action plugins keep on the controller during a
    check-mode run (every check-mode task plans against the cluster as the earlier tasks would leave it).
  - Nothing is printed for a run without C(--check), or when no ferrox.proxmox task planned a change.
  - Values only Proxmox VE decides (MAC addresses of new NICs, volumes of new disks) are C((known after apply)).
  - A task the cluster would refuse for lack of a privilege is listed with C(!) and the privilege and path it needs;
    it changes nothing in the plan.
version_added: 0.1.0
requirements:
  - Enable it with C(callbacks_enabled = ferrox.proxmox.plan) in C(ansible.cfg) (or C(ANSIBLE_CALLBACKS_ENABLED)).
'''

EXAMPLES = r'''
# ansible.cfg
# [defaults]
# callbacks_enabled = ferrox.proxmox.plan
#
# $ ansible-playbook --check site.yml
# ...
# FERROX PLAN *****************************************************************
#   + VM 101 web1 on pve1: create (cores, memory, name, ostype, scsi0, scsihw); then net0, scsi1; start
#   ~ VM 100 web01 on pve1: memory, net0
#   - VM 102 old on pve2: destroy
#   ! VM 101: proxmox_disk scsi1 refused, needs Datastore.AllocateSpace on /storage/vmdata
# Plan: 1 to create, 1 to change, 1 to destroy, 1 refused.
'''

from ansible import context
from ansible.plugins.callback import CallbackBase

from ansible_collections.ferrox.proxmox.plugins.plugin_utils.plan_store import read_plan

POWER_WORDS = {'running': 'start', 'stopped': 'stop', 'paused': 'pause', 'hibernated': 'hibernate'}
SNAPSHOT_WORDS = {'take': 'snapshot', 'remove': 'remove snapshot', 'rollback': 'roll back to snapshot'}


def summarize(effects):
    """Per vmid: what happens, in the order first touched."""
    vms = {}
    for e in effects:
        if e.get('kind') in ('volume', 'acl', 'pool_config', 'pool_storage'):
            continue
        vmid = e.get('vmid')
        vm = vms.setdefault(vmid, {'vmid': vmid, 'node': e.get('node'), 'name': None, 'created': False,
                                   'removed': False, 'created_keys': [], 'keys': [], 'steps': [],
                                   'refused': []})
        kind = e.get('kind')
        if kind == 'create':
            vm.update(created=True, removed=False, node=e.get('node'), name=e.get('name'),
                      created_keys=sorted(e.get('config', {})), keys=[], steps=[])
            if e.get('clone_of') is not None:
                vm['steps'].append('clone of VM %s' % e['clone_of'])
        elif kind == 'config':
            for key in sorted(list(e.get('set', {})) + list(e.get('delete', [])) + list(e.get('revert', []))):
                if key not in vm['keys']:
                    vm['keys'].append(key)
            name = e.get('set', {}).get('name')
            if name:
                vm['name'] = name
        elif kind == 'power':
            vm['steps'].append(POWER_WORDS.get(e.get('status'), e.get('status')))
        elif kind == 'template':
            vm['steps'].append('convert to template')
        elif kind == 'migrate':
            vm['steps'].append('migrate to %s' % e.get('to'))
            vm['node'] = e.get('to')
        elif kind == 'pool':
            if e.get('pool') is None:
                vm['steps'].append('leave its pool')
            elif not vm['created']:
                vm['steps'].append('move to pool %s' % e.get('pool'))
        elif kind == 'remove':
            vm['removed'] = True
        elif kind == 'snapshot':
            vm['steps'].append(SNAPSHOT_WORDS.get(e.get('action'), 'snapshot') + ' ' + str(e.get('name')))
        elif kind == 'refused':
            vm['refused'].append(e)
    return [vm for vm in vms.values() if not (vm['created'] and vm['removed'])]


def files(effects):
    """Files put on or removed from storages (proxmox_template), the last word per volid
    and node, in the order first touched."""
    last = {}
    for e in effects:
        if e.get('kind') == 'volume':
            last[(e.get('volid'), e.get('node'))] = e
    return ['  %s file %s on %s' % ('-' if e.get('removed') else '+', volid, node)
            for (volid, node), e in last.items()]


def render(vms):
    """The summary lines and the totals line."""
    lines = []
    counts = {'create': 0, 'change': 0, 'destroy': 0}
    refused = []
    for vm in vms:
        for r in vm['refused']:
            where = ' on %s' % r['path'] if r.get('path') else ''
            refused.append('  ! VM %s: %s refused, needs %s%s' % (vm['vmid'], r.get('task'), r.get('privilege'), where))
        title = 'VM %s%s on %s' % (vm['vmid'], ' ' + vm['name'] if vm['name'] else '', vm['node'])
        rest = []
        if vm['keys']:
            rest.append(', '.join(vm['keys']))
        rest.extend(vm['steps'])
        if vm['removed']:
            counts['destroy'] += 1
            lines.append('  - %s: destroy' % title)
        elif vm['created']:
            counts['create'] += 1
            then = '; then ' + '; '.join(rest) if rest else ''
            lines.append('  + %s: create (%s)%s' % (title, ', '.join(vm['created_keys']), then))
        elif rest:
            counts['change'] += 1
            lines.append('  ~ %s: %s' % (title, '; '.join(rest)))
    totals = 'Plan: %d to create, %d to change, %d to destroy' % (counts['create'], counts['change'], counts['destroy'])
    # A task the cluster would refuse changes nothing; it is listed after the changes.
    lines.extend(refused)
    totals += ', %d refused.' % len(refused) if refused else '.'
    return lines, totals


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'ferrox.proxmox.plan'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        # vmid -> name, learnt from the results (effects on existing VMs carry no name).
        self.names = {}

    def v2_runner_on_ok(self, result):
        res = getattr(result, '_result', None) or {}
        for vm in res.get('proxmox_vms') or []:
            if isinstance(vm, dict) and vm.get('vmid') is not None and vm.get('name'):
                self.names[vm['vmid']] = vm['name']
        name = ((res.get('invocation') or {}).get('module_args') or {}).get('name')
        if res.get('vmid') is not None and name:
            self.names.setdefault(res['vmid'], name)

    def v2_playbook_on_stats(self, stats):
        if not context.CLIARGS.get('check'):
            return
        effects = read_plan().get('effects', [])
        vms = summarize(effects)
        for vm in vms:
            vm['name'] = vm['name'] or self.names.get(vm['vmid'])
        lines, totals = render(vms)
        file_lines = files(effects)
        if file_lines:
            lines = file_lines + lines
            totals = totals[:-1] + ', %d file%s to put or remove.' % (len(file_lines), '' if len(file_lines) == 1 else 's')
        if not lines:
            return
        self._display.banner('FERROX PLAN (values decided by Proxmox VE are known after apply)')
        for line in lines:
            self._display.display(line)
        self._display.display(totals)
        self._display.display('')
