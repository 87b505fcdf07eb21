# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""name_index.py: the run's index of VM names, stored per cluster, aged, and handed to a
task by name as what it holds for that name."""

from __future__ import annotations

import time

import pytest

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import name_index, run_dir

KEY = 'ansible@pve!automation@pve.example:8006'
NODES = [{'name': 'pve1', 'status': 'online'}]
STORAGES = [{'storage': 'local-lvm', 'node': 'pve1', 'content': ['images'], 'shared': False}]


def fresh(key=KEY, age=0, **names):
    """The index a task's listing returns (``_ferrox_names`` in its result)."""
    return {'cluster': key, 'age': age, 'nodes': NODES, 'storages': STORAGES,
            'names': names or {'web01': [[100, 'pve1', 'qemu', None]]}}


@pytest.fixture(autouse=True)
def default_max_age(monkeypatch):
    monkeypatch.delenv(name_index.MAX_AGE_ENV, raising=False)


def test_the_maximum_age_is_60_seconds_by_default():
    assert name_index.max_age() == 60


@pytest.mark.parametrize('raw, seconds', [('0', 0), ('2.5', 2.5), (' 30 ', 30)])
def test_the_maximum_age_is_read_from_the_environment(monkeypatch, raw, seconds):
    monkeypatch.setenv(name_index.MAX_AGE_ENV, raw)
    assert name_index.max_age() == seconds


@pytest.mark.parametrize('bad', ['soon', '-1', 'nan'])
def test_a_maximum_age_that_is_no_number_is_refused_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv(name_index.MAX_AGE_ENV, bad)
    with pytest.raises(ValueError) as refused:
        name_index.max_age()
    assert str(refused.value) == (
        'FERROX_NAME_INDEX_MAX_AGE must be a number of seconds (0 turns the name index off), got %r' % bad)


def test_every_module_that_looks_up_by_name_gets_the_index_vm_info_too(tmp_path):
    for module in ('proxmox_kvm', 'proxmox_disk', 'proxmox_nic', 'proxmox_vm_info'):
        assert name_index.for_task(module, {'name': 'web01'}, str(tmp_path)) == {'max_age': 60, 'clusters': {}}


@pytest.mark.parametrize('module, args', [
    ('proxmox_template', {'name': 'web01'}),
    ('proxmox_kvm', {}),
    ('proxmox_kvm', {'name': ''}),
    ('proxmox_kvm', {'name': 7}),
    ('proxmox_kvm', {'name': 'web01', 'vmid': 100}),
    ('proxmox_kvm', {'name': 'web01', 'vmid': '100'}),
], ids=['other module', 'no name', 'empty name', 'name not a string', 'vmid', 'vmid as text'])
def test_a_task_that_is_no_lookup_by_name_alone_gets_nothing(tmp_path, module, args):
    assert name_index.for_task(module, args, str(tmp_path)) is None


@pytest.mark.parametrize('vmid', [None, '', 0, '0'])
def test_a_vmid_of_none_or_zero_is_no_vmid(tmp_path, vmid):
    assert name_index.for_task('proxmox_kvm', {'name': 'web01', 'vmid': vmid}, str(tmp_path)) is not None


def test_an_index_turned_off_hands_out_nothing(tmp_path, monkeypatch):
    name_index.store(fresh(), str(tmp_path))
    monkeypatch.setenv(name_index.MAX_AGE_ENV, '0')
    assert name_index.for_task('proxmox_kvm', {'name': 'web01'}, str(tmp_path)) is None


def test_a_task_gets_the_guests_of_its_name_with_the_nodes_storages_and_age(tmp_path):
    d = str(tmp_path)
    name_index.store(fresh(age=2, db=[[101, 'pve1', 'qemu', 'prod']]), d)
    given = name_index.for_task('proxmox_disk', {'name': 'db'}, d)
    entry = given['clusters'][KEY]
    assert entry['guests'] == [[101, 'pve1', 'qemu', 'prod']]
    assert (entry['nodes'], entry['storages']) == (NODES, STORAGES)
    assert 2 <= entry['age'] < 7, 'the listing was 2 seconds old when stored'


def test_a_name_the_index_lacks_gets_no_guests(tmp_path):
    name_index.store(fresh(), str(tmp_path))
    given = name_index.for_task('proxmox_kvm', {'name': 'db'}, str(tmp_path))
    assert given['clusters'][KEY]['guests'] == []


def test_each_cluster_and_identity_keeps_its_own_index_and_a_new_listing_replaces_it(tmp_path):
    d = str(tmp_path)
    name_index.store(fresh(), d)
    name_index.store(fresh(key='other@pve@pve.example:8006', web01=[[200, 'pve2', 'qemu', None]]), d)
    name_index.store(fresh(web01=[[100, 'pve2', 'qemu', None]]), d)
    clusters = name_index.for_task('proxmox_kvm', {'name': 'web01'}, d)['clusters']
    assert clusters[KEY]['guests'] == [[100, 'pve2', 'qemu', None]]
    assert clusters['other@pve@pve.example:8006']['guests'] == [[200, 'pve2', 'qemu', None]]


@pytest.mark.parametrize('bad', [None, 'x', {'age': 0}, {'cluster': 7}, dict(fresh(), age='soon')],
                         ids=['none', 'text', 'no cluster', 'cluster not text', 'age not a number'])
def test_what_is_no_index_is_not_stored(tmp_path, bad):
    name_index.store(bad, str(tmp_path))
    assert name_index.read_index(str(tmp_path)) == {}


def test_the_stored_time_is_the_listings_not_the_storing(tmp_path):
    before = time.time()
    name_index.store(fresh(age=10), str(tmp_path))
    at = name_index.read_index(str(tmp_path))[KEY]['at']
    assert before - 10 - 1 <= at <= time.time() - 10


def test_a_damaged_index_reads_as_empty(tmp_path):
    with open(name_index.index_path(str(tmp_path)), 'w') as f:
        f.write('[1, 2')
    assert name_index.read_index(str(tmp_path)) == {}


def test_an_index_that_is_no_mapping_reads_as_empty(tmp_path):
    run_dir.write_json(name_index.INDEX_FILE, [1, 2], str(tmp_path))
    assert name_index.read_index(str(tmp_path)) == {}


def test_an_unreadable_cluster_entry_is_skipped_the_others_are_handed_out(tmp_path):
    d = str(tmp_path)
    name_index.store(fresh(), d)
    index = name_index.read_index(d)
    index['broken'] = {'at': 'yesterday', 'nodes': [], 'storages': [], 'names': {}}
    index['partial'] = {'at': time.time()}
    run_dir.write_json(name_index.INDEX_FILE, index, d)
    clusters = name_index.for_task('proxmox_kvm', {'name': 'web01'}, d)['clusters']
    assert list(clusters) == [KEY]
