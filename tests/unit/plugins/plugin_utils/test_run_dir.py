# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""run_dir.py: the run's directory, its JSON files replaced atomically (0600), and the
lock shared by the forks."""

from __future__ import annotations

import os
import stat
import threading
import time

from ansible import constants as C

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import run_dir


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_directory_is_ansible_cores_per_run_temp_dir_unless_given(tmp_path, monkeypatch):
    monkeypatch.setattr(C, 'DEFAULT_LOCAL_TMP', str(tmp_path / 'ansible-local-1'))
    assert run_dir.directory_of() == str(tmp_path / 'ansible-local-1')
    assert run_dir.directory_of('/elsewhere') == '/elsewhere'
    assert run_dir.path('f.json') == os.path.join(str(tmp_path / 'ansible-local-1'), 'f.json')


def test_a_written_value_reads_back(tmp_path):
    value = {'a': [1, 'two', None], 'b': {'c': True}}
    run_dir.write_json('f.json', value, str(tmp_path))
    assert run_dir.read_json('f.json', str(tmp_path)) == value


def test_a_missing_file_reads_as_none(tmp_path):
    assert run_dir.read_json('absent.json', str(tmp_path)) is None


def test_a_damaged_file_reads_as_none(tmp_path):
    (tmp_path / 'f.json').write_text('{"a": ')
    assert run_dir.read_json('f.json', str(tmp_path)) is None


def test_a_written_file_is_0600_and_stays_so_when_replaced(tmp_path):
    run_dir.write_json('f.json', 1, str(tmp_path))
    assert mode(str(tmp_path / 'f.json')) == 0o600
    run_dir.write_json('f.json', 2, str(tmp_path))
    assert mode(str(tmp_path / 'f.json')) == 0o600
    assert run_dir.read_json('f.json', str(tmp_path)) == 2


def test_a_replacement_is_a_new_file_and_leaves_no_temporary_behind(tmp_path):
    run_dir.write_json('f.json', 1, str(tmp_path))
    with open(str(tmp_path / 'f.json')) as reader:
        run_dir.write_json('f.json', 2, str(tmp_path))
        assert reader.read() == '1', 'a reader of the old file sees it whole'
    assert sorted(os.listdir(str(tmp_path))) == ['f.json']


def test_the_lock_file_is_created_0600(tmp_path):
    with run_dir.locked('f.lock', str(tmp_path)):
        assert mode(str(tmp_path / 'f.lock')) == 0o600


def test_the_lock_is_held_exclusively_until_the_block_ends(tmp_path):
    order = []

    def other_fork():
        with run_dir.locked('f.lock', str(tmp_path)):
            order.append('other')

    with run_dir.locked('f.lock', str(tmp_path)):
        waiter = threading.Thread(target=other_fork)
        waiter.start()
        time.sleep(0.3)
        order.append('first')
    waiter.join(5)
    assert order == ['first', 'other']


def test_the_lock_is_released_when_the_block_raises(tmp_path):
    try:
        with run_dir.locked('f.lock', str(tmp_path)):
            raise RuntimeError('task failed')
    except RuntimeError:
        pass
    got = threading.Event()

    def other_fork():
        with run_dir.locked('f.lock', str(tmp_path)):
            got.set()
    t = threading.Thread(target=other_fork)
    t.start()
    t.join(5)
    assert got.is_set()
