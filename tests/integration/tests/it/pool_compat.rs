//! community.proxmox's own integration target for pools (tests/anchor/pool.yml) against
//! the simulator with either collection: its assertions, task by task. community.proxmox
//! 1.6.0 fails where its own target expects success (it cannot add a storage: a renamed
//! keyword, reported as a failure to add); ferrox.proxmox passes every assertion.

use crate::anchor::support::{anchor_dir, Anchor, Run, RunOpts};

/// The target's assertions on one run: `Err` lists those that do not hold.
fn target_assertions(run: &Run) -> Vec<String> {
    let mut broken = Vec::new();
    let mut expect = |name: &str, ok: bool, why: &str| {
        if !ok {
            broken.push(format!("{name}: {why}"));
        }
    };
    let t = run.task("Make sure poolid parameter is not missing");
    expect(
        &t.name,
        t.failed && t.msg().contains("missing required arguments: poolid"),
        "fails naming poolid",
    );
    for name in ["Create pool (Check)", "Create pool", "Delete pool (Check)"] {
        let t = run.task(name);
        expect(name, t.changed && !t.failed, "changed");
    }
    expect(
        "Create pool",
        run.task("Create pool").result["poolid"] == "test",
        "poolid",
    );
    let t = run.task("Delete non-existing pool should do nothing");
    expect(&t.name, !t.changed && !t.failed, "unchanged");
    let t = run.task("Add storage into pool");
    let in_diff = t.result["diff"]["after"]["members"]
        .as_array()
        .is_some_and(|m| m.iter().any(|x| x == "local"));
    expect(
        &t.name,
        t.changed && !t.failed && in_diff,
        &format!("changed, 'local' in the diff: {}", t.msg()),
    );
    let t = run.task("Add non-existing storage into pool should fail");
    expect(
        &t.name,
        t.failed
            && t.msg()
                .contains("Storage non-existing-storage doesn't exist in the cluster"),
        t.msg(),
    );
    let t = run.task("Delete non-empty pool");
    expect(
        &t.name,
        t.failed && t.msg().contains("Please remove members from pool first."),
        t.msg(),
    );
    let t = run.task("Delete storage from the pool");
    expect(&t.name, t.changed && !t.failed, t.msg());
    let t = run.task("Delete pool");
    expect(&t.name, t.changed && !t.failed && t.result["poolid"] == "test", t.msg());
    broken
}

fn run_with(collection: &str) -> Run {
    let text = std::fs::read_to_string(anchor_dir().join("pool.yml")).unwrap();
    let anchor = Anchor::start();
    let playbook = anchor.dir().join(format!("{collection}-pool.yml"));
    std::fs::write(
        &playbook,
        text.replace("community.proxmox.", &format!("{collection}.proxmox.")),
    )
    .unwrap();
    anchor.run_file(&playbook, &RunOpts::default())
}

#[test]
fn community_proxmox_pool_target_passes_with_ferrox_and_shows_1_6_cannot_add_a_storage() {
    let theirs = run_with("community");
    assert_eq!(theirs.results.len(), 10, "{}\n{}", theirs.stdout, theirs.stderr);
    assert_eq!(
        target_assertions(&theirs),
        [
            "Add storage into pool: changed, 'local' in the diff: Failed to add a new member (local) to the pool test: ProxmoxAnsible.get_storages() got an unexpected keyword argument 'type'".to_string(),
            "Add non-existing storage into pool should fail: Failed to add a new member (non-existing-storage) to the pool test: ProxmoxAnsible.get_storages() got an unexpected keyword argument 'type'".to_string(),
            "Delete non-empty pool: Pool test successfully deleted".to_string(),
            "Delete storage from the pool: Unable to retrieve pool test information: 500 Internal Server Error: pool 'test' does not exist".to_string(),
            "Delete pool: Pool test doesn't exist".to_string(),
        ],
        "community.proxmox 1.6.0's known defect, and what follows from it"
    );
    let ours = run_with("ferrox");
    assert_eq!(target_assertions(&ours), Vec::<String>::new(), "{}", ours.stdout);
}
