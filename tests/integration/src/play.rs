//! One ansible-playbook run: what the harness writes (the playbook) and what it
//! reads back (exit code, output, one [`TaskOutcome`] per task result).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Switches of one run.
#[derive(Debug, Clone, Default)]
pub struct PlayOpts {
    /// `--check`.
    pub check: bool,
    /// `--diff`.
    pub diff: bool,
    /// Number of `-v`.
    pub verbosity: u8,
    /// Extra environment for ansible-playbook (and so for the modules), applied last.
    pub env: Vec<(String, String)>,
    /// Play `vars` (a JSON object), if not null.
    pub vars: Value,
    /// The play's whole `module_defaults` mapping instead of the default token-auth
    /// block (`Some(json!({}))` means none at all).
    pub module_defaults: Option<Value>,
    /// Another ansible-playbook (e.g. `<repo>/.venv-2.17/bin/ansible-playbook`).
    pub ansible: Option<PathBuf>,
    /// The play's `hosts:` (default `localhost`) and, with it, the inventory's text
    /// (default: just `localhost`), for plays over many hosts.
    pub hosts: Option<(String, String)>,
}

/// The result of one task, as the `ferrox_results` callback recorded it.
#[derive(Debug, Clone)]
pub struct TaskOutcome {
    pub name: String,
    /// The inventory host the result is for.
    pub host: String,
    /// The registered result (for a module task: the module's JSON plus ansible's keys).
    pub result: Value,
    pub failed: bool,
    pub changed: bool,
    pub skipped: bool,
}

impl TaskOutcome {
    /// The result's `msg` (empty when absent).
    pub fn msg(&self) -> &str {
        self.result["msg"].as_str().unwrap_or("")
    }
    /// The result's `warnings` as strings.
    pub fn warnings(&self) -> Vec<String> {
        self.result["warnings"]
            .as_array()
            .map(|w| {
                w.iter()
                    .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A finished ansible-playbook run.
#[derive(Debug, Clone)]
pub struct Play {
    pub rc: i32,
    pub stdout: String,
    pub stderr: String,
    /// Every task result in order (facts-free: `gather_facts` is off).
    pub results: Vec<TaskOutcome>,
}

impl Play {
    /// The first result of the task with this name; panics listing the names recorded.
    pub fn task(&self, name: &str) -> &TaskOutcome {
        self.results.iter().find(|t| t.name == name).unwrap_or_else(|| {
            let names: Vec<&str> = self.results.iter().map(|t| t.name.as_str()).collect();
            panic!(
                "no result for task {name:?}; tasks run: {names:?}\n{}",
                self.transcript()
            )
        })
    }

    /// The last task result.
    pub fn last(&self) -> &TaskOutcome {
        self.results
            .last()
            .unwrap_or_else(|| panic!("the play recorded no task result\n{}", self.transcript()))
    }

    /// Panics (showing the output) unless ansible-playbook exited 0.
    pub fn assert_ok(&self) -> &Self {
        if self.rc != 0 {
            panic!("ansible-playbook exited with {}\n{}", self.rc, self.transcript());
        }
        self
    }

    /// The recap line's counters for localhost (`ok`, `changed`, `failed`, ...).
    pub fn recap(&self, counter: &str) -> Option<u64> {
        let line = self
            .stdout
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with("localhost") && l.contains("ok="))?;
        let key = format!("{counter}=");
        let at = line.find(&key)? + key.len();
        line[at..].split_whitespace().next()?.parse().ok()
    }

    /// stdout and stderr, then each failed task's name and message, for panic messages
    /// (an in-process play's stdout is only its recap).
    pub fn transcript(&self) -> String {
        let failed: String = self
            .results
            .iter()
            .filter(|t| t.failed)
            .map(|t| format!("{} ({}): {}\n", t.name, t.host, t.msg()))
            .collect();
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}\n--- failed tasks ---\n{failed}",
            self.stdout, self.stderr
        )
    }
}

/// The playbook text: one play on localhost with the tasks given (dedented, then
/// indented under `tasks:`). JSON is valid YAML, so defaults and vars are inlined as JSON.
pub(crate) fn render_playbook(tasks_yaml: &str, module_defaults: &Value, vars: &Value) -> String {
    let mut y = String::from("- hosts: localhost\n  gather_facts: false\n");
    if module_defaults.as_object().is_some_and(|m| !m.is_empty()) {
        y.push_str(&format!("  module_defaults: {module_defaults}\n"));
    }
    if !vars.is_null() {
        y.push_str(&format!("  vars: {vars}\n"));
    }
    y.push_str("  tasks:\n");
    for line in dedent(tasks_yaml).lines() {
        if line.trim().is_empty() {
            y.push('\n');
        } else {
            y.push_str("    ");
            y.push_str(line);
            y.push('\n');
        }
    }
    y
}

/// Removes the indentation common to all non-blank lines.
pub(crate) fn dedent(text: &str) -> String {
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads the callback's JSON lines.
pub(crate) fn read_results(path: &Path) -> Vec<TaskOutcome> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("bad result line {l}: {e}"));
            let outcome = v["outcome"].as_str().unwrap_or("");
            TaskOutcome {
                name: v["name"].as_str().unwrap_or("").to_string(),
                host: v["host"].as_str().unwrap_or("").to_string(),
                failed: outcome == "failed" || outcome == "unreachable",
                skipped: outcome == "skipped",
                changed: v["changed"].as_bool().unwrap_or(false),
                result: v["result"].clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tasks_are_dedented_and_placed_under_the_play() {
        let y = render_playbook(
            "\n    - name: a\n      debug: {msg: x}\n",
            &json!({"g": {"k": 1}}),
            &Value::Null,
        );
        assert!(y.contains("  module_defaults: {\"g\":{\"k\":1}}\n"));
        assert!(y.ends_with("  tasks:\n\n    - name: a\n      debug: {msg: x}\n"), "{y}");
    }

    #[test]
    fn empty_defaults_are_left_out() {
        let y = render_playbook("- debug: {}", &json!({}), &json!({"a": 1}));
        assert!(!y.contains("module_defaults"));
        assert!(y.contains("  vars: {\"a\":1}\n"));
    }
}
