//! `cargo collection <command>`: everything between the Rust sources and a playbook.
//!
//! - `build [--debug]`: the module binary, for the host's platform, into
//!   `plugins/modules/__bin/<platform>/` (release builds are static on Linux).
//! - `build --all-platforms`: the release binary of every shipped platform (the others
//!   cross-built with zig; `setup --cross` installs the tools).
//! - `docs [--check]`: the docs-only `plugins/modules/<m>.py` rendered from each module's declaration.
//! - `site`: the docs site (antsibull-docs, Sphinx) into `build/site/html/`, checked, with screenshots.
//! - `tarball`: `build/ferrox-proxmox-<version>.tar.gz` via `ansible-galaxy collection build`.
//! - `install [--path DIR]`: the tarball installed into DIR (default `build/collections`).
//! - `sanity`: `ansible-test sanity` on 2.19 and 2.17, run on the installed tarball.
//! - `units`: `ansible-test units` (the plugin utils' pytest tests), on the installed tarball.
//! - `setup [--cross]`: the Python venvs `.venv` (ansible-core 2.19) and `.venv-2.17`;
//!   `--cross` also the cross-build tools and qemu-user for the linux_aarch64 tests.
//! - `demo`: build, install, start the simulator, run `playbooks/` twice and in check mode.
//! - `test`: setup, debug build, the whole workspace's tests.
//! - `conformance`: the playbooks of `tests/conformance/` against a real Proxmox VE.
//! - `spec <module>`: a module's argument_spec as JSON (for the validation-parity test).
//! - `changelog add|check|release|generate`: the antsibull-changelog changelog.
//! - `style`: `cargo fmt --check` and `cargo clippy -D warnings` of the workspace.
//! - `lint`: ansible-lint (production profile) of playbooks/, examples/ and the YAML of README and the guides.
//! - `ee`: execution environment checks (ansible-builder introspect and create).

// A command-line tool: what it prints is its output, and its exit code is its verdict.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod build;
mod changelog;
mod codesign;
mod conformance;
mod cross;
mod demo;
mod demo_image;
mod docs;
mod ee;
mod galaxy;
mod lint;
mod modules;
mod platform;
#[cfg(test)]
mod readme;
mod repo;
mod sanity;
mod setup;
mod site;
mod spec_json;
mod style;
mod test;
mod units;
mod verify;
mod wire;

use anyhow::{bail, Result};

const USAGE: &str = "usage: cargo collection <command>

  build [--debug]     build the module binary into plugins/modules/__bin/<host platform>/
  build --all-platforms
                      release binaries of linux_x86_64, linux_aarch64, darwin_arm64 and
                      darwin_x86_64 (cross-built; needs `setup --cross`), each verified
  docs [--check]      render plugins/modules/<module>.py (--check: fail if stale)
  site                the docs site, offline, from the collection as installed, into
                      build/site/html/: plugin docs linted, every page and internal link
                      checked, screenshots in build/site/screenshots/ (Debian chromium)
  tarball             build the collection tarball into build/
  install [--path D]  install the tarball into D (default build/collections)
  install --for-tests the tree as it is (debug binaries too) into build/test-collections
  sanity              ansible-test sanity (ansible-core 2.19 and 2.17) of the installed tarball
  units               ansible-test units (tests/unit/, pytest) of the installed tarball
  setup [--cross]     create the Python venvs .venv (ansible-core 2.19) and .venv-2.17;
                      --cross: also every tool the cross builds run (Debian rustc-web,
                      cargo-web, rust-web-src, gcc, llvm; PyPI ziglang, cargo-zigbuild;
                      build/cross-tools/bin/rust-objcopy -> llvm-objcopy) and
                      qemu-user-static, registered with binfmt_misc
  demo                build, install, start pvesim, run playbooks/ twice and in check mode
  style               cargo fmt --check and cargo clippy -D warnings of the workspace
  test                style, setup, debug build, then the whole test suite
  conformance [--debug|--no-build] [--report FILE] [--work DIR] [SCENARIO...]
                      run tests/conformance/ against the PVE of PROXMOX_HOST
                      (see the guide docs/docsite/rst/guide_conformance.rst)
  spec <module>       print a module's argument_spec as JSON
  changelog add <section> <text>
                      write a fragment to changelogs/fragments/
  changelog check     fragments valid; a change to plugins/, modules/, common/ has one
  changelog release   turn the fragments into the release of galaxy.yml's version
  changelog generate  CHANGELOG.md again from changelogs/changelog.yaml
  lint                ansible-lint (production) of playbooks/, examples/, README and guides YAML
  ee                  execution environment: introspection and ansible-builder create";

fn main() {
    if let Err(e) = run(std::env::args().skip(1).collect()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(args: Vec<String>) -> Result<()> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["build"] => build::build(build::Profile::Release),
        ["build", "--debug"] => build::build(build::Profile::Debug),
        ["build", "--all-platforms"] => build::build_all_platforms(),
        ["docs"] => docs::write(),
        ["docs", "--check"] => docs::check(),
        ["site"] => site::command(),
        ["tarball"] => galaxy::tarball().map(|_| ()),
        ["install"] => galaxy::install(&repo::root().join("build/collections")),
        ["install", "--path", dir] => galaxy::install(std::path::Path::new(dir)),
        ["install", "--for-tests"] => galaxy::install_for_tests(),
        ["setup"] => setup::setup(),
        ["setup", "--cross"] => setup::setup().and_then(|_| cross::setup::setup()),
        ["sanity"] => sanity::sanity(false, sanity::Scope::Full, None),
        ["units"] => units::units(false, None),
        ["demo"] => demo::demo(),
        ["test", rest @ ..] => test::test(rest),
        ["conformance", rest @ ..] => conformance::conformance(rest),
        ["spec", module] => spec_json::print(module),
        ["changelog", rest @ ..] => changelog::command(rest),
        ["lint"] => lint::lint(),
        ["style"] => style::check(),
        ["ee"] => ee::check(),
        ["help"] | ["--help"] | ["-h"] | [] => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command {:?}\n\n{USAGE}", other.join(" ")),
    }
}
