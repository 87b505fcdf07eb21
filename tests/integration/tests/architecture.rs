//! ARCHITECTURE.md stays a true map: every source file of the crates of `common/` and of
//! `modules/proxmox_kvm/` is named there (a directory's `mod.rs` by its directory), and
//! every `.rs` path it names under those crates exists. And the layers of `common/` stay
//! layers: the crate graph Cargo builds has only the edges drawn there.

use std::collections::BTreeSet;
use std::path::Path;

use ferrox_integration::repo_root;

const MAPPED: [&str; 9] = [
    "common/src",
    "common/python-repr/src",
    "common/ansible/src",
    "common/rules/src",
    "common/client/src",
    "common/cluster/src",
    "common/dryrun/src",
    "common/run/src",
    "modules/proxmox_kvm/src",
];

/// The `.rs` files under `dir`, relative to it.
fn sources(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.insert(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out
}

/// How the map names a file: `lib.rs` needs nothing (the crate is named), a `mod.rs` is
/// named by its directory (`api/client/`), any other file by its name.
fn named_in(map: &str, file: &str) -> bool {
    let path = Path::new(file);
    let name = path.file_name().unwrap().to_str().unwrap();
    match name {
        "lib.rs" => true,
        "mod.rs" => {
            let dir = path.parent().unwrap().file_name().unwrap().to_str().unwrap();
            map.contains(&format!("{dir}/"))
        }
        _ => map.contains(name),
    }
}

#[test]
fn every_source_file_of_common_and_proxmox_kvm_is_on_the_map() {
    let map = std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    for crate_src in MAPPED {
        for file in sources(&repo_root().join(crate_src)) {
            if !named_in(&map, &file) {
                missing.push(format!("{crate_src}/{file}"));
            }
        }
    }
    assert_eq!(missing, Vec::<String>::new(), "files ARCHITECTURE.md does not name");
}

#[test]
fn the_paths_the_map_names_exist() {
    let map = std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap();
    let stale: Vec<&str> = map
        .split(|c: char| c.is_whitespace() || "`(),;:".contains(c))
        .filter(|w| MAPPED.iter().any(|m| w.starts_with(m)) && w.ends_with(".rs"))
        .filter(|w| !repo_root().join(w).exists())
        .collect();
    assert_eq!(stale, Vec::<&str>::new(), "paths in ARCHITECTURE.md that do not exist");
}

/// Each layer crate of `common/` and the layer crates it may depend on (ARCHITECTURE.md):
/// a lower layer never on a higher one, the Ansible side and the API client never on
/// each other, the rules on nothing.
const LAYERS: [(&str, &[&str]); 7] = [
    ("ferrox-python-repr", &[]),
    ("ferrox-ansible", &["ferrox-python-repr"]),
    ("ferrox-pve-rules", &[]),
    ("ferrox-pve-client", &["ferrox-python-repr"]),
    (
        "ferrox-cluster",
        &["ferrox-ansible", "ferrox-pve-client", "ferrox-pve-rules"],
    ),
    ("ferrox-dryrun", &["ferrox-pve-client", "ferrox-pve-rules"]),
    (
        "ferrox-run",
        &[
            "ferrox-ansible",
            "ferrox-pve-client",
            "ferrox-pve-rules",
            "ferrox-cluster",
            "ferrox-dryrun",
        ],
    ),
];

/// The workspace's crates and the workspace crates each depends on (any kind), from
/// `cargo metadata`.
fn workspace_graph() -> std::collections::BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|d| names.contains(d))
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// Cargo refuses a cycle between crates; this holds the graph to the drawn one, so a new
/// edge upwards (the client reaching for the run layer, the rules for the client) fails
/// here rather than growing into a cycle later.
#[test]
fn the_layer_crates_depend_only_on_the_layers_below_them() {
    let graph = workspace_graph();
    for (layer, allowed) in LAYERS {
        let Some(deps) = graph.get(layer) else {
            panic!("{layer} is not a workspace crate");
        };
        let extra: Vec<&String> = deps.iter().filter(|d| !allowed.contains(&d.as_str())).collect();
        assert!(extra.is_empty(), "{layer} depends on {extra:?}, which is not below it");
    }
    let lower = |crate_: &str| LAYERS.iter().any(|(l, _)| *l == crate_);
    let facade: Vec<&String> = graph["ferrox-common"]
        .iter()
        .filter(|d| !lower(d) && *d != "pvesim")
        .collect();
    assert!(facade.is_empty(), "the ferrox-common facade depends on {facade:?}");
}
