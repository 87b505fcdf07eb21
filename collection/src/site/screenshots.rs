//! Screenshots of the built site in headless Chromium (Debian's `chromium`, installed
//! here when missing, as root): what a user sees of the front page, a module page and a
//! guide, as PNG files a person can look at.
//!
//! The install happens in the site's own step (beside the tests in `cargo collection
//! test`), not among the tools installed before everything, where its half a minute of
//! unpacking would add to CI's time.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};

use crate::{cross, repo};

/// Debian's Chromium.
pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";

/// The pages shot, relative to the site's root, with the file each is written to.
pub(crate) const PAGES: [(&str, &str); 3] = [
    ("index.html", "front-page.png"),
    ("proxmox_kvm_module.html", "proxmox_kvm.png"),
    ("docsite/guide_dry_runs.html", "guide_dry_runs.png"),
];

/// Shoots every page of [`PAGES`] of the site at `html` into `out`; returns the files.
pub(crate) fn take(html: &Path, out: &Path) -> Result<Vec<PathBuf>> {
    if !Path::new(CHROMIUM).is_file() {
        cross::setup::debian(
            &[("chromium", "headless browser: the docs site's screenshots")],
            "the docs site's screenshots need Debian's {}",
        )?;
    }
    if !Path::new(CHROMIUM).is_file() {
        bail!("{CHROMIUM} is missing although Debian's chromium is installed: reinstall it (`apt-get install --reinstall chromium`)");
    }
    std::fs::create_dir_all(out)?;
    let profile = out.join(".chromium-profile");
    let mut shots = Vec::new();
    for (page, file) in PAGES {
        let shot = out.join(file);
        let _ = std::fs::remove_file(&shot);
        let _ = std::fs::remove_dir_all(&profile);
        let mut cmd = Command::new(CHROMIUM);
        // Headless and quiet: the build machines' network is closed, and Chromium's
        // background connections would only fail there.
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,1400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.join(page).display()));
        repo::run_logged(&mut cmd, &out.join(format!("{file}.log")))?;
        if !shot.is_file() {
            bail!("Chromium wrote no screenshot of {page} ({})", repo::rel(&shot));
        }
        shots.push(shot);
    }
    let _ = std::fs::remove_dir_all(&profile);
    Ok(shots)
}
