//! The field playbooks shipped in `playbooks/`, run like the demo runs them: converge,
//! repeat (no changes), check mode (no changes), teardown; and 20 VMs created in
//! parallel without vmids.

use crate::kvm_support::{qemu_vms, run_playbook};
use ferrox_integration::{repo_root, Env};

#[test]
fn field_playbooks_converge_repeat_without_changes_and_tear_down() {
    let env = Env::start();
    let books = repo_root().join("playbooks");
    let inventory = books.join("inventory.yml");
    let hosts = ["demo-web1", "demo-web2", "demo-db1"];
    // A dry run on a fresh cluster reports the creates, and the disk, NIC and boot
    // order of each VM it would create, and writes nothing.
    let dry = run_playbook(&env, &books.join("create.yml"), &inventory, &["--check"]);
    assert_eq!(dry.rc, 0, "{}", dry.stdout);
    assert_eq!(dry.recap("changed"), 3 * 4, "{}", dry.stdout);
    assert!(qemu_vms(&env).iter().all(|(_, n)| !n.starts_with("demo-")));
    for (round, extra) in [("converge", &[][..]), ("repeat", &[][..]), ("check", &["--check"][..])] {
        for book in ["create.yml", "start.yml", "info.yml"] {
            let run = run_playbook(&env, &books.join(book), &inventory, extra);
            assert_eq!(run.rc, 0, "{round} {book}:\n{}", run.stdout);
            if round != "converge" {
                assert_eq!(
                    run.recap("changed"),
                    0,
                    "{round} {book} changed something:\n{}",
                    run.stdout
                );
            }
            if book == "create.yml" {
                let printed = run.task("Print the MAC");
                assert_eq!(printed.len(), 3, "{}", run.stdout);
                assert!(
                    printed
                        .iter()
                        .all(|r| r["result"]["msg"].as_str().unwrap().contains("net0 BC:24:11:")),
                    "{}",
                    run.stdout
                );
            }
        }
    }
    let vms = qemu_vms(&env);
    for host in hosts {
        assert_eq!(
            vms.iter().filter(|(_, n)| n == host).count(),
            1,
            "one VM named {host}: {vms:?}"
        );
    }
    assert!(
        vms.iter().any(|(id, n)| *id == 4101 && n == "demo-db1"),
        "explicit vmid from the inventory"
    );
    let run = run_playbook(&env, &books.join("teardown.yml"), &inventory, &[]);
    assert_eq!(run.rc, 0, "{}", run.stdout);
    let vms = qemu_vms(&env);
    assert!(vms.iter().all(|(_, n)| !n.starts_with("demo-")), "{vms:?}");
    let again = run_playbook(&env, &books.join("teardown.yml"), &inventory, &[]);
    assert_eq!(again.rc, 0, "{}", again.stdout);
    assert_eq!(again.recap("changed"), 0);
}

#[test]
fn twenty_vms_created_in_parallel_without_vmid() {
    let env = Env::start();
    let hosts: String = (1..=20).map(|i| format!("        par{i:02}:\n")).collect();
    let inventory = env.dir().join("parallel-inventory.yml");
    std::fs::write(
        &inventory,
        format!("all:\n  children:\n    fleet:\n      hosts:\n{hosts}"),
    )
    .unwrap();
    let book = env.dir().join("parallel.yml");
    std::fs::write(
        &book,
        "- hosts: fleet\n  gather_facts: false\n  tasks:\n    - name: create\n      ferrox.proxmox.proxmox_kvm:\n        node: pve1\n        name: \"{{ inventory_hostname }}\"\n        memory: 512\n      delegate_to: localhost\n",
    )
    .unwrap();
    let start = std::time::Instant::now();
    let run = run_playbook(&env, &book, &inventory, &["--forks", "20"]);
    let took = start.elapsed();
    assert_eq!(run.rc, 0, "{}", run.stdout);
    let created = run.task("create");
    assert_eq!(created.len(), 20);
    assert!(
        created.iter().all(|r| r["outcome"] == "ok" && r["changed"] == true),
        "{}",
        run.stdout
    );
    let vms = qemu_vms(&env);
    let mut ids: Vec<u64> = vms
        .iter()
        .filter(|(_, n)| n.starts_with("par"))
        .map(|(id, _)| *id)
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 20, "20 distinct VMs: {vms:?}");
    for i in 1..=20 {
        assert_eq!(
            vms.iter().filter(|(_, n)| *n == format!("par{i:02}")).count(),
            1,
            "exactly one par{i:02}"
        );
    }
    eprintln!("20 parallel creates: {took:?}");
    let again = run_playbook(&env, &book, &inventory, &["--forks", "20"]);
    assert_eq!(again.recap("changed"), 0, "{}", again.stdout);
}
