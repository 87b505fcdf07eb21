//! README.md is the collection's front page (Galaxy shows it): what the collection is
//! and its install in the first screen, short, and every link in it leading to a file
//! of the repository. The manual lives in the guides of `docs/docsite/rst/`.

use std::path::Path;

/// The most lines the front page may have.
pub(crate) const MAX_LINES: usize = 300;

/// The lines a first screen shows.
const FIRST_SCREEN: usize = 40;

/// The relative link targets of a Markdown text (`[text](target)`), without fragments;
/// web addresses and in-page anchors left out.
pub(crate) fn relative_links(markdown: &str) -> Vec<&str> {
    let mut links = Vec::new();
    let mut rest = markdown;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or("");
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            links.push(target);
        }
        rest = &rest[end..];
    }
    links
}

/// What is wrong with the front page `readme` of the repository at `root`.
pub(crate) fn faults(readme: &str, root: &Path) -> Vec<String> {
    let mut faults = Vec::new();
    let lines = readme.lines().count();
    if lines > MAX_LINES {
        faults.push(format!(
            "README.md has {lines} lines, more than {MAX_LINES}: move the detail to a guide"
        ));
    }
    let first_screen: String = readme.lines().take(FIRST_SCREEN).collect::<Vec<_>>().join("\n");
    if !first_screen.contains("ansible-galaxy collection install ferrox.proxmox") {
        faults.push(format!(
            "README.md's first {FIRST_SCREEN} lines lack `ansible-galaxy collection install ferrox.proxmox`"
        ));
    }
    for command in ["cargo collection demo", "cargo collection test"] {
        if !readme.lines().any(|l| l.trim() == command) {
            faults.push(format!(
                "README.md lacks the contributors' command `{command}` on a line of its own"
            ));
        }
    }
    for link in relative_links(readme) {
        if !root.join(link).exists() {
            faults.push(format!("README.md links to {link}, which does not exist"));
        }
    }
    faults
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo;

    #[test]
    fn the_readme_is_a_front_page_whose_links_lead_somewhere() {
        let root = repo::root();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        assert_eq!(faults(&readme, &root), Vec::<String>::new());
    }

    #[test]
    fn a_long_readme_without_install_or_with_a_dead_link_is_faulted() {
        let root = repo::root();
        let readme = format!(
            "# x\n\n[guide](docs/docsite/rst/guide_gone.rst) [web](https://example.org/a) [here](#install)\n{}",
            "line\n".repeat(MAX_LINES)
        );
        assert_eq!(
            faults(&readme, &root),
            [
                format!(
                    "README.md has {} lines, more than {MAX_LINES}: move the detail to a guide",
                    MAX_LINES + 3
                ),
                "README.md's first 40 lines lack `ansible-galaxy collection install ferrox.proxmox`".to_string(),
                "README.md lacks the contributors' command `cargo collection demo` on a line of its own".to_string(),
                "README.md lacks the contributors' command `cargo collection test` on a line of its own".to_string(),
                "README.md links to docs/docsite/rst/guide_gone.rst, which does not exist".to_string(),
            ]
        );
    }
}
