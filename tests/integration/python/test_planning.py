"""The controller side of the plan, without ansible-playbook: storage, lock, append,
and the re-run when another fork reserved the same vmid first. Run by tests/plan_store.rs
with the collection importable as ansible_collections.ferrox.proxmox."""

import os
import sys
import tempfile

from ansible_collections.ferrox.proxmox.plugins.plugin_utils import plan_store
from ansible_collections.ferrox.proxmox.plugins.plugin_utils.planning import EFFECTS_KEY, PLAN_ARG, run_planned


def create(vmid):
    return {'kind': 'create', 'vmid': vmid, 'node': 'pve1', 'config': {}}


def fake_binary(calls, sneak=None):
    """A binary predicting the lowest vmid from 100 not reserved in the plan it got;
    `sneak` runs between its read and its answer (another fork finishing first)."""
    def run(args):
        taken = plan_store.reserved(args[PLAN_ARG])
        vmid = next(i for i in range(100, 200) if i not in taken)
        calls.append(vmid)
        if sneak and len(calls) == 1:
            sneak()
        return {'changed': True, 'vmid': vmid, EFFECTS_KEY: [create(vmid)]}
    return run


def main():
    d = tempfile.mkdtemp()
    assert plan_store.read_plan(d) == {'effects': []}

    calls = []
    r = run_planned(fake_binary(calls), {'name': 'a'}, directory=d)
    assert r == {'changed': True, 'vmid': 100}, r
    assert EFFECTS_KEY not in r and calls == [100]
    assert plan_store.reserved(plan_store.read_plan(d)) == {100}

    # Another fork takes 101 while this one is running: it runs again, under the lock.
    def other_fork():
        with plan_store.locked(d):
            plan_store.write_plan(plan_store.with_effects(plan_store.read_plan(d), [create(101)]), d)
    calls = []
    r = run_planned(fake_binary(calls, sneak=other_fork), {'name': 'b'}, directory=d)
    assert calls == [101, 102], calls
    assert r['vmid'] == 102, r
    assert [e['vmid'] for e in plan_store.read_plan(d)['effects']] == [100, 101, 102]

    # A failed run (no effects) leaves the plan alone.
    r = run_planned(lambda args: {'failed': True, 'msg': 'no'}, {}, directory=d)
    assert r == {'failed': True, 'msg': 'no'}
    assert len(plan_store.read_plan(d)['effects']) == 3

    # A damaged file reads as an empty plan rather than failing every task.
    with open(plan_store.plan_path(d), 'w') as f:
        f.write('{not json')
    assert plan_store.read_plan(d) == {'effects': []}
    print('ok')


if __name__ == '__main__':
    sys.exit(main())
