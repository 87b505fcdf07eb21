//! community.proxmox 2.0.0's own integration target for pools
//! (`tests/integration/targets/proxmox_pool/tasks/main.yml`: pool and member lifecycles,
//! exclusive reconciliation to an empty set, nested pools), its tasks in order with their
//! values (`poolid: test`, `member: local`, `nested_poolid: test/test-nested`) and
//! assertions, run with ferrox.proxmox in process against the simulator.

use ferrox_integration::{Env, PlayOpts};
use serde_json::{json, Value};

use crate::disk_scenario::as_root;

/// What the target asserts of one task's result.
#[derive(Clone, Copy)]
enum Expect {
    Changed,
    Unchanged,
    Fails(&'static str),
}

/// (task name, module, options, check mode, assertion, `members` after: `None` unchecked,
/// `Some(true)` holds `{storage: local}`, `Some(false)` empty).
type Step = (&'static str, &'static str, &'static str, bool, Expect, Option<bool>);

const STEPS: &[Step] = &[
    (
        "Create pool in check mode",
        "proxmox_pool",
        "{poolid: test}",
        true,
        Expect::Changed,
        None,
    ),
    (
        "Verify check mode did not create pool",
        "proxmox_pool",
        "{poolid: test, state: absent}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Create pool",
        "proxmox_pool",
        "{poolid: test}",
        false,
        Expect::Changed,
        None,
    ),
    (
        "Create pool idempotently",
        "proxmox_pool",
        "{poolid: test}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Add storage member in check mode",
        "proxmox_pool_member",
        "{poolid: test, members: [{storage: local}]}",
        true,
        Expect::Changed,
        Some(true),
    ),
    (
        "Verify check mode did not add storage member",
        "proxmox_pool_member",
        "{poolid: test, state: absent, members: [{storage: local}]}",
        false,
        Expect::Unchanged,
        Some(false),
    ),
    (
        "Add storage member",
        "proxmox_pool_member",
        "{poolid: test, members: [{storage: local}]}",
        false,
        Expect::Changed,
        Some(true),
    ),
    (
        "Add storage member idempotently",
        "proxmox_pool_member",
        "{poolid: test, members: [{storage: local}]}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Remove storage member in check mode",
        "proxmox_pool_member",
        "{poolid: test, state: absent, members: [{storage: local}]}",
        true,
        Expect::Changed,
        Some(false),
    ),
    (
        "Verify check mode did not remove storage member",
        "proxmox_pool_member",
        "{poolid: test, members: [{storage: local}]}",
        false,
        Expect::Unchanged,
        Some(true),
    ),
    (
        "Remove storage member",
        "proxmox_pool_member",
        "{poolid: test, state: absent, members: [{storage: local}]}",
        false,
        Expect::Changed,
        Some(false),
    ),
    (
        "Remove storage member idempotently",
        "proxmox_pool_member",
        "{poolid: test, state: absent, members: [{storage: local}]}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Add non-existing storage to pool fails",
        "proxmox_pool_member",
        "{poolid: test, members: [{storage: non-existing-storage}]}",
        false,
        Expect::Fails("non-existing-storage"),
        None,
    ),
    (
        "Add storage member for exclusive mode and delete guard checks",
        "proxmox_pool_member",
        "{poolid: test, members: [{storage: local}]}",
        false,
        Expect::Changed,
        Some(true),
    ),
    (
        "Reconcile members to empty set with exclusive mode",
        "proxmox_pool_member",
        "{poolid: test, exclusive: true, members: []}",
        false,
        Expect::Changed,
        Some(false),
    ),
    (
        "Reconcile members to empty set idempotently",
        "proxmox_pool_member",
        "{poolid: test, exclusive: true, members: []}",
        false,
        Expect::Unchanged,
        Some(false),
    ),
    (
        "Add storage member again for non-empty delete guard",
        "proxmox_pool_member",
        "{poolid: test, members: [{storage: local}]}",
        false,
        Expect::Changed,
        Some(true),
    ),
    (
        "Delete non-empty pool fails",
        "proxmox_pool",
        "{poolid: test, state: absent}",
        false,
        Expect::Fails("Please remove members from pool first."),
        None,
    ),
    (
        "Empty pool using exclusive mode before deletion",
        "proxmox_pool_member",
        "{poolid: test, exclusive: true, members: []}",
        false,
        Expect::Changed,
        Some(false),
    ),
    (
        "Create nested pool in check mode",
        "proxmox_pool",
        "{poolid: test/test-nested}",
        true,
        Expect::Changed,
        None,
    ),
    (
        "Verify check mode did not create nested pool",
        "proxmox_pool",
        "{poolid: test/test-nested, state: absent}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Create nested pool",
        "proxmox_pool",
        "{poolid: test/test-nested}",
        false,
        Expect::Changed,
        None,
    ),
    (
        "Create nested pool idempotently",
        "proxmox_pool",
        "{poolid: test/test-nested}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Add member to nested pool",
        "proxmox_pool_member",
        "{poolid: test/test-nested, members: [{storage: local}]}",
        false,
        Expect::Changed,
        Some(true),
    ),
    (
        "Add member to nested pool idempotently",
        "proxmox_pool_member",
        "{poolid: test/test-nested, members: [{storage: local}]}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Delete non-empty nested pool fails",
        "proxmox_pool",
        "{poolid: test/test-nested, state: absent}",
        false,
        Expect::Fails("Please remove members from pool first."),
        None,
    ),
    (
        "Empty nested pool members with exclusive mode",
        "proxmox_pool_member",
        "{poolid: test/test-nested, exclusive: true, members: []}",
        false,
        Expect::Changed,
        Some(false),
    ),
    (
        "Delete nested pool in check mode",
        "proxmox_pool",
        "{poolid: test/test-nested, state: absent}",
        true,
        Expect::Changed,
        None,
    ),
    (
        "Verify check mode did not delete nested pool",
        "proxmox_pool",
        "{poolid: test/test-nested}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Delete nested pool",
        "proxmox_pool",
        "{poolid: test/test-nested, state: absent}",
        false,
        Expect::Changed,
        None,
    ),
    (
        "Delete nested pool idempotently",
        "proxmox_pool",
        "{poolid: test/test-nested, state: absent}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Delete base pool in check mode",
        "proxmox_pool",
        "{poolid: test, state: absent}",
        true,
        Expect::Changed,
        None,
    ),
    (
        "Verify check mode did not delete base pool",
        "proxmox_pool",
        "{poolid: test}",
        false,
        Expect::Unchanged,
        None,
    ),
    (
        "Delete base pool",
        "proxmox_pool",
        "{poolid: test, state: absent}",
        false,
        Expect::Changed,
        None,
    ),
    (
        "Delete non-existing pool idempotently",
        "proxmox_pool",
        "{poolid: test, state: absent}",
        false,
        Expect::Unchanged,
        None,
    ),
];

#[test]
fn community_proxmox_2_0_pool_target_passes_with_ferrox() {
    let env = Env::start();
    let root = as_root(&env);
    let mut broken = Vec::new();
    for (name, module, options, check, expect, members) in STEPS {
        let task = format!("- name: t\n  ferrox.proxmox.{module}: {options}\n");
        let t = env
            .run_with(
                &task,
                &PlayOpts {
                    check: *check,
                    ..root.clone()
                },
            )
            .task("t")
            .clone();
        let ok = match expect {
            Expect::Changed => t.changed && !t.failed,
            Expect::Unchanged => !t.changed && !t.failed,
            Expect::Fails(text) => t.failed && t.msg().contains(text),
        };
        let holds = |v: &Value| v.as_array().is_some_and(|m| m.contains(&json!({"storage": "local"})));
        let members_ok = match members {
            None => true,
            Some(true) => holds(&t.result["members"]),
            Some(false) => t.result["members"].as_array().is_some_and(Vec::is_empty),
        };
        if !(ok && members_ok) {
            broken.push(format!("{name}: {}", t.result));
        }
    }
    assert_eq!(broken, Vec::<String>::new());
}
