//! `conformance`: the end-to-end flows of `tests/conformance/` run with real
//! `ansible-playbook` against a real Proxmox VE, safely.
//!
//! Safe by construction: the run reads the cluster first and refuses to start when its
//! vmid range holds any guest it did not create ([`guard`]); the playbooks only create
//! VMs inside the range whose name carries the prefix and only touch those; whatever of
//! them is left (a failed scenario, an interrupted run) is removed before the first
//! scenario, after each one, at the end, and on Ctrl-C ([`signals`]).
//!
//! Prints one line per scenario and `N passed, M failed`; writes a JSON report
//! ([`report`]) with the PVE version, timings and the API calls of every scenario.

mod guard;
mod report;
mod settings;
mod signals;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use ferrox_pve_client::client::{trace, Client};
use serde_json::json;

use crate::{build, repo, setup};
use report::{ApiCalls, Cleanup, Report, ScenarioResult, Target};
use settings::Settings;

#[derive(Debug, Default)]
struct Options {
    profile: Option<build::Profile>,
    report: Option<PathBuf>,
    /// Logs, traces, vars and the report (default `build/conformance`).
    work: Option<PathBuf>,
    only: Vec<String>,
}

fn parse_args(args: &[&str]) -> Result<Options> {
    let mut o = Options {
        profile: Some(build::Profile::Release),
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "--debug" => o.profile = Some(build::Profile::Debug),
            "--no-build" => o.profile = None,
            "--report" => o.report = Some(it.next().context("--report needs a file")?.into()),
            "--work" => o.work = Some(it.next().context("--work needs a directory")?.into()),
            flag if flag.starts_with('-') => bail!("unknown conformance option {flag}"),
            name => o.only.push(name.to_string()),
        }
    }
    Ok(o)
}

pub(crate) fn conformance(args: &[&str]) -> Result<()> {
    let opts = parse_args(args)?;
    let root = repo::root();
    let s = Settings::from_env()?;
    let scenarios = scenarios(&root.join("tests/conformance"), &opts.only)?;
    let started = Instant::now();
    let started_at = report::utc_now();

    let client =
        Client::connect(&s.connection).map_err(|e| anyhow::anyhow!("connecting to {}: {e}", s.connection.host))?;
    let version = client
        .get("/version", &[])
        .map_err(|e| anyhow::anyhow!("GET /version: {e}"))?;
    check_target(&client, &s)?;
    let survey = guard::survey(&client, &s)?;
    guard::refuse_foreign(&survey, &s)?;
    announce(&client, &version, &s, &survey);

    setup::main_venv()?;
    if let Some(profile) = opts.profile {
        build::build(profile)?;
    }
    let work = opts.work.clone().unwrap_or_else(|| root.join("build/conformance"));
    let env = PlayEnv::prepare(&root, &work, &s)?;
    let ansible = ansible_version();

    signals::install();
    let mut cleanup = Vec::new();
    let mut sweep = |phase: &str| match guard::sweep(&client, &s) {
        Ok(removed) => {
            if !removed.is_empty() {
                println!(
                    "  cleanup ({phase}): removed {}",
                    removed
                        .iter()
                        .map(|g| g.vmid.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                cleanup.push(Cleanup {
                    phase: phase.into(),
                    removed: removed.iter().map(ToString::to_string).collect(),
                });
            }
            Ok(())
        }
        Err(e) => Err(e),
    };
    sweep("before the run")?;

    let mut results = Vec::new();
    for (name, book) in &scenarios {
        if signals::interrupted() {
            results.push(ScenarioResult::skipped(name, book));
            continue;
        }
        let result = env.run(name, book)?;
        println!("{}", result.line());
        results.push(result);
        if let Err(e) = sweep(name) {
            println!("  cleanup after {name} failed: {e:#}");
        }
    }
    if signals::interrupted() {
        println!("interrupted: cleaning up (Ctrl-C again to exit at once; a rerun cleans up)");
    }
    let final_sweep = sweep("end of the run");

    let count = |st: &str| results.iter().filter(|r| r.status == st).count();
    let report = Report {
        tool: "cargo collection conformance",
        collection_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        seconds: started.elapsed().as_secs_f64(),
        pve_version: version,
        ansible,
        target: target_of(&s),
        passed: count("passed"),
        failed: count("failed"),
        skipped: count("skipped"),
        interrupted: signals::interrupted(),
        scenarios: results,
        cleanup,
    };
    let report_path = opts.report.unwrap_or_else(|| work.join("report.json"));
    write_report(&report, &report_path)?;
    final_sweep?;
    verdict(&report, &work)
}

/// What the run is about to touch, before it touches anything.
fn announce(client: &Client, version: &serde_json::Value, s: &Settings, survey: &guard::Survey) {
    println!(
        "conformance against {} (Proxmox VE {}) as {}",
        client.base_url(),
        version["version"].as_str().unwrap_or("?"),
        client.identity()
    );
    println!(
        "it creates, changes and removes only QEMU VMs with vmids {}-{} named {}* on node {} (disks on {}, NICs on {})",
        s.range.0, s.range.1, s.prefix, s.node, s.storage, s.bridge
    );
    for g in &survey.ours {
        println!("  left by an earlier run, to be removed: {g}");
    }
}

/// Where the run went: no secret, only what identifies the target.
fn target_of(s: &Settings) -> Target {
    Target {
        host: s.connection.host.clone(),
        port: s.connection.port,
        user: s.connection.user.clone(),
        token_id: s.connection.token_id.clone(),
        tls: tls_mode(s),
        node: s.node.clone(),
        storage: s.storage.clone(),
        bridge: s.bridge.clone(),
        vmid_range: [s.range.0, s.range.1],
        prefix: s.prefix.clone(),
    }
}

/// The report file, then its path and the counts on stdout.
fn write_report(report: &Report, report_path: &std::path::Path) -> Result<()> {
    std::fs::write(report_path, serde_json::to_string_pretty(report)? + "\n")
        .with_context(|| format!("writing {}", report_path.display()))?;
    println!("report: {}", report_path.display());
    let skipped = if report.skipped > 0 {
        format!(", {} skipped", report.skipped)
    } else {
        String::new()
    };
    println!("{} passed, {} failed{skipped}", report.passed, report.failed);
    Ok(())
}

/// The run fails when it was interrupted or a scenario failed.
fn verdict(report: &Report, work: &std::path::Path) -> Result<()> {
    if report.interrupted {
        bail!("interrupted");
    }
    if report.failed > 0 {
        bail!(
            "{} conformance scenario(s) failed; the logs are in {}",
            report.failed,
            repo::rel(work)
        );
    }
    Ok(())
}

/// The playbooks of `dir` in file-name order, as `(name, path)`; the name drops the
/// ordering number (`01-create-converge.yml` → `create-converge`).
fn scenarios(dir: &Path, only: &[String]) -> Result<Vec<(String, PathBuf)>> {
    let mut books: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yml") && p.file_stem().is_some_and(|s| s != "inventory"))
        .collect();
    books.sort();
    let all: Vec<(String, PathBuf)> = books
        .into_iter()
        .map(|p| {
            let stem = p.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            let name = stem
                .split_once('-')
                .filter(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
                .map_or(stem.clone(), |(_, rest)| rest.to_string());
            (name, p)
        })
        .collect();
    if let Some(unknown) = only.iter().find(|o| !all.iter().any(|(n, _)| n == *o)) {
        let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
        bail!("no conformance scenario {unknown}; there are: {}", names.join(", "));
    }
    Ok(all
        .into_iter()
        .filter(|(n, _)| only.is_empty() || only.contains(n))
        .collect())
}

/// The node is online and the storage takes VM disks there, before anything is written.
fn check_target(client: &Client, s: &Settings) -> Result<()> {
    let nodes = client
        .get("/nodes", &[])
        .map_err(|e| anyhow::anyhow!("GET /nodes: {e}"))?;
    let node = nodes
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["node"] == s.node.as_str());
    match node {
        None => bail!("FERROX_CONFORMANCE_NODE {} is not a node of this cluster", s.node),
        Some(n) if n["status"] != "online" => bail!("node {} is {}", s.node, n["status"]),
        Some(_) => {}
    }
    let path = format!("/nodes/{}/storage", s.node);
    let storages = client
        .get(&path, &[("content", "images".into())])
        .map_err(|e| anyhow::anyhow!("GET {path}: {e}"))?;
    if !storages
        .as_array()
        .into_iter()
        .flatten()
        .any(|st| st["storage"] == s.storage.as_str())
    {
        bail!(
            "FERROX_CONFORMANCE_STORAGE {} is not a storage for VM disks (content images) on node {}",
            s.storage,
            s.node
        );
    }
    Ok(())
}

fn tls_mode(s: &Settings) -> String {
    let c = &s.connection;
    match (c.validate_certs, &c.cert_fingerprint, &c.ca_path) {
        (false, _, _) => "not verified".into(),
        (true, Some(_), _) => "pinned fingerprint".into(),
        (true, None, Some(_)) => "CA file".into(),
        (true, None, None) => "system trust store".into(),
    }
}

fn ansible_version() -> String {
    repo::venv_tool("ansible-playbook")
        .ok()
        .and_then(|p| Command::new(p).arg("--version").output().ok())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .unwrap_or_default()
}

/// How the playbooks run: this checkout as the installed collection, the run's
/// settings as extra vars, the connection from the caller's `PROXMOX_*` environment.
struct PlayEnv {
    work: PathBuf,
    collections: PathBuf,
    vars: PathBuf,
    inventory: PathBuf,
    playbook: PathBuf,
}

impl PlayEnv {
    fn prepare(root: &Path, work: &Path, s: &Settings) -> Result<PlayEnv> {
        std::fs::create_dir_all(work)?;
        // ferrox.proxmox is this checkout, whatever layout its binaries have.
        let collections = work.join("collections");
        let ns = collections.join("ansible_collections/ferrox");
        std::fs::create_dir_all(&ns)?;
        let link = ns.join("proxmox");
        if std::fs::read_link(&link).ok().as_deref() != Some(root) {
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(root, &link).with_context(|| format!("linking {}", link.display()))?;
        }
        let vars = work.join("vars.json");
        let v = json!({
            "conformance_node": s.node,
            "conformance_storage": s.storage,
            "conformance_bridge": s.bridge,
            "conformance_vmid_range": [s.range.0, s.range.1],
            "conformance_prefix": s.prefix,
        });
        std::fs::write(&vars, serde_json::to_string_pretty(&v)?)?;
        Ok(PlayEnv {
            work: work.to_path_buf(),
            collections,
            vars,
            inventory: root.join("tests/conformance/inventory.yml"),
            playbook: repo::venv_tool("ansible-playbook")?,
        })
    }

    fn run(&self, name: &str, book: &Path) -> Result<ScenarioResult> {
        let log_path = self.work.join(format!("{name}.log"));
        let trace_path = self.work.join(format!("{name}.calls.jsonl"));
        let _ = std::fs::remove_file(&trace_path);
        let log = std::fs::File::create(&log_path)?;
        let started = Instant::now();
        let mut child = Command::new(&self.playbook)
            .arg("-i")
            .arg(&self.inventory)
            .arg("-e")
            .arg(format!("@{}", self.vars.display()))
            .arg(book)
            .current_dir(repo::root())
            .env("ANSIBLE_COLLECTIONS_PATH", &self.collections)
            .env("ANSIBLE_COLLECTIONS_SCAN_SYS_PATH", "false")
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "false")
            .env(trace::ENV, &trace_path)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .process_group(0)
            .spawn()
            .context("starting ansible-playbook")?;
        signals::set_child_group(child.id());
        let status = child.wait()?;
        signals::set_child_group(0);
        let seconds = started.elapsed().as_secs_f64();
        let output = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tasks = report::recap(&output);
        let mut failures = report::failures(&output);
        let ok = status.success() && tasks.get("failed").copied().unwrap_or(0) == 0 && !tasks.is_empty();
        if !ok && failures.is_empty() {
            let tail: Vec<&str> = output.lines().rev().take(5).collect();
            failures.push(format!(
                "ansible-playbook {status}: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ));
        }
        Ok(ScenarioResult {
            name: name.into(),
            playbook: repo::rel(book),
            status: if ok { "passed" } else { "failed" },
            seconds,
            tasks,
            failures,
            api_calls: ApiCalls::from_trace(&trace_path),
            log: repo::rel(&log_path),
        })
    }
}

impl ScenarioResult {
    fn skipped(name: &str, book: &Path) -> ScenarioResult {
        ScenarioResult {
            name: name.into(),
            playbook: repo::rel(book),
            status: "skipped",
            seconds: 0.0,
            tasks: Default::default(),
            failures: vec![],
            api_calls: ApiCalls::default(),
            log: String::new(),
        }
    }

    /// `PASS create-converge  12.3 s  41 API calls`, and the first failure.
    fn line(&self) -> String {
        let mark = if self.status == "passed" { "PASS" } else { "FAIL" };
        let mut line = format!(
            "{mark} {:<18} {:>6.1} s  {:>4} API calls",
            self.name, self.seconds, self.api_calls.total
        );
        if let Some(f) = self.failures.first() {
            line.push_str(&format!("  — {f} (log: {})", self.log));
        }
        line
    }
}
