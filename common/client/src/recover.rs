//! After a write whose answer was lost (the request went out, no answer came back): read
//! the cluster to learn what Proxmox VE did, instead of failing or posting blindly again.
//!
//! The pieces every module combines per operation: find the task this client started
//! (`GET /nodes/{node}/tasks?source=all&typefilter=…&vmid=…&since=…`, own user and token,
//! not a UPID this client was already answered with), wait for it, and word the warning
//! that says what was recovered. Re-reading the config and re-planning is the module's
//! part; the config `digest` keeps a change from being applied twice.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::client::{ApiError, Client};
use crate::tasks::{self, TaskDone, TaskError};

/// Seconds subtracted from the send time when asking for tasks "since": the node's clock
/// and ours may differ a little (PVE nodes run NTP; so should the controller).
const CLOCK_SLACK_SECS: u64 = 30;
/// How often, and how far apart, the task list is read before concluding that no task was
/// started (PVE registers a worker before it answers, so the first read nearly always tells).
const FIND_ATTEMPTS: u32 = 3;
const FIND_PAUSE: Duration = Duration::from_millis(300);
/// How often an ambiguous write is re-planned and sent again before giving up.
pub const MAX_RESENDS: u32 = 3;

/// Epoch seconds now: take it just before sending a write that may need recovering.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// One entry of the node's task list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedTask {
    /// The task's UPID.
    pub upid: String,
    /// The task's id (for a VM's tasks, its vmid).
    pub id: String,
    /// The user that started it.
    pub user: String,
    /// The API token that started it, if one did.
    pub tokenid: Option<String>,
    /// When it started, in epoch seconds.
    pub starttime: u64,
}

/// The tasks of a `GET /nodes/{node}/tasks` answer (unknown keys ignored).
pub fn parse_task_list(data: &Value) -> Vec<ListedTask> {
    let Some(items) = data.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|t| {
            let text = |k: &str| match t.get(k) {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            };
            Some(ListedTask {
                upid: text("upid")?,
                id: text("id").unwrap_or_default(),
                user: text("user").unwrap_or_default(),
                tokenid: text("tokenid"),
                starttime: text("starttime").and_then(|s| s.parse().ok()).unwrap_or(0),
            })
        })
        .collect()
}

/// Which of `listed` this client may have started and not heard of: same user and token,
/// started at or after `since` (less the clock slack), id accepted, UPID not `known`.
pub fn own_unknown(
    listed: &[ListedTask],
    owner: &(String, Option<String>),
    since: u64,
    id_matches: &dyn Fn(&str) -> bool,
    known: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    listed
        .iter()
        .filter(|t| t.user == owner.0 && t.tokenid == owner.1)
        .filter(|t| t.starttime + CLOCK_SLACK_SECS >= since)
        .filter(|t| id_matches(&t.id))
        .filter(|t| !known(&t.upid))
        .map(|t| t.upid.clone())
        .collect()
}

/// What a search for the lost call's task is about.
pub struct Search<'a> {
    /// The node whose task list is searched.
    pub node: &'a str,
    /// Task type (`qmcreate`, `qmconfig`, `qmclone`, `qmmove`, `resize`, `qmdestroy`).
    pub kind: &'a str,
    /// The `vmid` filter (the task's id must equal it unless `id_matches` says otherwise).
    pub vmid: u32,
    /// When the lost call was sent ([`now`]).
    pub since: u64,
}

/// This client's unknown tasks matching `search`, newest first (PVE lists them so).
pub fn find(client: &Client, search: &Search, id_matches: &dyn Fn(&str) -> bool) -> Result<Vec<String>, ApiError> {
    let since = search.since.saturating_sub(CLOCK_SLACK_SECS);
    let query = [
        ("source", "all".to_string()),
        ("typefilter", search.kind.to_string()),
        ("vmid", search.vmid.to_string()),
        ("since", since.to_string()),
        ("limit", "50".to_string()),
    ];
    let listed = parse_task_list(&client.get(&format!("/nodes/{}/tasks", search.node), &query)?);
    Ok(own_unknown(
        &listed,
        &client.task_owner(),
        search.since,
        id_matches,
        &|u| client.knows_upid(u),
    ))
}

/// Looks for the task of the lost call a few times; `None` when none was started.
pub fn find_one(client: &Client, search: &Search) -> Result<Option<String>, ApiError> {
    let vmid = search.vmid.to_string();
    for attempt in 1..=FIND_ATTEMPTS {
        if let Some(upid) = find(client, search, &|id| id == vmid)?.into_iter().next() {
            return Ok(Some(upid));
        }
        if attempt < FIND_ATTEMPTS {
            std::thread::sleep(FIND_PAUSE);
        }
    }
    Ok(None)
}

/// Finds the lost call's task and waits for it: `Ok(Some(done))` when it ran,
/// `Ok(None)` when no task was started, the task's own failure otherwise.
pub fn find_and_wait(client: &Client, search: &Search, budget: Duration) -> Result<Option<TaskDone>, TaskError> {
    match find_one(client, search)? {
        Some(upid) => tasks::wait(client, &upid, budget).map(Some),
        None => Ok(None),
    }
}

/// The warning a recovered call leaves in the result: what was lost, what was found.
pub fn warning(lost: &ApiError, found: &str) -> String {
    format!("{lost}. Recovered by reading the cluster: {found}.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn owner() -> (String, Option<String>) {
        ("ansible@pve".into(), Some("automation".into()))
    }

    #[test]
    fn task_lists_parse_with_numbers_as_strings_and_unknown_keys() {
        let data = json!([
            {"upid": "UPID:pve1:1:2:3:qmcreate:101:ansible@pve!automation:", "id": "101", "user": "ansible@pve",
             "tokenid": "automation", "starttime": 1700000000, "status": "RUNNING", "pstart": 5, "new-key": true},
            {"upid": "UPID:pve1:1:2:4:qmcreate:102:root@pam:", "id": 102, "user": "root@pam", "starttime": "1700000001"},
            {"no-upid": 1}
        ]);
        let t = parse_task_list(&data);
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].id.as_str(), t[0].tokenid.as_deref(), t[0].starttime),
            ("101", Some("automation"), 1_700_000_000)
        );
        assert_eq!(
            (t[1].id.as_str(), t[1].tokenid.as_deref(), t[1].starttime),
            ("102", None, 1_700_000_001)
        );
        assert!(parse_task_list(&json!(null)).is_empty());
    }

    #[test]
    fn only_own_recent_unknown_tasks_count() {
        let task = |upid: &str, user: &str, tok: Option<&str>, start: u64, id: &str| ListedTask {
            upid: upid.into(),
            id: id.into(),
            user: user.into(),
            tokenid: tok.map(str::to_string),
            starttime: start,
        };
        let since = 1_700_000_100;
        let listed = vec![
            task("mine", "ansible@pve", Some("automation"), since + 1, "101"),
            task("other-user", "root@pam", None, since + 1, "101"),
            task("other-token", "ansible@pve", Some("readonly"), since + 1, "101"),
            task("user-without-token", "ansible@pve", None, since + 1, "101"),
            task("old", "ansible@pve", Some("automation"), since - 31, "101"),
            task("skewed", "ansible@pve", Some("automation"), since - 30, "101"),
            task("known", "ansible@pve", Some("automation"), since + 2, "101"),
            task("other-vm", "ansible@pve", Some("automation"), since + 2, "102"),
        ];
        let found = own_unknown(&listed, &owner(), since, &|id| id == "101", &|u| u == "known");
        assert_eq!(found, vec!["mine", "skewed"]);
    }

    #[test]
    fn the_warning_says_what_was_lost_and_found() {
        let lost = ApiError::other(
            crate::client::ApiErrorKind::Dropped,
            "POST /nodes/pve1/qemu to https://h:8006: the connection was closed",
        );
        assert_eq!(
            warning(&lost, "VM 101 was created by task UPID:x"),
            "POST /nodes/pve1/qemu to https://h:8006: the connection was closed. Recovered by reading the cluster: VM 101 was created by task UPID:x."
        );
    }
}
