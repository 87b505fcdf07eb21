//! Waiting on PVE tasks: poll the UPID's node with short adaptive intervals, report a
//! failed task at once with its exit status and log tail, surface `WARNINGS: n`.

use std::time::Duration;

use crate::client::{ApiError, Client};

/// A task that finished successfully (`OK` or `WARNINGS: n`).
#[derive(Debug, Clone)]
pub struct TaskDone {
    pub upid: String,
    pub exitstatus: String,
    /// Log lines starting with `WARN` when the task ended with warnings.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone)]
pub enum TaskError {
    /// The task ended with an error: its exit status and the last lines of its log.
    Failed { upid: String, exitstatus: String, log_tail: Vec<String> },
    /// Still running after the timeout: the last line of its log so far.
    Timeout { upid: String, waited: Duration, last_line: Option<String> },
    /// Polling itself failed.
    Api(ApiError),
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, _f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        todo!("tasks: display")
    }
}

impl std::error::Error for TaskError {}

/// The node a UPID belongs to (`UPID:<node>:...`).
pub fn node_of(upid: &str) -> Option<&str> {
    upid.strip_prefix("UPID:")?.split(':').next().filter(|n| !n.is_empty())
}

/// Waits until the task stops or `timeout` passes.
pub fn wait(_client: &Client, _upid: &str, _timeout: Duration) -> Result<TaskDone, TaskError> {
    todo!("tasks: wait")
}
