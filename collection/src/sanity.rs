//! `ansible-test sanity` support.
//!
//! validate-modules crashes on a binary under `plugins/modules/` (it reads every module
//! as text), and an ignore *code* cannot mask a crash: each binary needs a
//! `validate-modules!skip` entry. ansible-test also rejects entries naming files it does
//! not see, and the binaries are git-ignored in the repository, so the ignore files are
//! generated from the binaries present (by `cargo collection build`), git-ignored, and
//! shipped in the tarball, whose installed copy is what the sanity run checks.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::modules;
use crate::repo;

/// The ansible-core versions an ignore file is written for (`requires_ansible` onwards).
pub(crate) const IGNORE_VERSIONS: [&str; 6] = ["2.17", "2.18", "2.19", "2.20", "2.21", "2.22"];

/// Writes `tests/sanity/ignore-<v>.txt`: one skip line per binary in `bin_root`, and the
/// connection's required-in-docs-only line per docs stub.
pub(crate) fn write_ignores(bin_root: &Path) -> Result<()> {
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
    let binary = modules::BINARY;
    for p in &platforms {
        if bin_root.join(p).join(binary).is_file() {
            text.push_str(&format!(
                "plugins/modules/__bin/{p}/{binary} validate-modules!skip # compiled {p} binary of every module, not Python: validate-modules cannot read it; the docs are checked in plugins/modules/<module>.py\n"
            ));
        }
    }
    // The docs say what a run needs (api_host, api_user); the stubs' argument spec leaves the
    // connection optional because ansible-lint and validate-modules do not apply
    // module_defaults, where playbooks usually set it (common/ansible/src/argspec.rs).
    if ferrox_run::connection::options().iter().any(|o| o.required) {
        for m in modules::names() {
            text.push_str(&format!(
                "plugins/modules/{m}.py validate-modules:doc-required-mismatch # connection options: required to run (docs), optional in the argument spec, which lint checks without module_defaults\n"
            ));
        }
    }
    Ok(text)
}

/// The ansible-core venvs sanity runs with (`cargo collection setup` makes them).
const CORES: [(&str, &str); 2] = [("2.19", ".venv"), ("2.17", ".venv-2.17")];

/// What `cargo collection test` (so CI) runs on 2.17: the tests this layout is about
/// (binaries, docs stubs, action plugins, ignore file, runtime.yml). All 24 on 2.17 too
/// would add about as much again, mostly creating ansible-test's per-test venvs;
/// `cargo collection sanity` runs them all on both.
const QUICK_2_17: [&str; 5] = [
    "validate-modules",
    "ansible-doc",
    "action-plugin-docs",
    "ignores",
    "runtime-metadata",
];

/// How much `sanity` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every test on every ansible-core.
    Full,
    /// Every test on 2.19, [`QUICK_2_17`] on 2.17 (the CI run).
    Ci,
}

/// `sanity`: `ansible-test sanity` of each supported ansible-core on the collection as the
/// tarball installs it (`build/test-collections`, refreshed first unless `fresh`: the
/// test command has just installed it).
///
/// ansible-test lists files through git and keeps its per-test venvs under `~/.ansible`;
/// so the installed copy goes to `build/sanity/ansible_collections/ferrox/proxmox` with a
/// `git init`, and ansible-test runs with `HOME=build/sanity/home`. Those venvs bootstrap
/// pip with a script ansible-test downloads from its CI host, which need not be reachable:
/// a stand-in in that cache runs `ensurepip` and then pip, from PyPI like every other
/// requirement.
///
/// With `logs`, each ansible-test run writes into `<logs>/sanity-<core>.log` (shown when
/// it fails) instead of the terminal, for a run beside the test suite.
pub(crate) fn sanity(fresh: bool, scope: Scope, logs: Option<&Path>) -> Result<()> {
    if !fresh {
        crate::galaxy::install_for_tests()?;
    }
    let installed = crate::galaxy::test_collections().join("ansible_collections/ferrox/proxmox");
    let work = repo::root().join("build/sanity");
    let tree = work.join("ansible_collections/ferrox/proxmox");
    let home = work.join("home");
    let _ = std::fs::remove_dir_all(work.join("ansible_collections"));
    std::fs::create_dir_all(tree.parent().context("tree has a parent")?)?;
    repo::run(Command::new("cp").arg("-a").arg(&installed).arg(&tree))?;
    repo::run(Command::new("git").args(["init", "-q"]).current_dir(&tree))?;

    let mut failed = Vec::new();
    for (core, venv) in CORES {
        let bin = repo::root().join(venv).join("bin");
        let ansible_test = bin.join("ansible-test");
        if !ansible_test.exists() {
            bail!("{} is missing: run `cargo collection setup`", ansible_test.display());
        }
        write_pip_bootstrap(&home, &bin)?;
        let python = repo::output(
            Command::new(bin.join("python3")).args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]),
        )?;
        let mut cmd = Command::new(&ansible_test);
        cmd.args(["sanity", "--color", "no", "--python", python.trim()]);
        if scope == Scope::Ci && core == "2.17" {
            for t in QUICK_2_17 {
                cmd.args(["--test", t]);
            }
        } else {
            // `cargo collection changelog check` lints the changelog with the
            // antsibull-changelog of .venv; ansible-test's copy of that check would
            // install antsibull-changelog into a venv of its own first.
            cmd.args(["--skip-test", "changelog"]);
        }
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        cmd.current_dir(&tree).env("HOME", &home).env("PATH", path);
        let start = std::time::Instant::now();
        let ran = match logs {
            Some(dir) => repo::run_logged(&mut cmd, &dir.join(format!("sanity-{core}.log"))),
            None => repo::run(&mut cmd),
        };
        if let Err(e) = &ran {
            eprintln!("{e:#}");
        }
        let ok = ran.is_ok();
        println!(
            "ansible-test sanity (ansible-core {core}): {} in {:.0} s",
            if ok { "passed" } else { "FAILED" },
            start.elapsed().as_secs_f64()
        );
        if !ok {
            failed.push(core);
        }
    }
    if !failed.is_empty() {
        bail!("ansible-test sanity failed on ansible-core {}", failed.join(", "));
    }
    Ok(())
}

/// The `get_pip_<version>.py` stand-in for the pip version this ansible-test pins. pip's
/// settings of this environment (index, certificates, proxy) are carried into it, since
/// ansible-test runs pip with a filtered environment.
fn write_pip_bootstrap(home: &Path, venv_bin: &Path) -> Result<()> {
    let lib = venv_bin.parent().context("venv")?.join("lib");
    let requirements = std::fs::read_dir(&lib)?
        .filter_map(|e| e.ok())
        .map(|e| {
            e.path()
                .join("site-packages/ansible_test/_internal/python_requirements.py")
        })
        .find(|p| p.is_file())
        .context("ansible_test is not installed in the venv")?;
    let text = std::fs::read_to_string(&requirements)?;
    let version = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("pip='").and_then(|v| v.strip_suffix("',")))
        .context("cannot find the pip version ansible-test pins")?;
    let carried: serde_json::Map<String, serde_json::Value> = std::env::vars()
        .filter(|(k, _)| {
            let k = k.to_ascii_uppercase();
            k.starts_with("PIP_") || k.starts_with("SSL_CERT_") || k == "REQUESTS_CA_BUNDLE" || k.ends_with("_PROXY")
        })
        .map(|(k, v)| (k, serde_json::Value::String(v)))
        .collect();
    let script = format!(
        "# Stand-in for pip's get-pip.py, written by `cargo collection sanity`.\n\
         import ensurepip, os, subprocess, sys\n\
         os.environ.update({env})\n\
         ensurepip.bootstrap(upgrade=True)\n\
         args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]\n\
         subprocess.check_call([sys.executable, '-m', 'pip', 'install'] + args)\n",
        env = serde_json::Value::Object(carried),
    );
    let cache = home.join(".ansible/test/cache");
    std::fs::create_dir_all(&cache)?;
    std::fs::write(cache.join(format!("get_pip_{}.py", version.replace('.', "_"))), script)?;
    Ok(())
}
