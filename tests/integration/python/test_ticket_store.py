"""The controller side of the run's ticket, without ansible-playbook: which task gets
which kept ticket, the file's mode, the renewal age and its variable. Run by
tests/plan_store.rs with the collection importable as ansible_collections.ferrox.proxmox."""

import os
import stat
import tempfile
import threading
import time

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import ticket_store


def task(**changes):
    args = {'api_host': 'pve.example', 'api_user': 'root@pam', 'api_password': 'hunter2-secret'}
    args.update(changes)
    return args


def main():
    for var in ('PROXMOX_HOST', 'PROXMOX_PORT', 'PROXMOX_USER', 'PROXMOX_PASSWORD', ticket_store.RENEW_ENV):
        os.environ.pop(var, None)
    d = tempfile.mkdtemp()
    first = ticket_store.for_task(task(), directory=d)
    assert first == {'renew_after': 3600.0, 'kept': None}, first
    assert ticket_store.for_task(task(api_password=None, api_token_id='t', api_token_secret='s'), directory=d) is None

    got = {'ticket': 'PVE:root@pam:6553F100::sig', 'csrf': '6553F100:c', 'user': 'root@pam'}
    ticket_store.store(task(), got, directory=d)
    mode = stat.S_IMODE(os.stat(ticket_store.ticket_path(d)).st_mode)
    assert mode == 0o600, oct(mode)
    with open(ticket_store.ticket_path(d)) as f:
        assert 'hunter2-secret' not in f.read(), 'the password itself is never stored'

    kept = ticket_store.for_task(task(api_port=8006), directory=d)['kept']
    assert kept['ticket'] == got['ticket'] and kept['endpoint'] == 'pve.example:8006' and kept['user'] == 'root@pam', kept
    assert 0 <= kept['age'] < 5
    for other in (task(api_user='ansible@pve'), task(api_port=443), task(api_host='pve2.example'), task(api_password='other')):
        assert ticket_store.for_task(other, directory=d)['kept'] is None, other

    # The environment stands in for missing options, as in the binary.
    os.environ['PROXMOX_PASSWORD'] = 'hunter2-secret'
    assert ticket_store.for_task(task(api_password=None), directory=d)['kept'] is not None
    del os.environ['PROXMOX_PASSWORD']

    # A ticket for another user than the task's is not kept under the task's identity.
    ticket_store.store(task(api_user='ansible@pve'), got, directory=d)
    assert ticket_store.for_task(task(api_user='ansible@pve'), directory=d)['kept'] is None

    os.environ[ticket_store.RENEW_ENV] = '0'
    assert ticket_store.for_task(task(), directory=d) is None, 'reuse off'
    for bad in ('soon', '-1', 'nan', 'inf'):
        os.environ[ticket_store.RENEW_ENV] = bad
        try:
            ticket_store.for_task(task(), directory=d)
        except ValueError as e:
            assert ticket_store.RENEW_ENV in str(e) and '0 turns ticket reuse off' in str(e), e
        else:
            raise AssertionError('%r accepted' % bad)
    del os.environ[ticket_store.RENEW_ENV]
    handovers()
    print('ok')


def handovers():
    """The first login of an identity holds its lock; a fork waiting on it gets the
    ticket; api_otp is refused where it would log in twice or keep nothing."""
    d = tempfile.mkdtemp()
    got = {'ticket': 'PVE:mfa@pve:6553F100::sig', 'csrf': '6553F100:c', 'user': 'mfa@pve'}
    mfa = task(api_user='mfa@pve', api_otp='123456')
    seen = {}

    def second_fork():
        with ticket_store.handover(mfa, directory=d) as (ticket, refusal):
            seen['ticket'], seen['refusal'], seen['at'] = ticket, refusal, time.time()

    with ticket_store.handover(mfa, directory=d) as (ticket, refusal):
        assert refusal is None and ticket == {'renew_after': 3600.0, 'kept': None, 'leave': True}, ticket
        waiter = threading.Thread(target=second_fork)
        waiter.start()
        time.sleep(0.5)
        assert 'ticket' not in seen, 'the second fork waits for the first login'
        stored_at = time.time()
        ticket_store.store(mfa, got, directory=d)
    waiter.join(5)
    assert seen['refusal'] is None and seen['at'] >= stored_at, seen
    assert seen['ticket']['kept']['ticket'] == got['ticket'], 'it uses the first login\'s ticket'

    with ticket_store.handover(mfa, wrap_async=True, directory=d) as (ticket, refusal):
        assert refusal is None and ticket['kept'] is not None and ticket['leave'] is False, ticket
    fresh = tempfile.mkdtemp()
    with ticket_store.handover(mfa, wrap_async=True, directory=fresh) as (ticket, refusal):
        assert ticket is None and 'async task cannot be the first to log in with api_otp' in refusal, refusal
    os.environ[ticket_store.RENEW_ENV] = '0'
    with ticket_store.handover(mfa, directory=d) as (ticket, refusal):
        assert ticket is None and 'FERROX_TICKET_RENEW_AFTER=0' in refusal and 'logs in once' in refusal, refusal
        assert '123456' not in refusal
    with ticket_store.handover(task(), directory=d) as (ticket, refusal):
        assert ticket is None and refusal is None, 'without api_otp every task logs in'
    del os.environ[ticket_store.RENEW_ENV]


if __name__ == '__main__':
    main()
