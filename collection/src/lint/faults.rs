//! The proof that ansible-lint's argument check sees our options: `tests/lint/faults.yml`
//! holds tasks with one fault each (a misspelled option, a bad choice, a wrong type, per
//! module), their connection in `module_defaults`. Each task named `Fault <word>` must be
//! reported by the `args` rule with a message naming `<word>`, and nothing else may be
//! reported (the connection from `module_defaults` in particular).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::repo;

const FIXTURE: &str = "tests/lint/faults.yml";

/// ansible-lint's settings for the fixture: `.ansible-lint`'s, without its exclusion of `tests/`.
const CONFIG: &str = "---\nprofile: production\noffline: true\nenable_list:\n  - args\n";

pub(super) fn check(tool: &Path, collections: &Path, work: &Path) -> Result<()> {
    let fixture = repo::root().join(FIXTURE);
    let text = std::fs::read_to_string(&fixture).with_context(|| format!("reading {FIXTURE}"))?;
    let expected = faults(&text);
    let config = work.join("faults.ansible-lint.yml");
    std::fs::write(&config, CONFIG)?;
    let out = Command::new(tool)
        .current_dir(repo::root())
        .args([
            "--config-file".as_ref(),
            config.as_os_str(),
            "--nocolor".as_ref(),
            "-f".as_ref(),
            "json".as_ref(),
            fixture.as_os_str(),
        ])
        .env("ANSIBLE_COLLECTIONS_PATH", collections)
        .env("ANSIBLE_HOME", work.join("ansible-home"))
        .output()
        .context("starting ansible-lint")?;
    let report: Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "ansible-lint's JSON report of {FIXTURE}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let found: Vec<(usize, String, String)> = report
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let line = m["location"]["lines"]["begin"].as_u64().unwrap_or(0) as usize;
            (
                line,
                m["check_name"].as_str().unwrap_or("").to_string(),
                m["description"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let problems = compare(&expected, &found);
    if !problems.is_empty() {
        bail!(
            "ansible-lint's argument check of {FIXTURE}:\n  {}",
            problems.join("\n  ")
        );
    }
    println!(
        "ansible-lint's argument check: all {} faults of {FIXTURE} reported, each naming its fault",
        expected.len()
    );
    Ok(())
}

/// `(line, word)` of every `- name: Fault <word>` task.
fn faults(yaml: &str) -> Vec<(usize, String)> {
    yaml.lines()
        .enumerate()
        .filter_map(|(i, l)| Some((i + 1, l.trim().strip_prefix("- name: Fault ")?.trim().to_string())))
        .collect()
}

/// What differs between the faults expected and the matches reported.
fn compare(expected: &[(usize, String)], found: &[(usize, String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (line, word) in expected {
        match found.iter().find(|(l, _, _)| l == line) {
            None => problems.push(format!("line {line} (Fault {word}): not reported")),
            Some((_, rule, msg)) if rule != "args[module]" || !msg.contains(word.as_str()) => {
                problems.push(format!("line {line} (Fault {word}): reported as {rule}: {msg}"))
            }
            Some(_) => {}
        }
    }
    for (line, rule, msg) in found {
        if !expected.iter().any(|(l, _)| l == line) {
            problems.push(format!("line {line}: unexpected {rule}: {msg}"));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_must_be_reported_naming_it_and_nothing_else() {
        let expected =
            faults("- name: Play\n  tasks:\n    - name: Fault memroy\n      x: {}\n    - name: Fault startd\n");
        assert_eq!(expected, vec![(3, "memroy".to_string()), (5, "startd".to_string())]);
        let ok = vec![
            (
                3,
                "args[module]".to_string(),
                "Unsupported parameters: memroy".to_string(),
            ),
            (
                5,
                "args[module]".to_string(),
                "value of state must be one of: present, got: startd".to_string(),
            ),
        ];
        assert!(compare(&expected, &ok).is_empty());
        let wrong = vec![
            (
                3,
                "args[module]".to_string(),
                "missing required arguments: api_host".to_string(),
            ),
            (9, "name[casing]".to_string(), "x".to_string()),
        ];
        let problems = compare(&expected, &wrong);
        assert_eq!(problems.len(), 3, "{problems:?}");
    }
}
