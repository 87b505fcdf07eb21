# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ticket_store.py: which task gets which kept ticket, the file's mode, the renewal age
and its variable, the hand-over of the first login to the other forks, and tickets kept
by cluster: another spelling of an endpoint tries them before any login."""

from __future__ import annotations

import os
import stat
import threading
import time

import pytest

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import ticket_store

# What a login reports: the ticket and its cluster's nodes' certificate fingerprints.
GOT = {'ticket': 'PVE:root@pam:6553F100::sig', 'csrf': '6553F100:c', 'user': 'root@pam', 'certs': ['AA:01', 'AA:02']}
MFA_GOT = {'ticket': 'PVE:mfa@pve:6553F100::sig', 'csrf': '6553F100:c', 'user': 'mfa@pve', 'certs': ['AA:01']}


def task(**changes):
    args = {'api_host': 'pve.example', 'api_user': 'root@pam', 'api_password': 'hunter2-secret'}
    args.update(changes)
    return args


def mfa():
    return task(api_user='mfa@pve', api_otp='123456')


@pytest.fixture(autouse=True)
def no_environment(monkeypatch):
    for var in ('PROXMOX_HOST', 'PROXMOX_PORT', 'PROXMOX_USER', 'PROXMOX_PASSWORD', ticket_store.RENEW_ENV):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def kept(tmp_path):
    """A run directory holding root@pam's ticket."""
    d = str(tmp_path)
    ticket_store.store(task(), GOT, directory=d)
    return d


def test_a_password_task_gets_the_renewal_age_and_no_ticket_at_first(tmp_path):
    assert ticket_store.for_task(task(), directory=str(tmp_path)) == {
        'renew_after': 3600.0, 'kept': None, 'candidates': []}


def test_a_token_task_gets_nothing(tmp_path):
    token = task(api_password=None, api_token_id='t', api_token_secret='s')
    assert ticket_store.for_task(token, directory=str(tmp_path)) is None


def test_the_ticket_file_is_0600(kept):
    assert stat.S_IMODE(os.stat(ticket_store.ticket_path(kept)).st_mode) == 0o600


def test_the_password_itself_is_never_stored(kept):
    with open(ticket_store.ticket_path(kept)) as f:
        assert 'hunter2-secret' not in f.read()


def test_a_kept_ticket_goes_to_a_task_of_the_same_identity(kept):
    got = ticket_store.for_task(task(api_port=8006), directory=kept)['kept']
    assert got['ticket'] == GOT['ticket']
    assert got['endpoint'] == 'pve.example:8006'
    assert got['user'] == 'root@pam'
    assert got['cluster'] == 'pve.example:8006', 'named after the endpoint of its first login'
    assert 0 <= got['age'] < 5


@pytest.mark.parametrize('other', [
    task(api_user='ansible@pve'),
    task(api_port=443),
    task(api_host='pve2.example'),
    task(api_password='other'),
], ids=['user', 'port', 'host', 'password'])
def test_a_kept_ticket_goes_to_no_other_identity(kept, other):
    assert ticket_store.for_task(other, directory=kept)['kept'] is None


@pytest.mark.parametrize('other', [task(api_port=443), task(api_host='localhost')], ids=['port', 'host'])
def test_another_endpoint_of_the_identity_gets_its_tickets_to_try(kept, other):
    handed = ticket_store.for_task(other, directory=kept)
    assert [c['ticket'] for c in handed['candidates']] == [GOT['ticket']]
    assert handed['candidates'][0]['cluster'] == 'pve.example:8006'
    assert handed['candidates'][0]['certs'] == ['AA:01', 'AA:02'], 'sent only where a node of it answers'


def test_a_cluster_whose_certificates_are_unknown_offers_nothing_to_try(tmp_path):
    d = str(tmp_path)
    ticket_store.store(task(), dict(GOT, certs=[]), directory=d)
    assert ticket_store.for_task(task(api_host='localhost'), directory=d)['candidates'] == []


@pytest.mark.parametrize('other', [task(api_user='ansible@pve'), task(api_password='other')], ids=['user', 'password'])
def test_another_identity_gets_nothing_to_try(kept, other):
    assert ticket_store.for_task(other, directory=kept)['candidates'] == []


def test_an_endpoint_shown_to_be_a_known_cluster_gets_its_ticket(kept):
    by_name = task(api_host='localhost')
    ticket_store.store(by_name, {'cluster': 'pve.example:8006'}, directory=kept)
    handed = ticket_store.for_task(by_name, directory=kept)
    assert handed['kept']['ticket'] == GOT['ticket']
    assert handed['kept']['endpoint'] == 'localhost:8006'
    assert handed['candidates'] == [], 'the cluster is known: nothing else to try'
    renewed = dict(GOT, ticket='PVE:root@pam:6553F200::sig', cluster='pve.example:8006')
    ticket_store.store(by_name, renewed, directory=kept)
    assert ticket_store.for_task(task(), directory=kept)['kept']['ticket'] == renewed['ticket'], 'one per cluster'


def test_a_login_at_an_endpoint_of_another_cluster_keeps_both(kept):
    other = task(api_host='pve-b.example')
    ticket_store.store(other, dict(GOT, ticket='PVE:root@pam:6553F300::sig'), directory=kept)
    assert ticket_store.for_task(other, directory=kept)['kept']['cluster'] == 'pve-b.example:8006'
    assert ticket_store.for_task(task(), directory=kept)['kept']['ticket'] == GOT['ticket']
    third = ticket_store.for_task(task(api_host='pve-c.example'), directory=kept)['candidates']
    assert sorted(c['cluster'] for c in third) == ['pve-b.example:8006', 'pve.example:8006']


def test_a_cluster_the_run_does_not_know_is_not_recorded(tmp_path):
    d = str(tmp_path)
    ticket_store.store(task(), {'cluster': 'made-up:8006'}, directory=d)
    assert ticket_store.for_task(task(), directory=d)['kept'] is None


def test_pves_spelling_of_the_user_keeps_the_ticket_for_api_users(tmp_path):
    d = str(tmp_path)
    ad = task(api_user='Totp@ad')
    ticket_store.store(ad, {'ticket': 'PVE:totp@ad:6553F100::sig', 'csrf': 'c', 'user': 'totp@ad'}, directory=d)
    assert ticket_store.for_task(ad, directory=d)['kept']['ticket'] == 'PVE:totp@ad:6553F100::sig'


def test_the_environment_stands_in_for_missing_options_as_in_the_binary(kept, monkeypatch):
    monkeypatch.setenv('PROXMOX_PASSWORD', 'hunter2-secret')
    assert ticket_store.for_task(task(api_password=None), directory=kept)['kept'] is not None


def test_a_ticket_for_another_user_than_the_tasks_is_not_kept_under_its_identity(tmp_path):
    d = str(tmp_path)
    ticket_store.store(task(api_user='ansible@pve'), GOT, directory=d)
    assert ticket_store.for_task(task(api_user='ansible@pve'), directory=d)['kept'] is None


def test_renewal_age_0_turns_reuse_off(kept, monkeypatch):
    monkeypatch.setenv(ticket_store.RENEW_ENV, '0')
    assert ticket_store.for_task(task(), directory=kept) is None


@pytest.mark.parametrize('bad', ['soon', '-1', 'nan', 'inf'])
def test_a_renewal_age_that_is_no_number_is_refused_naming_the_variable(kept, monkeypatch, bad):
    monkeypatch.setenv(ticket_store.RENEW_ENV, bad)
    with pytest.raises(ValueError) as refused:
        ticket_store.for_task(task(), directory=kept)
    assert ticket_store.RENEW_ENV in str(refused.value)
    assert '0 turns ticket reuse off' in str(refused.value)


def test_a_second_fork_waits_for_the_first_login_and_uses_its_ticket(tmp_path):
    d = str(tmp_path)
    seen = {}

    def second_fork():
        with ticket_store.handover(mfa(), directory=d) as (ticket, refusal):
            seen['ticket'], seen['refusal'], seen['at'] = ticket, refusal, time.time()

    with ticket_store.handover(mfa(), directory=d) as (ticket, refusal):
        assert refusal is None
        assert ticket == {'renew_after': 3600.0, 'kept': None, 'candidates': [], 'leave': True}
        waiter = threading.Thread(target=second_fork)
        waiter.start()
        time.sleep(0.5)
        assert 'ticket' not in seen, 'the second fork waits for the first login'
        stored_at = time.time()
        ticket_store.store(mfa(), MFA_GOT, directory=d)
    waiter.join(5)
    assert seen['refusal'] is None
    assert seen['at'] >= stored_at
    assert seen['ticket']['kept']['ticket'] == MFA_GOT['ticket'], "it uses the first login's ticket"


def test_an_async_task_gets_a_kept_ticket_and_does_not_hold_the_login(tmp_path):
    d = str(tmp_path)
    ticket_store.store(mfa(), MFA_GOT, directory=d)
    with ticket_store.handover(mfa(), wrap_async=True, directory=d) as (ticket, refusal):
        assert refusal is None
        assert ticket['kept'] is not None
        assert ticket['leave'] is False


def test_an_async_task_cannot_be_the_first_to_log_in_with_api_otp(tmp_path):
    with ticket_store.handover(mfa(), wrap_async=True, directory=str(tmp_path)) as (ticket, refusal):
        assert ticket is None
        assert 'async task cannot be the first to log in with api_otp' in refusal


def test_api_otp_with_reuse_off_is_refused_without_showing_the_code(tmp_path, monkeypatch):
    d = str(tmp_path)
    ticket_store.store(mfa(), MFA_GOT, directory=d)
    monkeypatch.setenv(ticket_store.RENEW_ENV, '0')
    with ticket_store.handover(mfa(), directory=d) as (ticket, refusal):
        assert ticket is None
        assert 'FERROX_TICKET_RENEW_AFTER=0' in refusal and 'logs in once' in refusal
        assert '123456' not in refusal


def test_without_api_otp_and_reuse_off_every_task_logs_in(tmp_path, monkeypatch):
    monkeypatch.setenv(ticket_store.RENEW_ENV, '0')
    with ticket_store.handover(task(), directory=str(tmp_path)) as (ticket, refusal):
        assert ticket is None
        assert refusal is None


def test_first_logins_hold_one_lock_per_user_whatever_the_endpoint(tmp_path):
    d = str(tmp_path)

    def locks():
        return sorted(n for n in os.listdir(d) if n.startswith(ticket_store.LOCK_PREFIX))

    for args in (task(), task(api_host='localhost'), task(api_port=443)):
        with ticket_store.handover(args, directory=d) as (ticket, refusal):
            assert refusal is None and ticket['kept'] is None
    assert len(locks()) == 1, 'two spellings may be one cluster: %s' % locks()
    with ticket_store.handover(task(api_user='ansible@pve'), directory=d):
        pass
    assert len(locks()) == 2, 'another user logs in apart'


def test_the_fork_that_waited_tries_the_first_logins_ticket_at_its_endpoint(tmp_path):
    d = str(tmp_path)
    with ticket_store.handover(mfa(), directory=d) as (ticket, refusal):
        ticket_store.store(mfa(), MFA_GOT, directory=d)
    with ticket_store.handover(dict(mfa(), api_host='localhost'), directory=d) as (ticket, refusal):
        assert refusal is None
        assert ticket['kept'] is None
        assert [c['ticket'] for c in ticket['candidates']] == [MFA_GOT['ticket']]


def test_a_spent_code_is_not_sent_again_at_another_endpoint(tmp_path):
    d = str(tmp_path)
    with ticket_store.handover(mfa(), directory=d) as (ticket, refusal):
        assert refusal is None
    with ticket_store.handover(dict(mfa(), api_host='localhost'), directory=d) as (ticket, refusal):
        assert ticket is None
        assert refusal.startswith('api_otp: an earlier task of this run logged in as mfa@pve with this code')
