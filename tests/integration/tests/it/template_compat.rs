//! community.proxmox 1.6's own proxmox_template tasks (tests/anchor/template.yml: upload
//! an ISO, download a container template by url, with a checksum, remove them) give the
//! same `failed`, `changed` and `msg` with either collection, each against its own
//! simulator, and leave the same files on the storage.

use crate::anchor::support::{anchor_dir, Anchor, RunOpts};
use serde_json::json;

use pvesim::fileserver::{FileServer, Served};

/// The storage's files after a run, as `volid size`.
fn files_of(anchor: &Anchor) -> Vec<String> {
    let state = anchor.control("GET", "/_pvesim/state");
    let mut out: Vec<String> = state["volumes"]
        .as_array()
        .expect("the simulator's volumes")
        .iter()
        .filter(|v| v["storage"] == "local" && v["node"] == "pve1")
        .map(|v| format!("{} {}", v["volname"].as_str().unwrap_or_default(), v["size"]))
        .collect();
    out.sort();
    out
}

#[test]
fn community_proxmox_template_tasks_give_the_same_results_with_either_collection() {
    let files = FileServer::start().unwrap();
    files.add(
        "/templates/alpine-3.22-default_20250108_amd64.tar.xz",
        Served::pattern(300_000),
    );
    let checked = Served::pattern(123_456);
    files.add("/templates/debian-13-standard_13.1-1_amd64.tar.zst", checked.clone());
    let text = std::fs::read_to_string(anchor_dir().join("template.yml")).unwrap();

    let mut runs = Vec::new();
    for (collection, body) in [
        ("community", text.clone()),
        ("ferrox", text.replace("community.proxmox.", "ferrox.proxmox.")),
    ] {
        let anchor = Anchor::start();
        let iso = anchor.dir().join("installer-compat.iso");
        std::fs::write(&iso, vec![7u8; 256 << 10]).unwrap();
        let playbook = anchor.dir().join(format!("{collection}-template.yml"));
        std::fs::write(&playbook, body).unwrap();
        let vars = json!({
            "template_iso": iso.display().to_string(),
            "template_url": files.url("/templates/alpine-3.22-default_20250108_amd64.tar.xz"),
            "template_checked_url": files.url("/templates/debian-13-standard_13.1-1_amd64.tar.zst"),
            "template_checked_sha256": checked.digests()["sha256"],
        });
        let run = anchor.run_file(
            &playbook,
            &RunOpts {
                vars,
                ..Default::default()
            },
        );
        let after = files_of(&anchor);
        runs.push((collection, run, after));
    }
    let (_, theirs, their_files) = &runs[0];
    let (_, ours, our_files) = &runs[1];
    assert_eq!(
        theirs.results.len(),
        8,
        "every task of 1.6 ran:\n{}\n{}",
        theirs.stdout,
        theirs.stderr
    );
    assert!(
        theirs.results.iter().all(|t| !t.failed),
        "1.6 runs clean against the simulator:\n{}",
        theirs.stdout
    );
    let mut mismatches = Vec::new();
    for t in &theirs.results {
        let o = ours
            .results
            .iter()
            .find(|o| o.name == t.name)
            .unwrap_or_else(|| panic!("{} did not run with ferrox.proxmox:\n{}", t.name, ours.stdout));
        if (t.failed, t.changed, t.msg()) != (o.failed, o.changed, o.msg()) {
            mismatches.push(format!(
                "{}:\n  1.6:  failed={} changed={} msg={:?}\n  ours: failed={} changed={} msg={:?}",
                t.name,
                t.failed,
                t.changed,
                t.msg(),
                o.failed,
                o.changed,
                o.msg()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "tasks that differ from 1.6:\n{}",
        mismatches.join("\n")
    );
    assert_eq!(their_files, our_files, "the same files are left on the storage");
    assert!(
        our_files
            .iter()
            .any(|f| f.starts_with("vztmpl/debian-13-standard_13.1-1_amd64.tar.zst ")),
        "{our_files:?}"
    );
}
