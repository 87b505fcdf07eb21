//! The same build play started several times at the same moment against one cluster
//! (a job template launched twice, a cron run overlapping a manual one), with the
//! cluster listing lagging 1 s as PVE's status broadcast does.
//!
//! With `vmid_range`: exactly one VM per name, every run without a failure, and a
//! following run changes nothing. Scaled for CI (4 names × 2 runs); for 20 × 2 or 50 × 3 run it
//! with `FERROX_TWICE_NAMES` and `FERROX_TWICE_RUNS`, and `FERROX_TWICE_REPORT=<file>` for
//! the wall times as JSON.

use std::collections::BTreeMap;
use std::time::Instant;

use ferrox_integration::{Env, Play, PlayOpts};
use serde_json::json;

const RANGE: [u32; 2] = [5000, 5999];

fn env_num(key: &str, default: usize) -> usize {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn lagging_cluster() -> Env {
    Env::start_with(pvesim::SimConfig {
        resources_lag_ms: 1000,
        ..Default::default()
    })
}

fn tasks(with_range: bool) -> String {
    let range = if with_range {
        format!("    vmid_range: [{}, {}]\n", RANGE[0], RANGE[1])
    } else {
        String::new()
    };
    format!(
        "- name: vm\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: \"dbl-{{{{ inventory_hostname }}}}\"\n    memory: 1024\n    net:\n      net0: virtio,bridge=vmbr0\n{range}"
    )
}

fn opts(names: usize) -> PlayOpts {
    let hosts: String = (1..=names)
        .map(|i| format!("h{i:02} ansible_connection=local\n"))
        .collect();
    PlayOpts {
        hosts: Some(("all".into(), format!("[all]\n{hosts}"))),
        env: vec![("ANSIBLE_FORKS".into(), "10".into())],
        ..Default::default()
    }
}

/// `runs` ansible-playbook runs of the play, started at once; each with its wall time.
fn at_once(env: &Env, runs: usize, names: usize, with_range: bool) -> Vec<(Play, f64)> {
    let (tasks, opts) = (tasks(with_range), opts(names));
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..runs)
            .map(|_| {
                s.spawn(|| {
                    let t0 = Instant::now();
                    let play = env.play_with(&tasks, &opts);
                    (play, t0.elapsed().as_secs_f64())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a run panicked")).collect()
    })
}

/// name -> vmids of the VMs carrying it (per-node listings read the configs: no lag).
fn vms_by_name(env: &Env) -> BTreeMap<String, Vec<u64>> {
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for node in ["pve1", "pve2"] {
        for g in env.api_get(&format!("/nodes/{node}/qemu")).as_array().unwrap() {
            if let Some(name) = g["name"].as_str().filter(|n| n.starts_with("dbl-")) {
                out.entry(name.to_string())
                    .or_default()
                    .push(g["vmid"].as_u64().unwrap());
            }
        }
    }
    out
}

fn failed(play: &Play) -> Vec<String> {
    play.results
        .iter()
        .filter(|r| r.failed)
        .map(|r| format!("{}: {}", r.host, r.msg()))
        .collect()
}

fn changed(play: &Play) -> usize {
    play.results.iter().filter(|r| r.changed).count()
}

#[test]
fn with_vmid_range_runs_at_once_build_each_name_once() {
    let names = env_num("FERROX_TWICE_NAMES", 4);
    let runs = env_num("FERROX_TWICE_RUNS", 2);
    let env = lagging_cluster();

    let t0 = Instant::now();
    let single = env.play_with(&tasks(true).replace("dbl-", "one-"), &opts(names));
    let one_run_secs = t0.elapsed().as_secs_f64();
    assert!(failed(&single).is_empty(), "{:?}", failed(&single));

    let t0 = Instant::now();
    let plays = at_once(&env, runs, names, true);
    let together_secs = t0.elapsed().as_secs_f64();
    for (play, _) in &plays {
        assert!(
            failed(play).is_empty(),
            "a run failed: {:?}\n{}",
            failed(play),
            play.transcript()
        );
        assert_eq!(play.rc, 0, "{}", play.transcript());
    }
    let vms = vms_by_name(&env);
    assert_eq!(vms.len(), names, "every name built: {vms:?}");
    let twice: Vec<_> = vms.iter().filter(|(_, ids)| ids.len() > 1).collect();
    assert!(twice.is_empty(), "names built more than once: {twice:?}");
    for (name, ids) in &vms {
        assert!((RANGE[0] as u64..=RANGE[1] as u64).contains(&ids[0]), "{name}: {ids:?}");
        // Every run reports the one VM of the name.
        for (play, _) in &plays {
            let host = name.trim_start_matches("dbl-");
            let r = play.results.iter().find(|r| r.host == host).expect("a result per host");
            assert_eq!(r.result["vmid"], json!(ids[0]), "{host}: {}", r.result);
        }
    }
    // Of each name, one run created it and the others found it: one change per name.
    let changes: usize = plays.iter().map(|(p, _)| changed(p)).sum();
    assert_eq!(changes, names, "one change per name");

    let rerun = env.play_with(&tasks(true), &opts(names));
    assert!(failed(&rerun).is_empty(), "{:?}", failed(&rerun));
    assert_eq!(changed(&rerun), 0, "a following run changes nothing");

    if let Ok(path) = std::env::var("FERROX_TWICE_REPORT") {
        let report = json!({
            "names": names,
            "runs": runs,
            "one_run_wall_seconds": one_run_secs,
            "runs_at_once_wall_seconds": together_secs,
            "slowest_run_seconds": plays.iter().map(|(_, s)| *s).fold(0.0, f64::max),
            "vms": vms.values().map(Vec::len).sum::<usize>(),
        });
        std::fs::write(path, report.to_string()).expect("write report");
    }
}

#[test]
fn without_vmid_range_a_name_built_twice_is_warned_of_and_then_listed() {
    let names = 3;
    let env = lagging_cluster();
    let plays = at_once(&env, 2, names, false);
    for (play, _) in &plays {
        assert!(failed(play).is_empty(), "{:?}", failed(play));
    }
    let vms = vms_by_name(&env);
    assert_eq!(vms.len(), names);
    for (name, ids) in vms.iter().filter(|(_, ids)| ids.len() > 1) {
        let host = name.trim_start_matches("dbl-");
        let warned = plays.iter().any(|(p, _)| {
            p.results
                .iter()
                .filter(|r| r.host == host)
                .flat_map(|r| r.warnings())
                .any(|w| ids.iter().all(|id| w.contains(&id.to_string())) && w.contains("vmid_range"))
        });
        assert!(
            warned,
            "{name} was built as {ids:?}: no run warned naming both and vmid_range"
        );
    }
    let later = env.play_with(&tasks(false), &opts(names));
    for r in &later.results {
        let ids = &vms[&format!("dbl-{}", r.host)];
        if ids.len() > 1 {
            assert!(r.failed, "{}: {}", r.host, r.result);
            assert!(r.msg().starts_with("Multiple VMs with name dbl-"), "{}", r.msg());
            assert!(
                r.msg().contains("They are: VM ") && r.msg().contains("state: absent"),
                "{}",
                r.msg()
            );
        } else {
            assert!(!r.failed && !r.changed, "{}: {}", r.host, r.result);
        }
    }
}
