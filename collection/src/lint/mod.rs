//! `lint`: what users copy passes ansible-lint's `production` profile with the argument
//! check (`args`) on top — the shipped `playbooks/`, the example execution environment
//! in `examples/`, and every YAML code block of `README.md` and of the guides in
//! `docs/docsite/rst/`, extracted here so the documentation cannot drift from what is
//! checked. The collection is linked into a collections
//! path first, so every `ferrox.proxmox.*` module name must resolve. Settings:
//! `.ansible-lint`. Then the argument check is proven on faulty tasks ([`faults`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::repo;

mod faults;

/// What ships to users and is linted as it is.
const SHIPPED: [&str; 2] = ["playbooks", "examples"];

pub(crate) fn lint() -> Result<()> {
    let tool = repo::venv_tool("ansible-lint")?;
    let work = repo::root().join("build/lint");
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("clearing {}", work.display()))?;
    }
    let collections = work.join("collections");
    link_collection(&collections)?;
    let blocks = documented_blocks()?;
    let readme_dir = work.join("readme");
    let mut paths: Vec<PathBuf> = SHIPPED.iter().map(|d| repo::root().join(d)).collect();
    for (i, (source, block)) in blocks.iter().enumerate() {
        let path = readme_dir.join(block_file(i + 1, &block.text));
        std::fs::create_dir_all(path.parent().expect("a parent"))?;
        // One YAML document: the block's own `---` (a copied file keeps it) or ours.
        let body = block.text.strip_prefix("---\n").unwrap_or(&block.text);
        std::fs::write(&path, format!("---\n# {source} line {}\n{body}", block.line))?;
        paths.push(path);
    }
    println!(
        "ansible-lint: {} and {} YAML block(s) of README.md and {GUIDES}/",
        SHIPPED.join("/, "),
        blocks.len()
    );
    let bin = tool.parent().expect("venv bin dir").to_path_buf();
    let mut search = vec![bin];
    search.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let mut cmd = Command::new(&tool);
    cmd.current_dir(repo::root())
        .args(["--config-file", ".ansible-lint", "--nocolor"])
        .args(&paths)
        .env("PATH", std::env::join_paths(search)?)
        .env("ANSIBLE_COLLECTIONS_PATH", &collections)
        .env("ANSIBLE_HOME", work.join("ansible-home"));
    repo::run(&mut cmd)?;
    faults::check(&tool, &collections, &work)
}

/// `<dir>/ansible_collections/ferrox/proxmox` -> the repository root.
pub(crate) fn link_collection(dir: &Path) -> Result<()> {
    let ns = dir.join("ansible_collections/ferrox");
    std::fs::create_dir_all(&ns)?;
    std::os::unix::fs::symlink(repo::root(), ns.join("proxmox")).context("linking the collection")?;
    Ok(())
}

/// Where the guides are (reStructuredText, rendered by the docs site).
const GUIDES: &str = "docs/docsite/rst";

/// Every YAML block users may copy, with the file it is in: README.md's, then each
/// guide's in name order.
fn documented_blocks() -> Result<Vec<(String, Block)>> {
    let readme = std::fs::read_to_string(repo::root().join("README.md")).context("reading README.md")?;
    let mut blocks: Vec<(String, Block)> = yaml_blocks(&readme)
        .into_iter()
        .map(|b| ("README.md".to_string(), b))
        .collect();
    let mut guides: Vec<PathBuf> = std::fs::read_dir(repo::root().join(GUIDES))
        .with_context(|| format!("reading {GUIDES}"))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    guides.retain(|p| p.extension().is_some_and(|e| e == "rst"));
    guides.sort();
    for guide in guides {
        let text = std::fs::read_to_string(&guide).with_context(|| format!("reading {}", guide.display()))?;
        let source = repo::rel(&guide);
        blocks.extend(rst_yaml_blocks(&text).into_iter().map(|b| (source.clone(), b)));
    }
    Ok(blocks)
}

/// Every `.. code-block:: yaml` (or `yml`, or `.. code::`) of a reStructuredText text,
/// its indentation removed, with the line its code starts on.
pub(crate) fn rst_yaml_blocks(rst: &str) -> Vec<Block> {
    let lines: Vec<&str> = rst.lines().collect();
    let mut blocks = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        let directive = lines[n].trim();
        n += 1;
        if !matches!(
            directive,
            ".. code-block:: yaml" | ".. code-block:: yml" | ".. code:: yaml" | ".. code:: yml"
        ) {
            continue;
        }
        // Options (`:caption:`) and the blank line, then the indented body.
        while n < lines.len() && (lines[n].trim().is_empty() || lines[n].trim_start().starts_with(':')) {
            n += 1;
        }
        let Some(indent) = lines.get(n).map(|l| l.len() - l.trim_start().len()).filter(|i| *i > 0) else {
            continue;
        };
        let mut block = Block {
            line: n + 1,
            text: String::new(),
        };
        while n < lines.len() && (lines[n].trim().is_empty() || lines[n].len() - lines[n].trim_start().len() >= indent)
        {
            block.text.push_str(lines[n].get(indent..).unwrap_or(""));
            block.text.push('\n');
            n += 1;
        }
        block.text = format!("{}\n", block.text.trim_end());
        blocks.push(block);
    }
    blocks
}

/// A fenced ```yaml block of a Markdown text, with the line its code starts on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Block {
    pub line: usize,
    pub text: String,
}

/// Every ```yaml (or ```yml) fenced block.
pub(crate) fn yaml_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (n, line) in markdown.lines().enumerate() {
        let fence = line.trim_start();
        match &mut open {
            None if matches!(fence.trim_end(), "```yaml" | "```yml") => {
                open = Some(Block {
                    line: n + 2,
                    text: String::new(),
                });
            }
            Some(_) if fence.trim_end() == "```" => blocks.push(open.take().expect("open")),
            Some(block) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            None => {}
        }
    }
    blocks
}

/// Where a block is written, which tells ansible-lint what it is: a playbook (a list of
/// plays), a task list (under `tasks/`), a `requirements.yml`, or an execution
/// environment definition.
pub(crate) fn block_file(n: usize, text: &str) -> String {
    let first_key = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && *l != "---")
        .unwrap_or("");
    if text
        .lines()
        .any(|l| l.starts_with("images:") || l.starts_with("dependencies:"))
    {
        format!("ee-{n}/execution-environment.yml")
    } else if text.lines().any(|l| l.starts_with("collections:")) {
        format!("requirements-{n}/requirements.yml")
    } else if text.lines().any(|l| l.trim_start().starts_with("hosts:")) || !first_key.starts_with('-') {
        format!("readme-{n}.yml")
    } else {
        format!("tasks/readme-{n}.yml")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "# T\n\n```sh\nls\n```\n\n```yaml\n- name: Play\n  hosts: localhost\n```\n\ntext\n\n```yml\n- name: A task\n  ferrox.proxmox.proxmox_vm_info: {}\n```\n";

    #[test]
    fn yaml_blocks_are_found_with_their_lines() {
        let blocks = yaml_blocks(MD);
        assert_eq!(blocks.len(), 2);
        assert_eq!(
            blocks[0],
            Block {
                line: 8,
                text: "- name: Play\n  hosts: localhost\n".into()
            }
        );
        assert_eq!(blocks[1].line, 15);
    }

    #[test]
    fn rst_yaml_blocks_are_found_dedented_with_their_lines() {
        let rst = "Title\n=====\n\n.. code-block:: yaml\n\n   - name: Play\n     hosts: localhost\n\n     tasks: []\n\ntext\n\n.. code-block:: sh\n\n   ls\n";
        assert_eq!(
            rst_yaml_blocks(rst),
            [Block {
                line: 6,
                text: "- name: Play\n  hosts: localhost\n\n  tasks: []\n".into()
            }]
        );
    }

    #[test]
    fn a_block_is_filed_as_what_it_is() {
        let blocks = yaml_blocks(MD);
        assert_eq!(block_file(1, &blocks[0].text), "readme-1.yml");
        assert_eq!(block_file(2, &blocks[1].text), "tasks/readme-2.yml");
        assert_eq!(
            block_file(3, "version: 3\nimages:\n  base_image: {}\n"),
            "ee-3/execution-environment.yml"
        );
        assert_eq!(
            block_file(4, "collections:\n  - name: ferrox.proxmox\n"),
            "requirements-4/requirements.yml"
        );
    }
}
