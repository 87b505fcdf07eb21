//! The task's options read once, through [`Reader`], into a typed task (defaults come
//! from the declaration only). A snapshot name Proxmox VE would refuse fails here,
//! before the cluster is asked anything.

use ferrox_ansible::options::read::Reader;
use ferrox_ansible::options::Params;
use ferrox_pve_rules::snapshot;

use crate::options::{self, State};

#[derive(Debug, Clone)]
pub(crate) struct SnapTask {
    pub(crate) vmid: Option<u32>,
    pub(crate) hostname: Option<String>,
    pub(crate) state: State,
    pub(crate) snapname: String,
    pub(crate) description: Option<String>,
    pub(crate) vmstate: bool,
    pub(crate) force: bool,
    pub(crate) retention: usize,
    pub(crate) start: bool,
    pub(crate) timeout_secs: u64,
}

impl SnapTask {
    pub(crate) fn from_params(params: &Params) -> Result<SnapTask, String> {
        let opts = options::options();
        let r = Reader::new(params.clone(), &opts);
        Self::read(&r)
    }

    fn read(r: &Reader<'_>) -> Result<SnapTask, String> {
        let state = r.choice::<State>("state");
        let snapname = r.str_or_default("snapname");
        let vmid = r.vmid("vmid")?;
        let hostname = r.non_empty("hostname");
        let description = r.non_empty("description");
        let vmstate = r.bool_or_default("vmstate");
        let force = r.bool_or_default("force");
        let start = r.bool_or_default("start");
        // The declaration bounds both (`retention` at least 0, `timeout` at least 1).
        let retention = usize::try_from(r.int_or_default("retention")).unwrap_or_default();
        let timeout_secs = r.int_or_default("timeout").max(1).unsigned_abs();
        if let Some(why) = snapshot::name_refusal(&snapname, state == State::Present) {
            return Err(format!(
                "snapname {snapname:?}: Proxmox VE refuses it ({why}); a snapshot name starts with a letter, continues with letters, digits, '-' or '_', has at most {} characters, and is not 'current' or 'pending'",
                snapshot::NAME_MAX
            ));
        }
        Ok(SnapTask {
            vmid,
            hostname,
            state,
            snapname,
            description,
            vmstate,
            force,
            retention,
            start,
            timeout_secs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// Options accepted for compatibility that change nothing: only the declaration's
    /// rules look at them.
    const ACCEPTED_ONLY: &[&str] = &["unbind"];

    fn read(args: Value) -> (Result<SnapTask, String>, Vec<&'static str>) {
        let opts = options::options();
        let r = Reader::new(Params::with_defaults(&opts, &args), &opts);
        let task = SnapTask::read(&r);
        (task, r.unread())
    }

    #[test]
    fn every_declared_option_of_the_module_is_read() {
        let (task, unread) = read(json!({"vmid": 100}));
        assert!(task.is_ok());
        let unread: Vec<&str> = ferrox_run::connection::task_options_unread(unread)
            .into_iter()
            .filter(|n| !ACCEPTED_ONLY.contains(n))
            .collect();
        assert!(unread.is_empty(), "options without a reader: {unread:?}");
    }

    #[test]
    fn unset_options_take_the_declared_defaults() {
        let (task, _) = read(json!({"hostname": "web"}));
        let task = task.unwrap();
        assert_eq!(task.state, State::Present);
        assert_eq!(task.snapname, "ansible_snap");
        assert_eq!((task.retention, task.timeout_secs), (0, 30));
        assert_eq!((task.vmid, task.hostname.as_deref()), (None, Some("web")));
        assert!(!task.vmstate && !task.force && !task.start);
    }

    #[test]
    fn a_vmid_out_of_range_is_refused_naming_the_option() {
        let (task, _) = read(json!({"vmid": 99}));
        assert_eq!(
            task.unwrap_err(),
            "vmid must be a VMID between 100 and 999999999, got: 99"
        );
        let (task, _) = read(json!({"vmid": 0, "hostname": "web"}));
        assert_eq!(task.unwrap().vmid, None);
    }
}
