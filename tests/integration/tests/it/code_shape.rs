//! The shape the code keeps: no function in the `src/` of any workspace crate (the
//! layer crates, the modules, the collection tool, the simulator, the test harness)
//! longer than [`MAX_FUNCTION_LINES`], so each does one thing and can be read in one
//! screen. Test files (`tests/`) are scenarios read top to bottom and are not held to it.
//! The check reads the tree as `cargo fmt` leaves it (`cargo collection style` runs
//! first), so the count is rustfmt's layout, not the author's.
//!
//! Functions are found as rustfmt lays them out: a line starting (after indentation)
//! with `fn`, `pub fn`, `pub(crate) fn`, ..., ending at the first line that is only the
//! same indentation and `}`.

use std::path::{Path, PathBuf};

const MAX_FUNCTION_LINES: usize = 120;

/// `(file, function, lines)` of every function in the `.rs` files under `dir`.
fn functions(dir: &Path) -> Vec<(PathBuf, String, usize)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.extend(in_text(&text).into_iter().map(|(name, n)| (path.clone(), name, n)));
            }
        }
    }
    out
}

/// The functions of one file with their length in lines.
fn in_text(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let indent = &line[..line.len() - line.trim_start().len()];
        let Some(name) = fn_name(line.trim_start()) else {
            continue;
        };
        if line.trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| l.trim_end() == close) {
            out.push((name, end + 2));
        }
    }
    out
}

/// The name of the function a line declares, if it does.
fn fn_name(line: &str) -> Option<String> {
    let mut rest = line;
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    Some(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
}

/// The `src/` directory of every workspace member, from `cargo metadata`.
fn crate_sources() -> Vec<PathBuf> {
    let root = ferrox_integration::repo_root();
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(&root)
        .output()
        .expect("cargo metadata runs");
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let mut dirs: Vec<PathBuf> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| p["manifest_path"].as_str())
        .map(|m| Path::new(m).parent().expect("a crate directory").join("src"))
        .filter(|src| src.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn no_function_of_any_crate_is_over_the_limit() {
    let root = ferrox_integration::repo_root();
    let sources = crate_sources();
    assert!(sources.len() >= 15, "every crate's src/ is scanned: {sources:?}");
    let found: Vec<_> = sources.iter().flat_map(|dir| functions(dir)).collect();
    assert!(
        found.len() > 2000,
        "the scan finds the crates' functions ({} found)",
        found.len()
    );
    let mut long: Vec<String> = found
        .iter()
        .filter(|(_, _, n)| *n > MAX_FUNCTION_LINES)
        .map(|(path, name, n)| {
            format!(
                "{} {name}: {n} lines",
                path.strip_prefix(&root).unwrap_or(path).display()
            )
        })
        .collect();
    long.sort();
    assert_eq!(
        long,
        Vec::<String>::new(),
        "split these functions into steps of their own"
    );
}

#[test]
fn the_scan_measures_functions_as_rustfmt_lays_them_out() {
    let text = "fn a() {\n    x();\n}\n\nimpl T {\n    pub(crate) fn b(\n        y: u8,\n    ) -> u8 {\n        y\n    }\n    fn c();\n}\n";
    assert_eq!(in_text(text), vec![("a".to_string(), 3), ("b".to_string(), 5)]);
}
