//! A failed call or task in 1.6's words for the operation, then PVE's.

use ferrox_ansible::protocol::Failure;
use ferrox_pve_client::client::ApiError;
use ferrox_pve_client::tasks::TaskError;
use ferrox_pve_rules::propstring::versions::{self, Versioned};

/// A failed call: the operation's prefix, then PVE's answer.
pub(crate) fn api_fail(prefix: &str, e: ApiError, vmid: u32) -> Failure {
    Failure::new(format!("{prefix}{e}")).with("vmid", vmid)
}

/// A 400 of `node` refusing keys of the task newer than the schema, in the task's
/// terms: the key, the node and the fix ([`versions::refusal`]); PVE's errors about
/// other parameters stay as PVE gave them, any other answer is returned as it is.
pub(crate) fn newer_keys_refused(mut e: ApiError, keys: &[Versioned], node: &str) -> ApiError {
    let Some(errors) = e.errors.as_ref().filter(|_| e.is_status(400)) else {
        return e;
    };
    let Some(refused) = versions::refusal(keys, node, errors) else {
        return e;
    };
    let mut others = errors.clone();
    others.retain(|param, _| !refused.params.contains(param));
    e.message = refused.message;
    e.errors = Some(others).filter(|o| !o.is_empty());
    e
}

/// A failed or timed-out task in words: 1.6's timeout text, plus what it lacked (the
/// task's id, how long we waited, the last log line rather than the first).
pub(crate) fn task_failure(prefix: &str, op: &str, e: TaskError) -> String {
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

    fn host_tunnel() -> Vec<Versioned> {
        let f = ferrox_pve_rules::propstring::formats::for_config_key("net0").unwrap();
        versions::sub_keys("net.net0", "net0", "virtio,bridge=vmbr0,host-tunnel=1", f)
    }

    #[test]
    fn a_node_s_refusal_of_a_newer_key_is_said_in_the_task_s_terms_and_the_rest_kept() {
        let refused = "invalid format - invalid key in comma-separated list property: host-tunnel\n";
        let errors = |v: serde_json::Value| v.as_object().cloned();
        let e = ApiError::http(
            400,
            "Parameter verification failed.",
            errors(serde_json::json!({"net0": refused, "memory": "value must have a minimum value of 16"})),
        );
        let got = newer_keys_refused(e, &host_tunnel(), "pve2").to_string();
        assert!(
            got.starts_with("400 Bad Request: net.net0: node pve2 refused host-tunnel (invalid format - invalid key in comma-separated list property: host-tunnel): its qemu-server is older than 9.1.18"),
            "{got}"
        );
        assert!(
            got.ends_with("this call changed nothing - {'memory': 'value must have a minimum value of 16'}"),
            "{got}"
        );
        // (status, errors): answers about something else stay as PVE gave them.
        let others = [
            (
                400,
                serde_json::json!({"memory": "value must have a minimum value of 16"}),
            ),
            (500, serde_json::json!({"net0": refused})),
        ];
        for (status, errs) in others {
            let e = ApiError::http(status, "Parameter verification failed.", errors(errs));
            let want = e.to_string();
            assert_eq!(newer_keys_refused(e, &host_tunnel(), "pve2").to_string(), want);
        }
    }

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
