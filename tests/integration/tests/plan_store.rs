//! The action plugins' side of the plan (plugins/plugin_utils/planning.py), run with the
//! venv's Python: append, lock, and the re-run when another fork took the same vmid.

use ferrox_integration::{ansible_playbook, repo_root, Env};

#[test]
fn the_plan_is_appended_under_the_lock_and_a_taken_vmid_means_a_rerun() {
    let env = Env::start();
    let python = ansible_playbook().with_file_name("python3");
    let out = std::process::Command::new(&python)
        .arg(repo_root().join("tests/integration/python/test_planning.py"))
        .env("PYTHONPATH", env.collections_path())
        .output()
        .expect("python runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && text.trim_end().ends_with("ok"), "{text}");
}

#[test]
fn the_runs_ticket_goes_only_to_its_identity_from_a_0600_file() {
    let env = Env::start();
    let python = ansible_playbook().with_file_name("python3");
    let out = std::process::Command::new(&python)
        .arg(repo_root().join("tests/integration/python/test_ticket_store.py"))
        .env("PYTHONPATH", env.collections_path())
        .output()
        .expect("python runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && text.trim_end().ends_with("ok"), "{text}");
}
