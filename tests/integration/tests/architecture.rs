//! ARCHITECTURE.md stays a true map: every source file of `common/` and of
//! `modules/proxmox_kvm/` is named there (a directory's `mod.rs` by its directory), and
//! every `.rs` path it names under those crates exists.

use std::collections::BTreeSet;
use std::path::Path;

use ferrox_integration::repo_root;

const MAPPED: [&str; 2] = ["common/src", "modules/proxmox_kvm/src"];

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

/// The `use crate::<layer>` and `crate::<layer>::` paths a file names, outside comments.
fn layers_used(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            let layer: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.insert(layer);
        }
    }
    out
}

/// The run layer is on top: the protocol carries its state without naming it (no cycle
/// between `ansible` and the layers above), and nothing below uses it.
#[test]
fn the_protocol_names_no_layer_above_it_and_only_modules_and_privileges_use_the_run_layer() {
    let common = repo_root().join("common/src");
    let protocol = std::fs::read_to_string(common.join("ansible/protocol.rs")).unwrap();
    let above: Vec<String> = layers_used(&protocol)
        .into_iter()
        .filter(|l| ["run", "cluster", "plan", "api"].contains(&l.as_str()))
        .collect();
    assert!(above.is_empty(), "protocol.rs uses {above:?}");
    for file in sources(&common) {
        if file.starts_with("run/") || file.starts_with("pve/privileges/") || file == "lib.rs" {
            continue;
        }
        let text = std::fs::read_to_string(common.join(&file)).unwrap();
        assert!(
            !layers_used(&text).contains("run"),
            "common/src/{file} uses the run layer, which is above it"
        );
    }
}
