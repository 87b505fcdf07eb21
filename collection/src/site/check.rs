//! What the built site must hold: a page per module and plugin that renders what its
//! documentation declares (options, examples, return values), a page per guide of
//! `extra-docs.yml`, and no internal link or anchor that leads nowhere.
//!
//! The checks read the HTML as text (the ids and hrefs Sphinx writes), so they need no
//! browser and run in a fraction of the build's time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One page the site must have, and the anchors (`id`s) it must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expected {
    /// The page, relative to the site's root (`proxmox_kvm_module.html`).
    pub page: String,
    /// What the page is, for messages (`module proxmox_kvm`).
    pub what: String,
    /// Ids the page must hold (`parameters`, an option's anchor, ...).
    pub ids: Vec<String>,
}

/// Sphinx's anchor of a module's or plugin's option or return value:
/// `ansible-collections-ferrox-proxmox-<page>-<kind>-<key>` (`_` becomes `-`).
pub(crate) fn anchor(page_stem: &str, kind: &str, key: &str) -> String {
    format!("ansible-collections-ferrox-proxmox-{page_stem}-{kind}-{key}").replace('_', "-")
}

/// The page of a module: synopsis, parameters (each declared option), examples and
/// return values (each top-level key).
pub(crate) fn module_page(name: &str, options: &[&str], returns: &[&str]) -> Expected {
    let stem = format!("{name}_module");
    let mut ids: Vec<String> = ["synopsis", "parameters", "examples", "return-values"]
        .into_iter()
        .map(String::from)
        .collect();
    ids.extend(options.iter().map(|o| anchor(&stem, "parameter", o)));
    ids.extend(returns.iter().map(|r| anchor(&stem, "return", r)));
    Expected {
        page: format!("{stem}.html"),
        what: format!("module {name}"),
        ids,
    }
}

/// The page of a plugin (`inventory`, `callback`) from its Python source: the sections
/// its documentation declares (`options:` → parameters, `EXAMPLES` → examples, `RETURN`
/// → return values).
pub(crate) fn plugin_page(kind: &str, name: &str, source: &str) -> Expected {
    let mut ids = vec!["synopsis".to_string()];
    if source.contains("\noptions:\n") {
        ids.push("parameters".into());
    }
    if source.contains("\nEXAMPLES = ") {
        ids.push("examples".into());
    }
    if source.contains("\nRETURN = ") {
        ids.push("return-values".into());
    }
    Expected {
        page: format!("{name}_{kind}.html"),
        what: format!("{kind} plugin {name}"),
        ids,
    }
}

/// The top-level keys of a RETURN block (keys at column 0).
pub(crate) fn return_keys(returns: &str) -> Vec<&str> {
    returns
        .lines()
        .filter(|l| !l.starts_with([' ', '#', '-']) && l.ends_with(':'))
        .map(|l| l.trim_end_matches(':'))
        .collect()
}

/// The guides `extra-docs.yml` lists (`- guide_x` under each `toctree:`).
pub(crate) fn listed_guides(extra_docs: &str) -> Vec<String> {
    let mut guides = Vec::new();
    let mut in_toctree = false;
    for line in extra_docs.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        if trimmed == "toctree:" {
            in_toctree = true;
        } else if let (true, Some(entry)) = (in_toctree, trimmed.strip_prefix("- ")) {
            if !entry.contains(':') {
                guides.push(entry.trim().to_string());
                continue;
            }
            in_toctree = false;
        } else {
            in_toctree = false;
        }
    }
    guides
}

/// The site's pages: path relative to the root → HTML.
pub(crate) type Pages = BTreeMap<String, String>;

/// Every `.html` file under `root`.
pub(crate) fn read_pages(root: &Path) -> std::io::Result<Pages> {
    let mut pages = Pages::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
                pages.insert(rel, std::fs::read_to_string(&path)?);
            }
        }
    }
    Ok(pages)
}

/// What is wrong with the site: each expected page missing or lacking an anchor.
pub(crate) fn missing(pages: &Pages, expected: &[Expected]) -> Vec<String> {
    let mut faults = Vec::new();
    for e in expected {
        let Some(html) = pages.get(&e.page) else {
            faults.push(format!("{}: no page {}", e.what, e.page));
            continue;
        };
        let ids = attribute_values(html, "id");
        let lacking: Vec<&str> = e
            .ids
            .iter()
            .map(String::as_str)
            .filter(|id| !ids.contains(*id))
            .collect();
        if !lacking.is_empty() {
            faults.push(format!("{}: {} lacks {}", e.what, e.page, lacking.join(", ")));
        }
    }
    faults
}

/// Every link of the site's pages (`href`, `src`) that stays inside the site and leads
/// to no file, or to a page without its anchor: `page: link`.
pub(crate) fn broken_links(pages: &Pages, files: &BTreeSet<String>) -> Vec<String> {
    let mut broken = Vec::new();
    for (page, html) in pages {
        for attr in ["href", "src"] {
            for link in attribute_values(html, attr) {
                if let Some(fault) = broken_link(pages, files, page, &link) {
                    broken.push(format!("{page}: {link} ({fault})"));
                }
            }
        }
    }
    broken
}

/// Why `link` on `page` leads nowhere, if it stays inside the site and does.
fn broken_link(pages: &Pages, files: &BTreeSet<String>, page: &str, link: &str) -> Option<&'static str> {
    let outside = ["mailto:", "data:", "javascript:"];
    if link.contains("://") || outside.iter().any(|o| link.starts_with(o)) {
        return None;
    }
    let link = link.split('?').next().unwrap_or("");
    let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
    let target = if path.is_empty() {
        page.to_string()
    } else if let Some(from_root) = path.strip_prefix('/') {
        normalise(Path::new(from_root))
    } else {
        normalise(&Path::new(page).parent().unwrap_or(Path::new("")).join(path))
    };
    let target = if target.is_empty() || target.ends_with('/') {
        format!("{target}index.html")
    } else {
        target
    };
    if !files.contains(&target) {
        return Some("no such file");
    }
    match pages.get(&target) {
        Some(html) if !fragment.is_empty() && !has_anchor(html, fragment) => Some("no such anchor"),
        _ => None,
    }
}

fn has_anchor(html: &str, fragment: &str) -> bool {
    attribute_values(html, "id").contains(fragment) || attribute_values(html, "name").contains(fragment)
}

/// `a/b/../c.html` → `a/c.html`; `None` when it leaves the root.
fn normalise(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    let mut s = parts.join("/");
    if path.to_string_lossy().ends_with('/') && !s.is_empty() {
        s.push('/');
    }
    s
}

/// Every value of `name="..."` in `html` (attributes of any element), `&amp;` decoded.
fn attribute_values(html: &str, name: &str) -> BTreeSet<String> {
    let needle = format!(" {name}=\"");
    let mut values = BTreeSet::new();
    let mut rest = html;
    while let Some(at) = rest.find(&needle) {
        rest = &rest[at + needle.len()..];
        if let Some(end) = rest.find('"') {
            values.insert(rest[..end].replace("&amp;", "&"));
            rest = &rest[end..];
        }
    }
    values
}

/// Every file under `root`, relative to it.
pub(crate) fn files(root: &Path) -> std::io::Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    let mut dirs: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.insert(path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(pages: &[(&str, &str)]) -> (Pages, BTreeSet<String>) {
        let pages: Pages = pages.iter().map(|(p, h)| (p.to_string(), h.to_string())).collect();
        let mut files: BTreeSet<String> = pages.keys().cloned().collect();
        files.insert("_static/theme.css".into());
        (pages, files)
    }

    #[test]
    fn links_to_existing_pages_and_anchors_pass() {
        let (pages, files) = site(&[
            (
                "index.html",
                r##"<a href="docsite/guide.html#why">g</a><a href="#top">t</a><link href="_static/theme.css?v=1"/><a href="https://docs.ansible.com/x.html#y">x</a><p id="top"></p>"##,
            ),
            (
                "docsite/guide.html",
                r#"<section id="why"><a href="../index.html">i</a><a href="/">r</a></section>"#,
            ),
        ]);
        assert_eq!(broken_links(&pages, &files), Vec::<String>::new());
    }

    #[test]
    fn a_missing_page_or_anchor_is_a_broken_link() {
        let (pages, files) = site(&[
            (
                "index.html",
                r##"<a href="docsite/gone.html">g</a><a href="docsite/guide.html#nowhere">n</a><img src="_static/logo.png"/>"##,
            ),
            (
                "docsite/guide.html",
                r#"<section id="why"><a href="../index.html#missing">i</a></section>"#,
            ),
        ]);
        assert_eq!(
            broken_links(&pages, &files),
            [
                "docsite/guide.html: ../index.html#missing (no such anchor)",
                "index.html: docsite/gone.html (no such file)",
                "index.html: docsite/guide.html#nowhere (no such anchor)",
                "index.html: _static/logo.png (no such file)",
            ]
        );
    }

    #[test]
    fn a_module_page_must_render_every_option_and_return_value() {
        let expected = module_page("proxmox_nic", &["bridge", "link_down"], &["mac"]);
        let full = r#"<section id="synopsis"></section><section id="parameters"><div id="ansible-collections-ferrox-proxmox-proxmox-nic-module-parameter-bridge"></div><div id="ansible-collections-ferrox-proxmox-proxmox-nic-module-parameter-link-down"></div></section><section id="examples"></section><section id="return-values"><div id="ansible-collections-ferrox-proxmox-proxmox-nic-module-return-mac"></div></section>"#;
        let (pages, _) = site(&[("proxmox_nic_module.html", full)]);
        assert_eq!(missing(&pages, std::slice::from_ref(&expected)), Vec::<String>::new());

        let no_returns = full.replace("return-values", "notes");
        let (pages, _) = site(&[("proxmox_nic_module.html", &no_returns)]);
        assert_eq!(
            missing(&pages, std::slice::from_ref(&expected)),
            ["module proxmox_nic: proxmox_nic_module.html lacks return-values"]
        );
        let (pages, _) = site(&[]);
        assert_eq!(
            missing(&pages, &[expected]),
            ["module proxmox_nic: no page proxmox_nic_module.html"]
        );
    }

    #[test]
    fn a_plugin_page_must_render_what_its_documentation_declares() {
        let source = "DOCUMENTATION = r'''\nname: plan\noptions:\n  x: {}\n'''\n\nEXAMPLES = r'''\n'''\n";
        let e = plugin_page("callback", "plan", source);
        assert_eq!(e.page, "plan_callback.html");
        assert_eq!(e.ids, ["synopsis", "parameters", "examples"]);
    }

    #[test]
    fn return_keys_are_the_top_level_keys() {
        assert_eq!(
            return_keys("vmid:\n  description: x\n  type: int\nmac:\n  description: y\n"),
            ["vmid", "mac"]
        );
    }

    #[test]
    fn the_guides_are_read_from_each_toctree() {
        let yml = "---\n# c\nsections:\n  - title: A\n    toctree:\n      - guide_a\n      - guide_b\n  - title: B\n    toctree:\n      - guide_c\n";
        assert_eq!(listed_guides(yml), ["guide_a", "guide_b", "guide_c"]);
    }
}
