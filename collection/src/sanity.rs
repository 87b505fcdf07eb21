//! `ansible-test sanity` support.
//!
//! validate-modules crashes on a binary under `plugins/modules/` (it reads every module
//! as text), and an ignore *code* cannot mask a crash: each binary needs a
//! `validate-modules!skip` entry. ansible-test also rejects entries naming files it does
//! not see, and the binaries are git-ignored in the repository, so the ignore files are
//! generated from the binaries present (by `cargo collection build`), git-ignored, and
//! shipped in the tarball, whose installed copy is what the sanity run checks.

use std::path::Path;

use anyhow::Result;

use crate::modules;
use crate::repo;

/// The ansible-core versions an ignore file is written for (`requires_ansible` onwards).
pub const IGNORE_VERSIONS: [&str; 6] = ["2.17", "2.18", "2.19", "2.20", "2.21", "2.22"];

/// Writes `tests/sanity/ignore-<v>.txt`: one skip line per binary in `bin_root`.
pub fn write_ignores(bin_root: &Path) -> Result<()> {
    let text = ignore_lines(bin_root)?;
    let dir = repo::root().join("tests/sanity");
    std::fs::create_dir_all(&dir)?;
    for v in IGNORE_VERSIONS {
        let path = dir.join(format!("ignore-{v}.txt"));
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, &text)?;
        }
    }
    Ok(())
}

fn ignore_lines(bin_root: &Path) -> Result<String> {
    let mut platforms: Vec<String> = match std::fs::read_dir(bin_root) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    platforms.sort();
    let mut text = String::new();
    for p in &platforms {
        for m in modules::names() {
            if bin_root.join(p).join(m).is_file() {
                text.push_str(&format!(
                    "plugins/modules/__bin/{p}/{m} validate-modules!skip # compiled {p} binary, not Python: validate-modules cannot read it; its docs are checked in plugins/modules/{m}.py\n"
                ));
            }
        }
    }
    Ok(text)
}
