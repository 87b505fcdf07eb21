//! The safety rules of a conformance run, applied to the cluster's guest list: only
//! QEMU VMs inside the vmid range whose name starts with the prefix are this run's to
//! change or remove; anything else in the range is foreign, and its presence stops the
//! run before it writes anything.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use ferrox_pve_client::client::Client;
use ferrox_pve_client::tasks;
use serde_json::Value;

use super::settings::Settings;

/// A guest found inside the range.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct InRange {
    pub vmid: u32,
    pub node: String,
    pub kind: String,
    pub name: String,
    pub status: String,
}

impl std::fmt::Display for InRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.name.is_empty() { "(no name)" } else { &self.name };
        write!(
            f,
            "{} {} {name} on {} ({})",
            self.kind, self.vmid, self.node, self.status
        )
    }
}

/// What the range holds: this run's VMs (leftovers of an interrupted run, or of a
/// scenario that failed before its own teardown) and foreign guests.
#[derive(Debug, Default)]
pub(super) struct Survey {
    pub ours: Vec<InRange>,
    pub foreign: Vec<InRange>,
}

/// Lists the range from `/cluster/resources` (one read).
pub(super) fn survey(client: &Client, s: &Settings) -> Result<Survey> {
    let mut data = client
        .get("/cluster/resources", &[("type", "vm".to_string())])
        .map_err(|e| anyhow::anyhow!("listing guests: {e}"))?;
    // A VM created a moment ago may be listed without its name yet: read it from its config.
    for r in data.as_array_mut().into_iter().flatten() {
        let in_range = r["vmid"]
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .is_some_and(|v| s.in_range(v));
        if in_range && r["type"] == "qemu" && r["name"].is_null() {
            let path = format!(
                "/nodes/{}/qemu/{}/config",
                r["node"].as_str().unwrap_or_default(),
                r["vmid"]
            );
            if let Ok(config) = client.get(&path, &[]) {
                r["name"] = config["name"].clone();
            }
        }
    }
    Ok(classify(&data, s))
}

pub(super) fn classify(resources: &Value, s: &Settings) -> Survey {
    let mut survey = Survey::default();
    for r in resources.as_array().into_iter().flatten() {
        let Some(vmid) = r["vmid"].as_u64().and_then(|v| u32::try_from(v).ok()) else {
            continue;
        };
        if !s.in_range(vmid) {
            continue;
        }
        let guest = InRange {
            vmid,
            node: r["node"].as_str().unwrap_or_default().to_string(),
            kind: r["type"].as_str().unwrap_or("vm").to_string(),
            name: r["name"].as_str().unwrap_or_default().to_string(),
            status: r["status"].as_str().unwrap_or("unknown").to_string(),
        };
        if guest.kind == "qemu" && guest.name.starts_with(&s.prefix) {
            survey.ours.push(guest);
        } else {
            survey.foreign.push(guest);
        }
    }
    survey.ours.sort_by_key(|g| g.vmid);
    survey.foreign.sort_by_key(|g| g.vmid);
    survey
}

/// Fails, naming every foreign guest, when the range is not the run's alone.
pub(super) fn refuse_foreign(survey: &Survey, s: &Settings) -> Result<()> {
    if survey.foreign.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = survey.foreign.iter().map(|g| format!("  {g}")).collect();
    bail!(
        "refusing to start: the vmid range {}-{} holds guests this run did not create (not QEMU VMs named {}*):\n{}\nNothing was changed. Choose a free range with FERROX_CONFORMANCE_VMID_RANGE.",
        s.range.0,
        s.range.1,
        s.prefix,
        list.join("\n")
    )
}

/// Stops and removes this run's VMs (with their disks). Each is re-checked against the
/// rules right before, so a VM renamed or replaced meanwhile is never touched.
pub(super) fn sweep(client: &Client, s: &Settings) -> Result<Vec<InRange>> {
    let mut removed = Vec::new();
    // A VM mid-task (an interrupted clone or create) is locked until its task ends:
    // survey again until the range is clean or the time is up.
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let survey = survey(client, s)?;
        if survey.ours.is_empty() {
            return Ok(removed);
        }
        let mut errors = Vec::new();
        for g in &survey.ours {
            match remove(client, g, &s.prefix) {
                Ok(()) => removed.push(g.clone()),
                Err(e) => errors.push(format!("{g}: {e}")),
            }
        }
        if !errors.is_empty() {
            if Instant::now() > deadline {
                bail!(
                    "could not remove every VM of this run within 180 s:\n  {}",
                    errors.join("\n  ")
                );
            }
            std::thread::sleep(Duration::from_secs(2));
        }
    }
}

fn remove(client: &Client, g: &InRange, prefix: &str) -> Result<()> {
    let base = format!("/nodes/{}/qemu/{}", g.node, g.vmid);
    let wait = |upid: Value| -> Result<()> {
        if let Some(upid) = upid.as_str() {
            tasks::wait(client, upid, Duration::from_secs(300)).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Ok(())
    };
    let status = client
        .get(&format!("{base}/status/current"), &[])
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if !status["name"].as_str().is_some_and(|n| n.starts_with(prefix)) {
        bail!("its name is now {}: no longer this run's, left alone", status["name"]);
    }
    if status["status"].as_str() != Some("stopped") {
        wait(
            client
                .post(&format!("{base}/status/stop"), &[])
                .map_err(|e| anyhow::anyhow!("stop: {e}"))?,
        )?;
    }
    let upid = client
        .delete(
            &base,
            &[("purge", "1".into()), ("destroy-unreferenced-disks", "1".into())],
        )
        .map_err(|e| anyhow::anyhow!("remove: {e}"))?;
    wait(upid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings() -> Settings {
        let env = |k: &str| match k {
            "PROXMOX_HOST" => Some("h".to_string()),
            "PROXMOX_USER" => Some("u@pve".into()),
            "PROXMOX_PASSWORD" => Some("p".into()),
            "FERROX_CONFORMANCE_NODE" => Some("pve1".into()),
            "FERROX_CONFORMANCE_STORAGE" => Some("local-lvm".into()),
            _ => None,
        };
        Settings::from_lookup(env).unwrap()
    }

    #[test]
    fn only_prefixed_qemu_vms_in_range_are_ours() {
        let s = settings();
        let list = json!([
            {"vmid": 100, "type": "qemu", "name": "ferroxconf-x", "node": "pve1", "status": "stopped"},
            {"vmid": 990001, "type": "qemu", "name": "ferroxconf-create", "node": "pve1", "status": "running"},
            {"vmid": 990002, "type": "qemu", "name": "db01", "node": "pve2", "status": "stopped"},
            {"vmid": 990003, "type": "lxc", "name": "ferroxconf-ct", "node": "pve1", "status": "stopped"},
            {"vmid": 990004, "type": "qemu", "node": "pve1", "status": "unknown"},
            {"vmid": 990050, "type": "qemu", "name": "other", "node": "pve1", "status": "stopped"},
        ]);
        let survey = classify(&list, &s);
        assert_eq!(survey.ours.iter().map(|g| g.vmid).collect::<Vec<_>>(), [990001]);
        assert_eq!(
            survey.foreign.iter().map(|g| g.vmid).collect::<Vec<_>>(),
            [990002, 990003, 990004]
        );
        let err = refuse_foreign(&survey, &s).unwrap_err().to_string();
        assert!(err.contains("qemu 990002 db01 on pve2"), "{err}");
        assert!(err.contains("Nothing was changed"), "{err}");
    }
}
