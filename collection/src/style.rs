//! `style`: the code's form, checked before anything slow runs — `cargo fmt --check`
//! (rustfmt.toml at the root) and `cargo clippy --all-targets -D warnings` (the
//! workspace's lints in Cargo.toml, their test exceptions in clippy.toml). A tree that
//! is not formatted or not lint-clean fails `cargo collection test` in its first
//! minute, naming the files.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::repo;

/// Both checks on the workspace; the first failure is the error.
pub(crate) fn check() -> Result<()> {
    check_formatting(&repo::root())?;
    check_lints()
}

/// `cargo fmt --all --check` of the workspace whose root holds `manifest_dir`'s
/// Cargo.toml; fails listing the files rustfmt would change.
pub(crate) fn check_formatting(manifest_dir: &Path) -> Result<()> {
    let out = repo::cargo()
        .current_dir(manifest_dir)
        .args(["fmt", "--all", "--check", "--message-format", "short"])
        .output()
        .context("running cargo fmt (install it with `rustup component add rustfmt`)")?;
    if out.status.success() {
        return Ok(());
    }
    let files = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if files.is_empty() {
        bail!(
            "cargo fmt --check failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    bail!("these files are not formatted (run `cargo fmt --all`):\n{files}")
}

/// `cargo clippy --workspace --all-targets -- -D warnings`: every warning fails.
fn check_lints() -> Result<()> {
    let mut cmd = repo::cargo();
    cmd.args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]);
    repo::run(&mut cmd).context("clippy found warnings (fix them, or allow one where it must happen, saying why)")
}

#[cfg(test)]
mod tests {
    use super::check_formatting;

    /// A one-file crate with the given lib.rs, in its own temp dir.
    fn crate_with(lib: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"shape\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), lib).unwrap();
        dir
    }

    #[test]
    fn an_unformatted_file_fails_the_check_naming_it() {
        let dir = crate_with("pub fn answer( )->u8{42}\n");
        let err = check_formatting(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not formatted"), "{err}");
        assert!(err.contains("lib.rs"), "the file is named: {err}");
    }

    #[test]
    fn a_formatted_file_passes() {
        let dir = crate_with("pub fn answer() -> u8 {\n    42\n}\n");
        check_formatting(dir.path()).unwrap();
    }
}
