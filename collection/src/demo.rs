//! `demo`: the collection as a user meets it, against the simulator.
//!
//! Creates the main venv when it is missing (a fresh clone needs nothing else first),
//! builds the release binaries, installs the tarball into `build/collections`, starts
//! `pvesim` on a free port, then runs the example playbooks of `playbooks/`:
//! `create`, `start`, `info`, any others (alphabetically: `golden-image` downloads a
//! cloud image from a loopback HTTP server, see demo_image.rs) — once to converge, once more
//! (which must change nothing), once with `--check` (which must change nothing
//! either) — and finally `teardown`. The simulator is stopped at the end, whatever happens.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::{build, demo_image, galaxy, repo, setup};

/// Playbooks run in this order when present; others go after them, before teardown.
const ORDER: [&str; 3] = ["create", "start", "info"];
const LAST: &str = "teardown";

/// The demo's token (pvesim's default scenario).
const TOKEN: (&str, &str, &str) = ("ansible@pve", "automation", "5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13");

pub(crate) fn demo() -> Result<()> {
    let root = repo::root();
    setup::main_venv()?;
    build::build(build::Profile::Release)?;
    let collections = root.join("build/collections");
    galaxy::install(&collections)?;

    repo::run(repo::cargo().args(["build", "-p", "pvesim"]))?;
    let pvesim = repo::target_dir()?.join("debug/pvesim");
    let work = root.join("build/demo");
    std::fs::create_dir_all(&work)?;
    let ca = work.join("pvesim-ca.pem");
    let _ = std::fs::remove_file(&ca);
    let scenario = work.join("scenario.json");
    demo_image::scenario(&pvesim, &scenario)?;
    let port = free_port()?;
    let sim = Simulator::start(&pvesim, port, &ca, &scenario)?;
    let image = demo_image::ImageServer::start(&work.join("www"), free_port()?)?;

    let (converge, teardown) = playbooks(&root.join("playbooks"))?;
    if converge.is_empty() && teardown.is_none() {
        bail!("playbooks/ holds no playbooks to demonstrate");
    }
    let env = DemoEnv {
        collections,
        port,
        ca: ca.clone(),
        image_url: image.url.clone(),
        image_sha256: image.sha256.clone(),
    };
    let mut summary = Vec::new();
    for (round, check) in [
        ("converge", false),
        ("repeat (must change nothing)", false),
        ("check mode (must change nothing)", true),
    ] {
        let mut changed = 0;
        for book in &converge {
            changed += env.run(book, check)?;
        }
        if round != "converge" && changed != 0 {
            bail!("{round}: the playbooks reported {changed} changed task(s)");
        }
        summary.push(format!("{round}: {changed} changed"));
    }
    if let Some(book) = &teardown {
        let changed = env.run(book, false)?;
        summary.push(format!("teardown: {changed} changed"));
    }
    drop(image);
    drop(sim);
    println!("\ndemo finished:\n  {}", summary.join("\n  "));
    Ok(())
}

/// The converging playbooks in demo order, and the teardown playbook.
fn playbooks(dir: &Path) -> Result<(Vec<PathBuf>, Option<PathBuf>)> {
    let mut others = Vec::new();
    let mut known = Vec::new();
    let mut teardown = None;
    if dir.is_dir() {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("yml") {
                continue;
            }
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
            if stem.starts_with("inventory") {
                continue;
            }
            if stem == LAST {
                teardown = Some(path);
            } else if let Some(i) = ORDER.iter().position(|o| *o == stem) {
                known.push((i, path));
            } else {
                others.push(path);
            }
        }
    }
    known.sort();
    others.sort();
    Ok((known.into_iter().map(|(_, p)| p).chain(others).collect(), teardown))
}

struct DemoEnv {
    collections: PathBuf,
    port: u16,
    ca: PathBuf,
    /// The cloud image golden-image.yml downloads, and its checksum.
    image_url: String,
    image_sha256: String,
}

impl DemoEnv {
    /// Runs one playbook; returns the recap's `changed` total.
    fn run(&self, book: &Path, check: bool) -> Result<u64> {
        let mut cmd = Command::new(repo::venv_tool("ansible-playbook")?);
        let inventory = book.with_file_name("inventory.yml");
        if inventory.is_file() {
            cmd.arg("-i").arg(&inventory);
        }
        cmd.arg(book)
            .arg("-e")
            .arg(format!("golden_image_url={}", self.image_url))
            .arg("-e")
            .arg(format!("golden_image_sha256={}", self.image_sha256));
        if check {
            cmd.arg("--check");
        }
        cmd.current_dir(repo::root())
            .env("ANSIBLE_COLLECTIONS_PATH", &self.collections)
            .env("ANSIBLE_COLLECTIONS_SCAN_SYS_PATH", "false")
            .env("ANSIBLE_NOCOLOR", "1")
            .env("PROXMOX_HOST", "127.0.0.1")
            .env("PROXMOX_PORT", self.port.to_string())
            .env("PROXMOX_USER", TOKEN.0)
            .env("PROXMOX_TOKEN_ID", TOKEN.1)
            .env("PROXMOX_TOKEN_SECRET", TOKEN.2)
            .env("PROXMOX_CA_PATH", &self.ca);
        eprintln!(
            "+ ansible-playbook {}{}",
            repo::rel(book),
            if check { " --check" } else { "" }
        );
        let out = cmd.output().context("running ansible-playbook")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        print!("{stdout}");
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            bail!("{} failed ({})", repo::rel(book), out.status);
        }
        Ok(recap_changed(&stdout))
    }
}

/// Sum of `changed=N` over the PLAY RECAP lines.
fn recap_changed(stdout: &str) -> u64 {
    let Some(at) = stdout.find("PLAY RECAP") else { return 0 };
    stdout[at..]
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("changed="))
        .filter_map(|n| n.parse::<u64>().ok())
        .sum()
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A running `pvesim` process, killed on drop.
struct Simulator {
    child: Child,
}

impl Simulator {
    fn start(binary: &Path, port: u16, ca: &Path, scenario: &Path) -> Result<Simulator> {
        let child = Command::new(binary)
            .arg("--scenario")
            .arg(scenario)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--ca-out")
            .arg(ca)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let sim = Simulator { child };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !(ca.is_file() && TcpStream::connect(("127.0.0.1", port)).is_ok()) {
            if Instant::now() > deadline {
                bail!("pvesim did not listen on 127.0.0.1:{port} within 30 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        println!("pvesim listening on https://127.0.0.1:{port} (CA {})", ca.display());
        Ok(sim)
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recap_counts_changed_over_hosts() {
        let out = "TASK [x]\nchanged=9 in a message\nPLAY RECAP ***\nlocalhost : ok=3 changed=2 unreachable=0\npve : ok=1 changed=1\n";
        assert_eq!(recap_changed(out), 3);
    }
}
