//! Comparison benchmark: community.proxmox 1.6.0 and ferrox.proxmox doing the same tasks on
//! the same simulator (a fresh one per collection and per batch). The playbooks are written
//! once with the `community.proxmox.` prefix; ferrox.proxmox runs them with only the prefix
//! changed. Measured: API calls per operation (simulator request log), module wall time per
//! task (as Ansible sees it), and 20 VMs created in parallel without vmid.
//!
//! Not part of the default run (it takes minutes): `bench/compare` runs it and saves the
//! table to `bench/results/compare.md` (or: `cargo test -p ferrox-integration --test it
//! -- anchor_compare:: --ignored --nocapture`, with `FERROX_BENCH_OUT=<file>`). The ferrox
//! binaries are `plugins/modules/__bin/<host platform>/*`, or those in `FERROX_MODULES_DIR` (`bench/compare
//! --release` points it at a release build).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::anchor::operations::OPERATIONS;
use crate::anchor::support::{self, Anchor, Run, RunOpts};

const COMMUNITY: &str = "community.proxmox";
const FERROX: &str = "ferrox.proxmox";

/// A play with the connection as module_defaults of `collection`'s action group.
fn playbook(collection: &str, hosts: &str, task_name: &str, task: &str, task_extra: &str) -> String {
    let text = format!(
        "- hosts: {hosts}
  gather_facts: false
  module_defaults:
    group/community.proxmox.proxmox:
      api_host: \"{{{{ anchor_api_host }}}}\"
      api_port: \"{{{{ anchor_api_port }}}}\"
      api_user: \"{{{{ anchor_api_user }}}}\"
      api_token_id: \"{{{{ anchor_api_token_id }}}}\"
      api_token_secret: \"{{{{ anchor_api_token_secret }}}}\"
      validate_certs: true
      ca_path: \"{{{{ anchor_ca_path }}}}\"
  tasks:
    - name: {task_name}
      {task}
{task_extra}"
    );
    // The only difference between the two collections' playbooks.
    text.replace("community.proxmox.", &format!("{collection}."))
}

fn write(anchor: &Anchor, name: &str, text: &str) -> std::path::PathBuf {
    let path = anchor.dir().join(name);
    std::fs::write(&path, text).expect("write playbook");
    path
}

/// `.../tasks/UPID:...:/status` -> `.../tasks/{upid}/status`, so both runs share a row.
fn without_upid(endpoint: &str) -> String {
    match endpoint.find("/UPID:") {
        Some(at) => {
            let rest = &endpoint[at + 1..];
            let end = rest.find(":/").map(|i| i + 1).unwrap_or(rest.len());
            format!("{}/{{upid}}{}", &endpoint[..at], &rest[end..])
        }
        None => endpoint.to_string(),
    }
}

/// One operation's measurement.
struct OpResult {
    calls: u64,
    by_endpoint: BTreeMap<String, u64>,
    seconds: f64,
    changed: bool,
    failed: bool,
    msg: String,
}

fn measure_operations(collection: &str) -> Vec<OpResult> {
    let anchor = Anchor::start();
    OPERATIONS
        .iter()
        .enumerate()
        .map(|(i, (label, task))| {
            let path = write(
                &anchor,
                &format!("op-{i}.yml"),
                &playbook(collection, "localhost", label, task, ""),
            );
            anchor.clear_requests();
            let run = anchor.run_file(&path, &RunOpts::default());
            let log = anchor.requests();
            let outcome = run.task(label);
            let mut by_endpoint: BTreeMap<String, u64> = BTreeMap::new();
            for (endpoint, n) in log["counts"].as_object().into_iter().flatten() {
                *by_endpoint.entry(without_upid(endpoint)).or_default() += n.as_u64().unwrap_or(0);
            }
            OpResult {
                calls: log["total"].as_u64().unwrap_or_else(|| by_endpoint.values().sum()),
                by_endpoint,
                seconds: outcome.seconds,
                changed: outcome.changed,
                failed: outcome.failed,
                msg: outcome.msg().to_string(),
            }
        })
        .collect()
}

/// One batch of 20 creates.
struct Batch {
    label: String,
    wall: f64,
    ok: usize,
    /// Results that report a new VM (`changed`).
    created: usize,
    failed: usize,
    distinct_vmids: usize,
    vms_listed: usize,
    first_failure: String,
    /// An ok but unchanged result: a create that silently did nothing.
    first_silent_noop: String,
}

const PARALLEL: usize = 20;

fn parallel_batch(collection: &str, label: &str, task_extra: &str) -> Batch {
    let anchor = Anchor::start();
    let hosts: Vec<String> = (1..=PARALLEL).map(|i| format!("vm{i:02}")).collect();
    let create = "community.proxmox.proxmox_kvm:
          name: \"par-{{ inventory_hostname }}\"
          node: pve1
          cores: 1
          memory: 512
          net:
            net0: virtio,bridge=vmbr0";
    let mut text = playbook(collection, "vm*", "create", create, task_extra);
    text.push_str(&playbook(
        collection,
        "localhost",
        "listing",
        "community.proxmox.proxmox_vm_info: {type: qemu}",
        "",
    ));
    let path = write(&anchor, "parallel.yml", &text);
    let run: Run = anchor.run_file(
        &path,
        &RunOpts {
            hosts,
            forks: Some(PARALLEL),
            vars: Value::Null,
            ..Default::default()
        },
    );
    let creates = run.all("create");
    assert_eq!(creates.len(), PARALLEL, "one result per host\n{}", run.transcript());
    let start = creates.iter().map(|o| o.start).fold(f64::INFINITY, f64::min);
    let end = creates.iter().map(|o| o.end).fold(f64::NEG_INFINITY, f64::max);
    let ok: Vec<_> = creates.iter().filter(|o| !o.failed).collect();
    let mut vmids: Vec<u64> = ok.iter().filter_map(|o| o.result["vmid"].as_u64()).collect();
    vmids.sort_unstable();
    vmids.dedup();
    let listing = run.task("listing");
    let vms_listed = listing.result["proxmox_vms"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|g| g["name"].as_str().is_some_and(|n| n.starts_with("par-")))
                .count()
        })
        .unwrap_or(0);
    Batch {
        label: label.to_string(),
        wall: end - start,
        ok: ok.len(),
        created: ok.iter().filter(|o| o.changed).count(),
        failed: creates.len() - ok.len(),
        distinct_vmids: vmids.len(),
        vms_listed,
        first_failure: creates
            .iter()
            .find(|o| o.failed)
            .map(|o| o.msg().to_string())
            .unwrap_or_default(),
        first_silent_noop: ok
            .iter()
            .find(|o| !o.changed)
            .map(|o| format!("{}: {}", o.host, o.msg()))
            .unwrap_or_default(),
    }
}

/// Where the ferrox binaries come from, and their sizes.
fn modules_dir() -> std::path::PathBuf {
    support::ferrox_modules_dir().unwrap_or_else(|| {
        ferrox_integration::repo_root()
            .join("plugins/modules/__bin")
            .join(ferrox_integration::host_platform())
    })
}

fn binary_note() -> String {
    let dir = modules_dir();
    let binary = ferrox_integration::BINARY;
    let sizes: Vec<String> = match std::fs::metadata(dir.join(binary)) {
        Ok(meta) => vec![format!(
            "`{binary}` (all four modules) {:.1} MB",
            meta.len() as f64 / 1e6
        )],
        Err(_) => vec![format!("{binary} missing")],
    };
    // Name the build, not this machine's paths.
    let shown = match dir.strip_prefix(ferrox_integration::repo_root()) {
        Ok(inside) => format!("`{}`", inside.display()),
        Err(_) if dir.ends_with("release") => "a release build (`bench/compare --release`)".to_string(),
        Err(_) => "`$FERROX_MODULES_DIR`".to_string(),
    };
    format!("from {shown} ({})", sizes.join(", "))
}

fn report(community: &[OpResult], ours: &[OpResult], batches: &[Batch]) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# community.proxmox 1.6.0 vs ferrox.proxmox on pvesim\n");
    let _ = writeln!(
        md,
        "Written by `bench/compare`. Same playbooks, only the collection prefix changed; a fresh \
         simulator (default scenario, default timings) per collection and per batch. \
         ferrox binaries {}. Wall time = task start to result \
         as Ansible sees it (module transfer, interpreter start, API calls, waits).\n",
        binary_note()
    );
    let _ = writeln!(md, "## API calls and wall time per operation\n");
    let _ = writeln!(md, "| operation | calls community | calls ferrox | seconds community | seconds ferrox | changed community / ferrox |");
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---|");
    for (i, (label, _)) in OPERATIONS.iter().enumerate() {
        let (c, f) = (&community[i], &ours[i]);
        let flag = |r: &OpResult| {
            if r.failed {
                "FAILED".to_string()
            } else {
                r.changed.to_string()
            }
        };
        let _ = writeln!(
            md,
            "| {label} | {} | {} | {:.2} | {:.2} | {} / {} |",
            c.calls,
            f.calls,
            c.seconds,
            f.seconds,
            flag(c),
            flag(f)
        );
    }
    let total = |rs: &[OpResult]| rs.iter().map(|r| r.calls).sum::<u64>();
    let secs = |rs: &[OpResult]| rs.iter().map(|r| r.seconds).sum::<f64>();
    let _ = writeln!(
        md,
        "| **total** | **{}** | **{}** | **{:.2}** | **{:.2}** | |\n",
        total(community),
        total(ours),
        secs(community),
        secs(ours)
    );

    let _ = writeln!(md, "## {PARALLEL} VMs created in parallel without vmid\n");
    let _ = writeln!(
        md,
        "Wall seconds = first task start to last result. \"ok\" counts results that did not fail; \
         \"created\" those that reported a new VM; an ok result that created nothing is a create \
         that silently lost the race (it found another host's VM under the vmid it was given).\n"
    );
    let _ = writeln!(
        md,
        "| run | wall seconds | ok | created | failed | distinct vmids | VMs listed after |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|");
    for b in batches {
        let _ = writeln!(
            md,
            "| {} | {:.1} | {} | {} | {} | {} | {} |",
            b.label, b.wall, b.ok, b.created, b.failed, b.distinct_vmids, b.vms_listed
        );
    }
    for b in batches {
        if b.failed > 0 {
            let _ = writeln!(md, "\nFirst failure of \"{}\": `{}`", b.label, b.first_failure);
        }
        if !b.first_silent_noop.is_empty() {
            let _ = writeln!(md, "\nA silent no-op of \"{}\": `{}`", b.label, b.first_silent_noop);
        }
    }

    let _ = writeln!(md, "\n## Calls by endpoint\n");
    for (i, (label, _)) in OPERATIONS.iter().enumerate() {
        let _ = writeln!(md, "### {label}\n");
        let _ = writeln!(md, "| endpoint | community | ferrox |");
        let _ = writeln!(md, "|---|---:|---:|");
        let mut keys: Vec<&String> = community[i]
            .by_endpoint
            .keys()
            .chain(ours[i].by_endpoint.keys())
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let get = |r: &OpResult| r.by_endpoint.get(k).copied().unwrap_or(0);
            let _ = writeln!(md, "| `{k}` | {} | {} |", get(&community[i]), get(&ours[i]));
        }
        let _ = writeln!(
            md,
            "\nmsg community: `{}`  \nmsg ferrox: `{}`\n",
            community[i].msg, ours[i].msg
        );
    }
    md
}

#[test]
fn upids_are_folded_into_one_endpoint() {
    assert_eq!(
        without_upid("GET /api2/json/nodes/pve1/tasks/UPID:pve1:00100001:0ADF0211:6B0C7857:qmcreate:101:ansible@pve!automation:/status"),
        "GET /api2/json/nodes/pve1/tasks/{upid}/status"
    );
    assert_eq!(without_upid("GET /api2/json/version"), "GET /api2/json/version");
}

#[test]
#[ignore = "benchmark (minutes): run bench/compare"]
fn compare_community_and_ferrox() {
    let path = modules_dir().join(ferrox_integration::BINARY);
    assert!(
        path.is_file(),
        "{} is missing: build the module binary first (bench/compare --release does)",
        path.display()
    );
    let community = measure_operations(COMMUNITY);
    let ours = measure_operations(FERROX);
    let batches = vec![
        parallel_batch(FERROX, "ferrox.proxmox, forks 20", ""),
        parallel_batch(COMMUNITY, "community.proxmox, throttle: 1", "      throttle: 1\n"),
        parallel_batch(COMMUNITY, "community.proxmox, forks 20 (no throttle)", ""),
    ];
    let md = report(&community, &ours, &batches);
    println!("{md}");
    if let Some(out) = std::env::var_os("FERROX_BENCH_OUT") {
        let out = Path::new(&out);
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir).expect("results dir");
        }
        std::fs::write(out, &md).expect("write the results");
    }
    // The measurement must have measured something real.
    assert!(
        community.iter().chain(&ours).all(|r| r.calls > 0),
        "every operation made API calls"
    );
}
