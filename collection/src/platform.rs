//! The controller platforms the module binary is built for, named as the folders of
//! `plugins/modules/__bin/<platform>/` (underscores: the folder names are part of the
//! internal module name `ferrox.proxmox.__bin.<platform>.ferrox`).
//!
//! The action plugins (`plugins/plugin_utils/binary_module.py`) map `uname -sm` to the
//! same names; keep the two tables in step.

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::repo;

/// A platform the tarball ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Platform {
    /// The `__bin/` folder name, e.g. `linux_x86_64`.
    pub name: &'static str,
    /// The Rust target a build on this very platform makes (rustup's host target).
    pub native: &'static str,
    /// The Rust target a cross build from another platform makes (with zig as linker):
    /// musl on Linux, static without a glibc to link against.
    pub cross: &'static str,
    /// What the built file must be (checked by `verify` before it counts).
    pub expect: Expect,
}

/// The binary format facts a platform's file must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A statically linked ELF executable for this `e_machine`.
    Elf { machine: u16 },
    /// A Mach-O executable for this CPU type, loadable from `min_macos` on, linking only
    /// the system's libraries; `signed`: Apple silicon kills unsigned binaries.
    MachO {
        cpu_type: u32,
        min_macos: (u16, u8),
        signed: bool,
    },
}

pub(crate) const PLATFORMS: [Platform; 4] = [
    Platform {
        name: "linux_x86_64",
        native: "x86_64-unknown-linux-gnu",
        cross: "x86_64-unknown-linux-musl",
        expect: Expect::Elf {
            machine: object::elf::EM_X86_64,
        },
    },
    Platform {
        name: "linux_aarch64",
        native: "aarch64-unknown-linux-gnu",
        cross: "aarch64-unknown-linux-musl",
        expect: Expect::Elf {
            machine: object::elf::EM_AARCH64,
        },
    },
    Platform {
        name: "darwin_arm64",
        native: "aarch64-apple-darwin",
        cross: "aarch64-apple-darwin",
        // The first macOS on Apple silicon.
        expect: Expect::MachO {
            cpu_type: object::macho::CPU_TYPE_ARM64,
            min_macos: (11, 0),
            signed: true,
        },
    },
    Platform {
        name: "darwin_x86_64",
        native: "x86_64-apple-darwin",
        cross: "x86_64-apple-darwin",
        // High Sierra: the oldest macOS a current Rust targets is 10.12; Apple supported
        // 10.13 until 2020, and nothing older is in use with a current ansible-core.
        expect: Expect::MachO {
            cpu_type: object::macho::CPU_TYPE_X86_64,
            min_macos: (10, 13),
            signed: false,
        },
    },
];

impl Platform {
    /// Linked with `+crt-static` when built natively (Linux glibc); musl is static
    /// already, and macOS links libSystem dynamically, as it must.
    pub(crate) fn native_crt_static(&self) -> bool {
        self.native.ends_with("-linux-gnu")
    }

    /// `MACOSX_DEPLOYMENT_TARGET` for a build of this platform (rustc and zig both read it).
    pub(crate) fn deployment_target(&self) -> Option<String> {
        match self.expect {
            Expect::MachO {
                min_macos: (major, minor),
                ..
            } => Some(format!("{major}.{minor}")),
            Expect::Elf { .. } => None,
        }
    }
}

/// Cargo's `RUSTFLAGS` variable for one target only, so other builds keep their cache.
pub(crate) fn rustflags_var(triple: &str) -> String {
    format!(
        "CARGO_TARGET_{}_RUSTFLAGS",
        triple.to_ascii_uppercase().replace('-', "_")
    )
}

/// The platform of the host that builds (`host:` of `rustc -vV`).
pub(crate) fn host() -> Result<Platform> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = repo::output(Command::new(rustc).arg("-vV")).context("asking rustc for the host triple")?;
    let triple = host_triple(&out).context("`rustc -vV` printed no `host:` line")?;
    of_triple(triple)
}

fn host_triple(rustc_vv: &str) -> Option<&str> {
    rustc_vv.lines().find_map(|l| l.strip_prefix("host:")).map(str::trim)
}

pub(crate) fn of_triple(triple: &str) -> Result<Platform> {
    match PLATFORMS.iter().find(|p| p.native == triple || p.cross == triple) {
        Some(p) => Ok(*p),
        None => {
            let known: Vec<&str> = PLATFORMS.iter().map(|p| p.native).collect();
            bail!(
                "cannot build module binaries on host {triple}: the collection supports {} (`cargo collection build --all-platforms` cross-builds all of them from a Linux machine)",
                known.join(", ")
            )
        }
    }
}

#[cfg(test)]
pub(crate) fn by_name(name: &str) -> Option<Platform> {
    PLATFORMS.iter().copied().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_line_of_rustc_names_the_platform() {
        let out = "rustc 1.95.0\nbinary: rustc\nhost: aarch64-apple-darwin\nrelease: 1.95.0\n";
        assert_eq!(of_triple(host_triple(out).unwrap()).unwrap().name, "darwin_arm64");
        assert_eq!(of_triple("x86_64-unknown-linux-gnu").unwrap().name, "linux_x86_64");
        assert_eq!(of_triple("aarch64-unknown-linux-musl").unwrap().name, "linux_aarch64");
        assert!(of_triple("x86_64-pc-windows-msvc")
            .unwrap_err()
            .to_string()
            .contains("x86_64-unknown-linux-gnu"));
    }

    #[test]
    fn macos_builds_name_their_deployment_target() {
        assert_eq!(
            by_name("darwin_arm64").unwrap().deployment_target().as_deref(),
            Some("11.0")
        );
        assert_eq!(
            by_name("darwin_x86_64").unwrap().deployment_target().as_deref(),
            Some("10.13")
        );
        assert_eq!(by_name("linux_aarch64").unwrap().deployment_target(), None);
    }
}
