//! The task's options in typed form. A snapshot name Proxmox VE would refuse fails here,
//! before the cluster is asked anything.

use ferrox_ansible::options::read::vmid_in_range;
use ferrox_ansible::options::Params;
use ferrox_pve_rules::snapshot;

/// What the task asks of the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Present,
    Absent,
    Rollback,
}

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
    pub(crate) fn from_params(p: &Params) -> Result<SnapTask, String> {
        let state = match p.str("state") {
            Some("absent") => State::Absent,
            Some("rollback") => State::Rollback,
            _ => State::Present,
        };
        let snapname = p.str("snapname").unwrap_or("ansible_snap").to_string();
        if let Some(why) = snapshot::name_refusal(&snapname, state == State::Present) {
            return Err(format!(
                "snapname {snapname:?}: Proxmox VE refuses it ({why}); a snapshot name starts with a letter, continues with letters, digits, '-' or '_', has at most {} characters, and is not 'current' or 'pending'",
                snapshot::NAME_MAX
            ));
        }
        let vmid = match p.int("vmid") {
            // 0 is 1.6's "not given".
            Some(0) | None => None,
            Some(id) => Some(vmid_in_range("vmid", id)?),
        };
        Ok(SnapTask {
            vmid,
            hostname: p.non_empty("hostname").map(str::to_string),
            state,
            snapname,
            description: p.non_empty("description").map(str::to_string),
            vmstate: p.flag("vmstate"),
            force: p.flag("force"),
            retention: usize::try_from(p.int("retention").unwrap_or(0)).unwrap_or(0),
            start: p.flag("start"),
            timeout_secs: u64::try_from(p.int("timeout").unwrap_or(30)).unwrap_or(30),
        })
    }
}
