//! A failed call or task in 1.6's words for the operation, then PVE's.

use ferrox_common::ansible::protocol::Failure;
use ferrox_common::api::client::ApiError;
use ferrox_common::api::tasks::TaskError;

/// A failed call: the operation's prefix, then PVE's answer.
pub(crate) fn api_fail(prefix: &str, e: ApiError, vmid: u32) -> Failure {
    Failure::new(format!("{prefix}{e}")).with("vmid", vmid)
}

/// A failed or timed-out task in words: 1.6's timeout text, plus what it lacked (the
/// task's id, how long we waited, the last log line rather than the first).
pub fn task_failure(prefix: &str, op: &str, e: TaskError) -> String {
    match e {
        TaskError::Timeout { upid, waited, last_line } => format!(
            "Reached timeout while waiting for {op} VM. Last line in task before timeout: {} (task {upid} still running after {} s; it continues in PVE)",
            last_line.unwrap_or_else(|| "(no output yet)".into()),
            waited.as_secs()
        ),
        TaskError::Failed { upid, exitstatus, log_tail } => {
            let tail = if log_tail.is_empty() { String::new() } else { format!(" Task log: {}", log_tail.join(" | ")) };
            format!("{prefix}{exitstatus} (task {upid}).{tail}")
        }
        TaskError::Api(e) => format!("{prefix}{e}"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn task_failures_name_the_task_and_what_it_said() {
        let timeout = TaskError::Timeout {
            upid: "UPID:pve1:1:2:3:qmclone:9000:root@pam:".into(),
            waited: Duration::from_secs(300),
            last_line: Some("transferred 1.0 GiB of 32.0 GiB (3.12%)".into()),
        };
        assert_eq!(
            task_failure("Unable to clone vm x from vmid 9000: ", "creating", timeout),
            "Reached timeout while waiting for creating VM. Last line in task before timeout: transferred 1.0 GiB of 32.0 GiB (3.12%) (task UPID:pve1:1:2:3:qmclone:9000:root@pam: still running after 300 s; it continues in PVE)"
        );
        let failed = TaskError::Failed {
            upid: "UPID:pve1:1:2:3:qmstart:100:root@pam:".into(),
            exitstatus: "start failed: bridge 'vmbr9' does not exist".into(),
            log_tail: vec!["TASK ERROR: start failed: bridge 'vmbr9' does not exist".into()],
        };
        assert_eq!(
            task_failure("starting of VM 100 failed with exception: ", "starting", failed),
            "starting of VM 100 failed with exception: start failed: bridge 'vmbr9' does not exist (task UPID:pve1:1:2:3:qmstart:100:root@pam:). Task log: TASK ERROR: start failed: bridge 'vmbr9' does not exist"
        );
    }
}
