//! The controller platforms a module binary is built for, named as the folders of
//! `plugins/modules/__bin/<platform>/` (underscores: the folder names are part of the
//! internal module name `ferrox.proxmox.__bin.<platform>.<module>`).
//!
//! The action plugins (`plugins/plugin_utils/binary_module.py`) map `uname -sm` to the
//! same names; keep the two tables in step.

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::repo;

/// A platform we know how to build for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// The `__bin/` folder name, e.g. `linux_x86_64`.
    pub name: &'static str,
    /// The Rust target triple cargo builds for it.
    pub triple: &'static str,
    /// Linked with `+crt-static` (Linux glibc); macOS links libSystem dynamically, as it must.
    pub crt_static: bool,
}

pub const PLATFORMS: [Platform; 5] = [
    Platform {
        name: "linux_x86_64",
        triple: "x86_64-unknown-linux-gnu",
        crt_static: true,
    },
    Platform {
        name: "linux_x86_64",
        triple: "x86_64-unknown-linux-musl",
        crt_static: false,
    },
    Platform {
        name: "linux_aarch64",
        triple: "aarch64-unknown-linux-gnu",
        crt_static: true,
    },
    Platform {
        name: "darwin_arm64",
        triple: "aarch64-apple-darwin",
        crt_static: false,
    },
    Platform {
        name: "darwin_x86_64",
        triple: "x86_64-apple-darwin",
        crt_static: false,
    },
];

/// The platform of the host that builds (`host:` of `rustc -vV`): only the host's own
/// target is assumed installed, so that is the one `cargo collection build` makes.
pub fn host() -> Result<Platform> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out =
        repo::output(Command::new(rustc).arg("-vV")).context("asking rustc for the host triple")?;
    let triple = host_triple(&out).context("`rustc -vV` printed no `host:` line")?;
    of_triple(triple)
}

fn host_triple(rustc_vv: &str) -> Option<&str> {
    rustc_vv
        .lines()
        .find_map(|l| l.strip_prefix("host:"))
        .map(str::trim)
}

pub fn of_triple(triple: &str) -> Result<Platform> {
    match PLATFORMS.iter().find(|p| p.triple == triple) {
        Some(p) => Ok(*p),
        None => {
            let known: Vec<&str> = PLATFORMS.iter().map(|p| p.triple).collect();
            bail!(
                "cannot build module binaries on host {triple}: the collection supports {}",
                known.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_line_of_rustc_names_the_platform() {
        let out = "rustc 1.95.0\nbinary: rustc\nhost: aarch64-apple-darwin\nrelease: 1.95.0\n";
        assert_eq!(
            of_triple(host_triple(out).unwrap()).unwrap().name,
            "darwin_arm64"
        );
        assert_eq!(
            of_triple("x86_64-unknown-linux-gnu").unwrap().name,
            "linux_x86_64"
        );
        assert!(of_triple("x86_64-pc-windows-msvc")
            .unwrap_err()
            .to_string()
            .contains("x86_64-unknown-linux-gnu"));
    }
}
