//! ARCHITECTURE.md stays a true map: it names every crate of the workspace by its
//! directory and every directory directly under a crate's `src/` by its exact path
//! (`common/rules/src/propstring/`), each layer crate of `common/` has its section, and
//! every repository path it writes in backticks exists. Paths are compared whole, never
//! as substrings (`vm.rs` is not named by `new_vm.rs`). Every Rust name it cites
//! (`Client::connect`, `vm_task::locate_qemu`, `PlanView`) is defined in the source, so a
//! renamed or removed item cannot stay on the map. File-level detail lives in the
//! crates' own docs, so each layer crate starts with a crate doc and denies missing docs.
//! And the layers of `common/` stay layers: the crate graph Cargo builds has only the
//! edges drawn there (a layer's tests may use the simulator besides); each module crate
//! depends on exactly the crates the map lists for it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ferrox_integration::repo_root;
use regex::Regex;

fn map() -> String {
    std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap()
}

/// The inline code spans of a Markdown text (`` `like this` ``), outside fenced blocks.
fn code_spans(markdown: &str) -> BTreeSet<String> {
    let mut spans = BTreeSet::new();
    let mut fenced = false;
    let mut prose = String::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    // Spans may wrap a line; odd pieces between backticks are code.
    for (i, piece) in prose.split('`').enumerate() {
        if i % 2 == 1 {
            spans.insert(piece.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    spans
}

/// One workspace crate: its name, its directory relative to the repo root (no trailing
/// slash), the workspace crates it depends on (any kind), and those of them it uses
/// only in its tests (dev-dependencies alone).
struct Krate {
    name: String,
    dir: String,
    deps: BTreeSet<String>,
    tests_only: BTreeSet<String>,
}

/// The workspace's crates, from `cargo metadata`.
fn workspace() -> Vec<Krate> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let root = repo_root().canonicalize().unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap());
            let dir = manifest.parent().unwrap().canonicalize().unwrap();
            let dir = dir.strip_prefix(&root).unwrap().display().to_string();
            let workspace_deps: Vec<(String, bool)> = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| (d["name"].as_str().unwrap().to_string(), d["kind"] == "dev"))
                .filter(|(d, _)| names.contains(d))
                .collect();
            let deps: BTreeSet<String> = workspace_deps.iter().map(|(d, _)| d.clone()).collect();
            let tests_only = deps
                .iter()
                .filter(|d| workspace_deps.iter().all(|(w, dev)| w != *d || *dev))
                .cloned()
                .collect();
            Krate {
                name: p["name"].as_str().unwrap().to_string(),
                dir,
                deps,
                tests_only,
            }
        })
        .collect()
}

/// The directories directly under `dir`, by name.
fn subdirectories(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn every_crate_and_each_directory_under_its_src_is_named_by_its_path() {
    let spans = code_spans(&map());
    let mut missing = Vec::new();
    for krate in workspace() {
        let mut wanted = vec![format!("{}/", krate.dir)];
        let src = repo_root().join(&krate.dir).join("src");
        wanted.extend(subdirectories(&src).iter().map(|d| format!("{}/src/{d}/", krate.dir)));
        missing.extend(wanted.into_iter().filter(|w| !spans.contains(w)));
    }
    assert_eq!(
        missing,
        Vec::<String>::new(),
        "paths ARCHITECTURE.md does not name (in backticks)"
    );
}

#[test]
fn every_layer_crate_has_its_section() {
    let map = map();
    let dirs: BTreeMap<String, String> = workspace().into_iter().map(|k| (k.name, k.dir)).collect();
    let missing: Vec<String> = LAYERS
        .iter()
        .map(|(name, _)| *name)
        .map(|name| format!("## {} — {name}", dirs[name]))
        .filter(|heading| !map.lines().any(|l| l.starts_with(heading.as_str())))
        .collect();
    assert_eq!(missing, Vec::<String>::new(), "section headings ARCHITECTURE.md lacks");
}

/// A repository path as the map writes it, or `None` for any other code span: a span
/// without spaces, with a `/`, whose first component is an entry of the repository's root.
fn repo_path(span: &str, top_level: &BTreeSet<String>) -> Option<String> {
    let first = span.split('/').next()?;
    (span.contains('/') && !span.contains(' ') && top_level.contains(first)).then(|| span.to_string())
}

/// What must exist for a path the map writes: the path itself, or for a path with a
/// placeholder (`plugins/modules/<name>.py`, `anchor*`) the directory before it. A path
/// written with a trailing `/` must be a directory.
fn stale(path: &str) -> bool {
    let placeholder = |c: &str| c.contains(['<', '{', '*']);
    let components: Vec<&str> = path.split('/').collect();
    match components.iter().position(|c| placeholder(c)) {
        Some(at) => !repo_root().join(components[..at].join("/")).is_dir(),
        None => {
            let on_disk = repo_root().join(path);
            !on_disk.exists() || (path.ends_with('/') && !on_disk.is_dir())
        }
    }
}

#[test]
fn the_paths_the_map_names_exist() {
    let top_level: BTreeSet<String> = std::fs::read_dir(repo_root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().to_string())
        .collect();
    let stale: Vec<String> = code_spans(&map())
        .iter()
        .filter_map(|s| repo_path(s, &top_level))
        .filter(|p| stale(p))
        .collect();
    assert_eq!(
        stale,
        Vec::<String>::new(),
        "paths in ARCHITECTURE.md that do not exist"
    );
}

#[test]
fn spans_are_compared_whole() {
    let spans = code_spans("`modules/proxmox_kvm/src/execute/new_vm.rs` and\n```\n`common/x/`\n```\n");
    assert!(spans.contains("modules/proxmox_kvm/src/execute/new_vm.rs"));
    assert!(!spans.contains("modules/proxmox_kvm/src/execute/vm.rs"));
    assert!(!spans.contains("common/x/"), "fenced blocks are not prose");
}

/// The Rust names the map cites: every path of two segments or more inside a code span
/// (`privileges::Gate::require`; in `protocol::run(&MODULES, run::read_private_state)`
/// both paths; a shell command's `ticket::` filter is none), and every span that is one
/// type name (`PlanView`).
fn cited_names(markdown: &str) -> BTreeSet<String> {
    let path = Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+").unwrap();
    let type_name = Regex::new(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*$").unwrap();
    let mut names = BTreeSet::new();
    for span in code_spans(markdown) {
        names.extend(path.find_iter(&span).map(|m| m.as_str().to_string()));
        if type_name.is_match(&span) {
            names.insert(span);
        }
    }
    names
}

/// What one source file offers a cited name.
struct Source {
    /// Its path from the repository root.
    path: String,
    /// The items it defines (`fn`, `struct`, `enum`, `trait`, `mod`, `const`, `static`,
    /// `type`, a Python `class`) or re-exports (`pub use`).
    items: BTreeSet<String>,
    /// The types it defines or holds an `impl` of: whose items it may define.
    types: BTreeSet<String>,
}

/// Every `.rs` and `.py` file of the tree (the Python files for the action plugin's
/// classes), outside build output and hidden directories, read once.
fn sources() -> Vec<Source> {
    let item =
        Regex::new(r"(?-u:\b)(?:fn|struct|enum|trait|mod|const|static|type|class)[ \t\n]+([A-Za-z_][A-Za-z0-9_]*)")
            .unwrap();
    let reexport = Regex::new(r"(?m)^[ \t\n]*pub use ([^;]*);").unwrap();
    let implemented = Regex::new(r"(?m)^[ \t\n]*impl(?-u:\b)([^{]*)").unwrap();
    let word = Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").unwrap();
    let mut files = Vec::new();
    walk(&repo_root(), &mut files);
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let words = |re: &Regex| -> BTreeSet<String> {
                re.captures_iter(&text)
                    .flat_map(|c| {
                        word.find_iter(c.get(1).unwrap().as_str())
                            .map(|w| w.as_str().to_string())
                            .collect::<Vec<_>>()
                    })
                    .collect()
            };
            let defined = words(&item);
            let types = defined
                .iter()
                .chain(&words(&implemented))
                .filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
                .cloned()
                .collect();
            Source {
                path: path.strip_prefix(repo_root()).unwrap().display().to_string(),
                items: defined.into_iter().chain(words(&reexport)).collect(),
                types,
            }
        })
        .collect()
}

/// The `.rs` and `.py` files under `dir`, skipping hidden directories and build output
/// (`target*`, `build`, `__bin`).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        if path.is_dir() {
            let output = name.starts_with('.') || name.starts_with("target") || ["build", "__bin"].contains(&name);
            if !output {
                walk(&path, out);
            }
        } else if name.ends_with(".rs") || name.ends_with(".py") {
            out.push(path);
        }
    }
}

/// Whether `name` is defined in `sources`, one segment after the other: each segment is
/// an item of a file where the segment before it says — under a module (`vm::by_vmid`:
/// in `vm.rs` or a file under a `vm/` directory, a crate's directory being its
/// module), or beside a type (`Client::connect`: in a file that defines `Client` or
/// holds an `impl` of it). A single type name is defined anywhere. So `Plan::from_value`
/// is not found (a `Plan` has no `from_value`), while `RunPlan::from_value` is.
fn defined(name: &str, sources: &[Source]) -> bool {
    let segments: Vec<&str> = name.split("::").collect();
    if let [only] = segments.as_slice() {
        return sources.iter().any(|s| s.items.contains(*only));
    }
    segments.windows(2).all(|pair| {
        let (holder, item) = (pair[0], pair[1]);
        let holds = |s: &Source| match holder.starts_with(|c: char| c.is_ascii_uppercase()) {
            true => s.types.contains(holder),
            false => {
                let mut parts = s.path.split('/').rev();
                let file = parts.next().unwrap_or_default();
                file.strip_suffix(".rs") == Some(holder) || parts.any(|dir| dir == holder)
            }
        };
        sources.iter().any(|s| s.items.contains(item) && holds(s))
    })
}

#[test]
fn the_names_the_map_cites_are_defined() {
    let sources = sources();
    let undefined: Vec<String> = cited_names(&map())
        .into_iter()
        .filter(|name| !defined(name, &sources))
        .collect();
    assert_eq!(
        undefined,
        Vec::<String>::new(),
        "names in ARCHITECTURE.md that no source defines (renamed or removed?)"
    );
}

#[test]
fn a_name_is_found_only_where_its_path_says() {
    let sources = sources();
    let cited = cited_names("`protocol::run(&MODULES, run::read_private_state)`, `PlanView`, `cargo test -- auth::`");
    assert_eq!(
        cited.iter().map(String::as_str).collect::<Vec<_>>(),
        ["PlanView", "protocol::run", "run::read_private_state"]
    );
    for name in [
        "RunPlan::from_value",
        "Client::connect",
        "vm_task::locate_qemu",
        "PlanView",
    ] {
        assert!(defined(name, &sources), "{name} is defined");
    }
    // A type's item in another type's file, a module's item in another module, and a
    // made-up name are not.
    for name in [
        "Plan::from_value",
        "vm::locate_qemu",
        "Client::no_such_method",
        "NoSuchType",
    ] {
        assert!(!defined(name, &sources), "{name} is not defined as cited");
    }
}

/// File-level detail lives in the crates' docs: each layer crate starts with a crate doc
/// and denies missing docs.
#[test]
fn every_layer_crate_documents_itself() {
    let dirs: BTreeMap<String, String> = workspace().into_iter().map(|k| (k.name, k.dir)).collect();
    let mut undocumented = Vec::new();
    for name in LAYERS.iter().map(|(name, _)| *name) {
        let lib = std::fs::read_to_string(repo_root().join(&dirs[name]).join("src/lib.rs")).unwrap();
        if !lib.starts_with("//!") || !lib.contains("#![deny(missing_docs)]") {
            undocumented.push(name);
        }
    }
    assert_eq!(
        undocumented,
        Vec::<&str>::new(),
        "layer crates without a crate doc or deny(missing_docs)"
    );
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

/// What a layer crate's tests may use besides the layers below it: the simulator, which
/// shares no code with any crate of ours.
const TEST_SUPPORT: [&str; 1] = ["pvesim"];

/// Cargo refuses a cycle between crates; this holds the graph to the drawn one, so a new
/// edge upwards (the client reaching for the run layer, the rules for the client) fails
/// here rather than growing into a cycle later. A layer's tests may use the simulator,
/// nothing above the layer.
#[test]
fn the_layer_crates_depend_only_on_the_layers_below_them() {
    let crates = workspace();
    for (layer, allowed) in LAYERS {
        let Some(krate) = crates.iter().find(|k| k.name == layer) else {
            panic!("{layer} is not a workspace crate");
        };
        let extra: Vec<&String> = krate
            .deps
            .iter()
            .filter(|d| !allowed.contains(&d.as_str()))
            .filter(|d| !(krate.tests_only.contains(*d) && TEST_SUPPORT.contains(&d.as_str())))
            .collect();
        assert!(extra.is_empty(), "{layer} depends on {extra:?}, which is not below it");
    }
}

/// The heading of the map's section whose first fenced block lists each module crate's
/// workspace dependencies.
const MODULES_HEADING: &str = "## modules/ — the module crates";

/// The crate graph drawn in the first fenced block after `heading`: one line per crate,
/// `crate → dep, dep` (a crate without `→` depends on nothing).
fn drawn_edges(markdown: &str, heading: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut lines = markdown.lines().skip_while(|l| !l.starts_with(heading)).skip(1);
    assert!(
        lines.by_ref().any(|l| l.trim_start().starts_with("```")),
        "no fenced block after {heading:?} in ARCHITECTURE.md"
    );
    lines
        .take_while(|l| !l.trim_start().starts_with("```"))
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (krate, deps) = line.split_once('→').unwrap_or((line, ""));
            let deps = deps.split(',').map(str::trim).filter(|d| !d.is_empty());
            (krate.trim().to_string(), deps.map(String::from).collect())
        })
        .collect()
}

/// Where the crates Cargo builds and the drawn ones differ, one line each: an edge not
/// drawn, a drawn edge Cargo does not build, a crate of `dir_prefix` the drawing lacks, a
/// drawn crate that is not one of them.
fn undrawn_edges(crates: &[Krate], dir_prefix: &str, drawn: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let built: BTreeMap<&str, &BTreeSet<String>> = crates
        .iter()
        .filter(|k| k.dir.starts_with(dir_prefix))
        .map(|k| (k.name.as_str(), &k.deps))
        .collect();
    let mut out = Vec::new();
    for (krate, deps) in &built {
        let Some(listed) = drawn.get(*krate) else {
            out.push(format!("{krate} is not on the map"));
            continue;
        };
        out.extend(
            deps.difference(listed)
                .map(|d| format!("{krate} → {d} is not on the map")),
        );
        out.extend(
            listed
                .difference(deps)
                .map(|d| format!("{krate} → {d} is on the map, not in its Cargo.toml")),
        );
    }
    out.extend(
        drawn
            .keys()
            .filter(|k| !built.contains_key(k.as_str()))
            .map(|k| format!("{k} is on the map but is no crate under {dir_prefix}")),
    );
    out
}

/// A module crate reaches only the layers the map lists for it: a new `Cargo.toml`
/// dependency (a module reaching for a layer it did not use, or for another module)
/// fails here until the map says so.
#[test]
fn the_module_crates_depend_only_on_the_crates_the_map_lists() {
    let drawn = drawn_edges(&map(), MODULES_HEADING);
    assert_eq!(
        undrawn_edges(&workspace(), "modules/", &drawn),
        Vec::<String>::new(),
        "module crate dependencies that differ from ARCHITECTURE.md's list"
    );
}

#[test]
fn a_module_edge_off_the_map_is_reported() {
    let drawn = drawn_edges(
        "## modules/ — the module crates\n\ntext\n\n```\nm_a → layer-x, layer-y\nm_b\n```\n",
        MODULES_HEADING,
    );
    assert_eq!(
        drawn["m_a"],
        BTreeSet::from(["layer-x".to_string(), "layer-y".to_string()])
    );
    assert_eq!(drawn["m_b"], BTreeSet::new());
    let krate = |name: &str, dir: &str, deps: &[&str]| Krate {
        name: name.into(),
        dir: dir.into(),
        deps: deps.iter().map(|d| d.to_string()).collect(),
        tests_only: BTreeSet::new(),
    };
    let crates = [
        krate("m_a", "modules/m_a", &["layer-x", "layer-y"]),
        krate("m_b", "modules/m_b", &["layer-x"]),
        krate("layer-x", "common/x", &[]),
    ];
    assert_eq!(
        undrawn_edges(&crates, "modules/", &drawn),
        ["m_b → layer-x is not on the map"]
    );
    let crates = [
        krate("m_a", "modules/m_a", &["layer-x"]),
        krate("m_c", "modules/m_c", &[]),
    ];
    assert_eq!(
        undrawn_edges(&crates, "modules/", &drawn),
        [
            "m_a → layer-y is on the map, not in its Cargo.toml",
            "m_c is not on the map",
            "m_b is on the map but is no crate under modules/",
        ]
    );
}
