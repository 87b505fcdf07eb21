//! `changelog`: the collection's changelog, kept as Galaxy collections keep theirs —
//! antsibull-changelog fragments in `changelogs/fragments/`, released into
//! `changelogs/changelog.yaml` and rendered as `CHANGELOG.md`.
//!
//! - `add <section> <text>`: writes one fragment.
//! - `check`: the fragments and `changelog.yaml` are valid (antsibull-changelog lint),
//!   and a change to what users run has a fragment (the rule below). CI runs it.
//! - `release`: the fragments become the release of galaxy.yml's version.
//! - `generate`: `CHANGELOG.md` again from `changelog.yaml`.
//!
//! The rule: a release rewrites `changelogs/changelog.yaml` (and removes the fragments it
//! took), so the last commit that changed that file marks the last release. When
//! anything under `plugins/`, `modules/` or `common/` (the code and docs of what users
//! run) differs from that commit, `changelogs/fragments/` must hold at least one
//! fragment. A change users cannot see takes a `trivial` fragment, which is never
//! rendered.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{galaxy, repo};

/// What users run: a change here needs a fragment.
pub(crate) const WATCHED: [&str; 3] = ["plugins", "modules", "common"];

/// Fragment sections, as in `changelogs/config.yaml` (plus `trivial`, never rendered).
pub(crate) const SECTIONS: [&str; 10] = [
    "release_summary",
    "major_changes",
    "minor_changes",
    "breaking_changes",
    "deprecated_features",
    "removed_features",
    "security_fixes",
    "bugfixes",
    "known_issues",
    "trivial",
];

pub(crate) fn command(args: &[&str]) -> Result<()> {
    match args {
        ["add", section, text @ ..] if !text.is_empty() => {
            let path = add(section, &text.join(" "))?;
            println!("wrote {}", repo::rel(&path));
            Ok(())
        }
        ["check"] => check(),
        ["release"] => release(),
        ["generate"] => antsibull(&["generate"]),
        _ => bail!(
            "usage: cargo collection changelog add <section> <text> | check | release | generate\n  sections: {}",
            SECTIONS.join(", ")
        ),
    }
}

fn dir() -> PathBuf {
    repo::root().join("changelogs")
}

/// Writes `changelogs/fragments/<slug>.yml` with one entry in `section`.
pub(crate) fn add(section: &str, text: &str) -> Result<PathBuf> {
    if !SECTIONS.contains(&section) {
        bail!("unknown section {section:?}: use one of {}", SECTIONS.join(", "));
    }
    let text = text.trim();
    if text.is_empty() {
        bail!("the entry text is empty");
    }
    let fragments = dir().join("fragments");
    std::fs::create_dir_all(&fragments)?;
    let slug = slug(text);
    let path = (1..)
        .map(|n| match n {
            1 => fragments.join(format!("{slug}.yml")),
            n => fragments.join(format!("{slug}-{n}.yml")),
        })
        .find(|p| !p.exists())
        .expect("a free name");
    std::fs::write(&path, fragment_yaml(section, text))?;
    Ok(path)
}

/// One-entry fragment; the text is a YAML double-quoted scalar, so any text is valid.
pub(crate) fn fragment_yaml(section: &str, text: &str) -> String {
    let quoted = serde_json::to_string(text).expect("a string serializes");
    if section == "release_summary" {
        format!("{section}: {quoted}\n")
    } else {
        format!("{section}:\n  - {quoted}\n")
    }
}

/// A file name from the first words of the text: `proxmox_kvm - fewer calls` ->
/// `proxmox_kvm-fewer-calls`.
pub(crate) fn slug(text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .take(6)
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() {
        "change".into()
    } else {
        words.join("-")
    }
}

/// Fragment files present (`.yml`/`.yaml`).
pub(crate) fn fragments() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir().join("fragments"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

pub(crate) fn check() -> Result<()> {
    antsibull(&["lint"])?;
    let Some(release) = last_release_commit()? else {
        println!("changelog: not a git checkout, the fragment rule is skipped");
        return Ok(());
    };
    let changed = changed_since(&release)?;
    verdict(&changed, &fragments(), &release)?;
    println!(
        "changelog: fragments valid; {} watched file(s) changed since the last release ({}), {} fragment(s)",
        changed.len(),
        &release[..release.len().min(12)],
        fragments().len()
    );
    Ok(())
}

/// The rule, on its inputs: watched files changed since the release need a fragment.
pub(crate) fn verdict(changed: &[String], fragments: &[PathBuf], release: &str) -> Result<()> {
    if changed.is_empty() || !fragments.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = changed.iter().take(5).map(String::as_str).collect();
    bail!(
        "{} file(s) under {} changed since the last release (commit {}, the last change of changelogs/changelog.yaml), e.g. {}, but changelogs/fragments/ holds no fragment.\n\
         Add one: cargo collection changelog add minor_changes \"proxmox_kvm - what changed for users.\"\n\
         (sections: {}; use trivial for a change users cannot see)",
        changed.len(),
        WATCHED.map(|w| format!("{w}/")).join(", "),
        &release[..release.len().min(12)],
        shown.join(", "),
        SECTIONS.join(", ")
    )
}

/// The last commit that changed `changelogs/changelog.yaml`; `None` outside git.
fn last_release_commit() -> Result<Option<String>> {
    let out = git()
        .args(["log", "-1", "--format=%H", "--", "changelogs/changelog.yaml"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let id = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if id.is_empty() {
                bail!("changelogs/changelog.yaml has no commit yet: commit it (it marks the last release)");
            }
            Ok(Some(id))
        }
        _ => Ok(None),
    }
}

/// Watched files that differ between `commit` and the work tree (committed or not).
fn changed_since(commit: &str) -> Result<Vec<String>> {
    let out = repo::output(git().args(["diff", "--name-only", commit, "--"]).args(WATCHED))?;
    Ok(out.lines().map(str::to_string).collect())
}

fn git() -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(repo::root());
    cmd
}

/// The fragments become the release of galaxy.yml's version; `CHANGELOG.md` follows.
fn release() -> Result<()> {
    let version = galaxy::version()?;
    let changelog = std::fs::read_to_string(dir().join("changelog.yaml")).context("changelogs/changelog.yaml")?;
    if released(&changelog, &version) {
        bail!("version {version} is already released in changelogs/changelog.yaml: raise version in galaxy.yml first");
    }
    if fragments().is_empty() {
        bail!("changelogs/fragments/ is empty: nothing to release");
    }
    antsibull(&["release", "--version", &version])
}

/// Whether `changelog.yaml` text has a release `version` (a key under `releases:`).
pub(crate) fn released(changelog: &str, version: &str) -> bool {
    changelog.lines().any(|l| {
        let key = l.trim_end();
        key == format!("  {version}:") || key == format!("  '{version}':")
    })
}

/// Runs antsibull-changelog of the main venv in the collection root, with the venv's
/// ansible-doc first in PATH (a release lists the collection's modules with it).
fn antsibull(args: &[&str]) -> Result<()> {
    let tool = repo::venv_tool("antsibull-changelog")?;
    let bin: &Path = tool.parent().expect("venv bin dir");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let mut cmd = Command::new(&tool);
    cmd.args(args)
        .current_dir(repo::root())
        .env("PATH", std::env::join_paths(dirs)?);
    repo::run(&mut cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_names_from_the_first_words() {
        assert_eq!(
            slug("proxmox_kvm - fewer API calls for a create, and more."),
            "proxmox_kvm-fewer-api-calls-for-a"
        );
        assert_eq!(slug("  --  "), "change");
    }

    #[test]
    fn fragments_are_antsibull_yaml_with_any_text_quoted() {
        assert_eq!(
            fragment_yaml("bugfixes", "proxmox_nic - a \"quoted\" value: kept."),
            "bugfixes:\n  - \"proxmox_nic - a \\\"quoted\\\" value: kept.\"\n"
        );
        assert_eq!(
            fragment_yaml("release_summary", "First release."),
            "release_summary: \"First release.\"\n"
        );
    }

    #[test]
    fn a_release_is_a_key_under_releases() {
        let yaml = "ancestor: null\nreleases:\n  0.1.0:\n    changes:\n      release_summary: x\n";
        assert!(released(yaml, "0.1.0"));
        assert!(!released(yaml, "0.1.1"));
        assert!(released("releases:\n  '1.0':\n", "1.0"));
    }

    #[test]
    fn watched_changes_need_a_fragment() {
        let changed = vec!["modules/proxmox_kvm/src/lib.rs".to_string()];
        let none: Vec<PathBuf> = Vec::new();
        let one = vec![PathBuf::from("changelogs/fragments/x.yml")];
        assert!(verdict(&[], &none, "abc").is_ok(), "nothing changed");
        assert!(verdict(&changed, &one, "abc").is_ok());
        let err = verdict(&changed, &none, "0123456789abcdef").unwrap_err().to_string();
        assert!(
            err.starts_with(
                "1 file(s) under plugins/, modules/, common/ changed since the last release (commit 0123456789ab"
            ),
            "{err}"
        );
        assert!(err.contains("cargo collection changelog add minor_changes"), "{err}");
    }
}
