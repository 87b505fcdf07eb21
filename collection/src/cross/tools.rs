//! Every tool a cross build runs, where it comes from, and the `PATH` it runs with.
//!
//! The cross build sees only the system directories of Debian's packages (which hold
//! Debian's cargo and rustc, the toolchain it builds with) and the two directories
//! `setup --cross` fills: `.venv/bin` (PyPI's cargo-zigbuild and ziglang) and
//! `build/cross-tools/bin` (the names rustc expects for tools Debian ships under
//! another name). Nothing from `/usr/local`, `~/.local`, `~/.cargo/bin` or the caller's
//! `PATH`: a tool there would make the build pass on the machine of whoever installed it
//! by hand and fail on a fresh one, so here it fails everywhere, the developer's
//! machine included, naming the package that `setup --cross` must install.
//!
//! [`TOOLS`] is the one list: [`check`] runs before any build, `setup --cross` installs
//! and links from it, and the platforms guide (docs/docsite/rst/guide_platforms.rst) names the same tools.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};

use crate::platform::{Expect, Platform};
use crate::repo;

/// The system directories Debian's packages install programs into.
pub(crate) const SYSTEM_DIRS: [&str; 4] = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A Debian package, installed by `setup --cross` with apt-get.
    Debian(&'static str),
    /// A PyPI package (`name==version`), installed by `setup --cross` into `.venv`.
    Pypi(&'static str),
    /// A name rustc looks for, linked by `setup --cross` in `build/cross-tools/bin` to
    /// this program of the Debian package.
    Link { to: &'static str, package: &'static str },
}

/// One program (or file) a cross build needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tool {
    /// The name the build runs it by, or an absolute path for a file that is not run.
    pub name: &'static str,
    pub source: Source,
    /// What it does in the build, for messages and the platforms guide.
    pub why: &'static str,
    /// Needed only for macOS targets.
    pub apple_only: bool,
}

/// What cross builds run. Debian's `/usr/bin/cc` (gcc) links the build scripts; zig
/// links and compiles C for the target; rustc strips Apple binaries with
/// `rust-objcopy`, which rustup ships and Debian does not.
pub(crate) const TOOLS: [Tool; 9] = [
    tool(
        "cargo",
        Source::Debian("cargo-web"),
        "Debian's cargo, which runs -Zbuild-std",
        false,
    ),
    tool(
        "rustc",
        Source::Debian("rustc-web"),
        "Debian's Rust compiler, matching the std source below",
        false,
    ),
    tool(
        STD_SOURCE,
        Source::Debian("rust-web-src"),
        "the standard library's source, built for each target",
        false,
    ),
    tool(
        "cc",
        Source::Debian("gcc"),
        "links the build scripts, which run on this machine",
        false,
    ),
    tool(
        "sh",
        Source::Debian("dash"),
        "runs cargo-zigbuild's linker wrappers",
        false,
    ),
    tool(
        "cargo-zigbuild",
        Source::Pypi(ZIGBUILD),
        "runs cargo with zig as linker and C compiler",
        false,
    ),
    tool(
        "python3",
        Source::Pypi(ZIGLANG),
        "the venv's Python, which runs the ziglang package's zig",
        false,
    ),
    tool(
        "rust-objcopy",
        Source::Link {
            to: "/usr/bin/llvm-objcopy",
            package: "llvm",
        },
        "strips Apple binaries for rustc (strip = true) and writes their code signature again",
        true,
    ),
    tool(
        "zig",
        Source::Pypi(ZIGLANG),
        "zig, through the venv's `python3 -m ziglang`",
        false,
    ),
];

/// The PyPI packages of the venv.
pub(crate) const ZIGLANG: &str = "ziglang==0.17.1";
pub(crate) const ZIGBUILD: &str = "cargo-zigbuild==0.24.1";

/// Debian's compiler, its cargo, and its standard library's source (for -Zbuild-std).
pub(crate) const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
pub(crate) const DEBIAN_CARGO: &str = "/usr/bin/cargo";
const STD_SOURCE: &str = "/usr/lib/rustlib/src/rust/library/std";

const fn tool(name: &'static str, source: Source, why: &'static str, apple_only: bool) -> Tool {
    Tool {
        name,
        source,
        why,
        apple_only,
    }
}

/// The directories a cross build may take programs from.
#[derive(Debug, Clone)]
pub(crate) struct Toolbox {
    /// `.venv/bin`: cargo-zigbuild and the Python that runs zig.
    pub venv_bin: PathBuf,
    /// `build/cross-tools/bin`: the links of [`Source::Link`].
    pub links: PathBuf,
}

impl Toolbox {
    /// This checkout's.
    pub(crate) fn of_repo() -> Toolbox {
        let root = repo::root();
        Toolbox {
            venv_bin: root.join(".venv/bin"),
            links: root.join("build/cross-tools/bin"),
        }
    }

    /// The cross build's `PATH`: what setup made, then the system directories.
    pub(crate) fn path(&self) -> OsString {
        let dirs = [self.links.clone(), self.venv_bin.clone()]
            .into_iter()
            .chain(SYSTEM_DIRS.iter().map(PathBuf::from));
        std::env::join_paths(dirs).expect("no ':' in the tool directories")
    }

    /// `cmd` with the cross build's environment: its `PATH`, Debian's cargo and rustc
    /// (-Zbuild-std is a nightly flag that a stable compiler accepts with
    /// RUSTC_BOOTSTRAP), and nothing of rustup's or a wrapper's.
    pub(crate) fn apply(&self, cmd: &mut Command) {
        cmd.env("PATH", self.path())
            .env("CARGO", DEBIAN_CARGO)
            .env("RUSTC", DEBIAN_RUSTC)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_ZIGBUILD_PYTHON_PATH", self.venv_bin.join("python3"))
            .env_remove("RUSTUP_TOOLCHAIN")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("CARGO_BUILD_RUSTC_WRAPPER");
    }

    /// Where `name` is found on [`Self::path`] (absolute names: the file itself).
    pub(crate) fn find(&self, name: &str) -> Option<PathBuf> {
        if name.starts_with('/') {
            return Path::new(name).exists().then(|| PathBuf::from(name));
        }
        std::env::split_paths(&self.path())
            .map(|dir| dir.join(name))
            .find(|path| is_executable(path))
    }

    /// Fails, before anything is built, naming every tool the builds of `platforms`
    /// would miss and the package that brings it.
    pub(crate) fn check(&self, platforms: &[Platform]) -> Result<()> {
        let apple = platforms.iter().any(|p| matches!(p.expect, Expect::MachO { .. }));
        let missing: Vec<&Tool> = TOOLS
            .iter()
            .filter(|t| (apple || !t.apple_only) && !self.works(t))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = missing
            .iter()
            .map(|t| format!("  {} ({}): {}", t.name, t.why, t.source.install_hint()))
            .collect();
        bail!(
            "the cross build of {} cannot start; it runs with PATH={} only, where these are missing:\n{}\nRun `cargo collection setup --cross` (as root), which installs all of them.",
            platforms.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
            self.path().to_string_lossy(),
            lines.join("\n")
        )
    }

    fn works(&self, tool: &Tool) -> bool {
        if tool.name == "zig" {
            // Not on PATH: cargo-zigbuild runs the ziglang package's zig through Python.
            let python = self.venv_bin.join("python3");
            return Command::new(python)
                .args(["-m", "ziglang", "version"])
                .output()
                .is_ok_and(|o| o.status.success());
        }
        self.find(tool.name).is_some()
    }
}

impl Source {
    /// How to get it, for the failure that finds it missing.
    pub(crate) fn install_hint(&self) -> String {
        match self {
            Source::Debian(package) => format!("Debian package {package}"),
            Source::Pypi(package) => format!("PyPI package {package} in .venv"),
            Source::Link { to, package } => {
                format!("a link in build/cross-tools/bin to {to} (Debian package {package})")
            }
        }
    }
}

/// A regular file (or a link to one) that someone may execute.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::by_name;
    use std::os::unix::fs::PermissionsExt;

    /// A toolbox whose setup directories are fresh and empty.
    fn bare() -> (tempdir::Dir, Toolbox) {
        let dir = tempdir::Dir::new();
        let toolbox = Toolbox {
            venv_bin: dir.path().join("venv/bin"),
            links: dir.path().join("cross-tools/bin"),
        };
        std::fs::create_dir_all(&toolbox.venv_bin).unwrap();
        std::fs::create_dir_all(&toolbox.links).unwrap();
        (dir, toolbox)
    }

    fn put_program(dir: &Path, name: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\necho hand-installed\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// What a program run with the cross build's environment finds for `name`.
    fn found_by_a_build_step(toolbox: &Toolbox, name: &str, outside: &Path) -> Option<String> {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", &format!("command -v {name}")]);
        // The caller's PATH leads to a hand-installed copy; the build must not see it.
        cmd.env("PATH", std::env::join_paths([outside.to_path_buf()]).unwrap());
        toolbox.apply(&mut cmd);
        let out = cmd.output().unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    #[test]
    fn a_hand_installed_tool_outside_the_allowed_directories_fails_the_cross_build() {
        let (dir, toolbox) = bare();
        // A rust-objcopy put where a developer might have one: on the caller's PATH.
        let outside = dir.path().join("usr-local-bin");
        put_program(&outside, "rust-objcopy");
        assert_eq!(found_by_a_build_step(&toolbox, "rust-objcopy", &outside), None);
        let darwin = by_name("darwin_arm64").unwrap();
        let err = toolbox.check(&[darwin]).unwrap_err().to_string();
        assert!(err.contains("the cross build of darwin_arm64 cannot start"), "{err}");
        assert!(
            err.contains("rust-objcopy (strips Apple binaries")
                && err.contains("a link in build/cross-tools/bin to /usr/bin/llvm-objcopy (Debian package llvm)"),
            "{err}"
        );
        assert!(
            err.contains("cargo-zigbuild (") && err.contains("PyPI package cargo-zigbuild==0.24.1 in .venv"),
            "{err}"
        );
        assert!(err.contains("Run `cargo collection setup --cross`"), "{err}");
        assert!(
            !err.contains(&outside.display().to_string()),
            "the caller's PATH is not the build's: {err}"
        );
    }

    #[test]
    fn what_setup_puts_in_its_directories_is_found_and_nothing_else_is_needed_there() {
        let (_dir, toolbox) = bare();
        let link = put_program(&toolbox.links, "rust-objcopy");
        put_program(&toolbox.venv_bin, "cargo-zigbuild");
        assert_eq!(
            found_by_a_build_step(&toolbox, "rust-objcopy", Path::new("/nonexistent")),
            Some(link.display().to_string())
        );
        // With a Python that has no ziglang, zig is what remains missing (besides the
        // Debian packages this machine may lack).
        let err = toolbox
            .check(&[by_name("darwin_arm64").unwrap()])
            .unwrap_err()
            .to_string();
        assert!(
            !err.contains("rust-objcopy") && !err.contains("cargo-zigbuild ("),
            "{err}"
        );
        assert!(
            err.contains("zig (zig, through the venv's `python3 -m ziglang`)"),
            "{err}"
        );
    }

    #[test]
    fn rust_objcopy_is_asked_for_only_when_a_macos_target_is_built() {
        let (_dir, toolbox) = bare();
        let err = toolbox
            .check(&[by_name("linux_aarch64").unwrap()])
            .unwrap_err()
            .to_string();
        assert!(!err.contains("rust-objcopy"), "{err}");
        assert!(err.contains("the cross build of linux_aarch64 cannot start"), "{err}");
    }

    #[test]
    fn the_build_path_is_setups_directories_then_debians_and_nothing_of_the_callers() {
        let toolbox = Toolbox {
            venv_bin: "/r/.venv/bin".into(),
            links: "/r/build/cross-tools/bin".into(),
        };
        assert_eq!(
            toolbox.path(),
            OsString::from("/r/build/cross-tools/bin:/r/.venv/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        );
        let mut cmd = Command::new("true");
        cmd.env("PATH", "/usr/local/bin:/root/.cargo/bin:/root/.local/bin:/usr/bin");
        toolbox.apply(&mut cmd);
        let path = cmd.get_envs().find(|(k, _)| *k == "PATH").and_then(|(_, v)| v).unwrap();
        assert_eq!(path, toolbox.path());
    }

    /// The repository's own toolbox, after `setup --cross` (which `cargo collection
    /// test` runs first): everything the four platforms need is there.
    #[test]
    fn after_setup_cross_every_tool_of_every_platform_is_found() {
        Toolbox::of_repo().check(&crate::platform::PLATFORMS).unwrap();
    }

    /// A temporary directory removed on drop (the crate has no tempfile dependency).
    mod tempdir {
        pub(super) struct Dir(std::path::PathBuf);
        impl Dir {
            pub(super) fn new() -> Dir {
                use std::sync::atomic::{AtomicU32, Ordering};
                static NEXT: AtomicU32 = AtomicU32::new(0);
                let path = std::env::temp_dir().join(format!(
                    "ferrox-tools-{}-{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&path).unwrap();
                Dir(path)
            }
            pub(super) fn path(&self) -> &std::path::Path {
                &self.0
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
}
