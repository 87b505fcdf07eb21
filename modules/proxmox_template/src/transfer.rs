//! Putting the file on the storage: a streamed multipart upload, a download the node
//! makes itself, or an appliance template; each a PVE task awaited with `tasks::wait`.
//! A task that does not finish within `timeout` is stopped, so PVE removes its partial
//! file rather than leaving it behind.

use std::fs::File;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use ferrox_ansible::options::read::Choice;
use ferrox_ansible::protocol::Failure;
use ferrox_pve_client::client::upload::FilePart;
use ferrox_pve_client::tasks::{self, TaskError};

use crate::api;
use crate::task::Source;
use crate::Context;

/// Progress of the transfer, for the result: module output reaches Ansible only when
/// the module ends, so `-v` shows it then, not while the transfer runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Progress {
    /// Bytes sent from the host the task runs on (upload) or stored by the node
    /// (download: filled in from the content read back).
    pub bytes: Option<u64>,
    /// From the first byte sent to the end of PVE's task.
    pub seconds: f64,
    /// Seconds the upload's request took (the rest is PVE's task: moving the file,
    /// checking its checksum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sending_seconds: Option<f64>,
    pub upid: String,
}

pub(crate) struct Done {
    pub progress: Progress,
    pub warnings: Vec<String>,
}

pub(crate) fn run(
    ctx: &Context<'_>,
    source: &Source,
    name: &str,
    opened: Option<(File, u64)>,
) -> Result<Done, Failure> {
    let task = ctx.task;
    let started = Instant::now();
    // pveproxy reads an upload's fields by regexes in this order (content,
    // checksum-algorithm, checksum) and refuses another (pve-http-server's
    // file_upload_multipart); download-url takes any order, and gets the same.
    let mut fields: Vec<(&str, String)> = vec![("content", task.content.name().to_string())];
    if let Some(sum) = &task.checksum {
        fields.push(("checksum-algorithm", sum.algorithm.name().to_string()));
        fields.push(("checksum", sum.value.clone()));
    }
    let (upid, bytes, sending) = match source {
        Source::Upload(path) => {
            let (mut file, len) = opened.ok_or_else(|| Failure::new("the upload's file was not opened"))?;
            let part = FilePart {
                field: "filename",
                name,
                reader: &mut file,
                len,
            };
            let (data, sent) = ctx
                .client
                .post_multipart(&api::upload_path(&task.node, &task.storage), &fields, part)
                .map_err(|e| Failure::new(format!("Uploading template {} failed with error: {e}", path.display())))?;
            (upid_of(&data)?, Some(sent.bytes), Some(sent.seconds))
        }
        Source::Download(url) => {
            fields.push(("url", url.clone()));
            fields.push(("filename", name.to_string()));
            let data = ctx
                .client
                .post(&api::download_path(&task.node, &task.storage), &fields)
                .map_err(|e| {
                    let lead = if task.checksum.is_some() {
                        "Checksum mismatch".to_string()
                    } else {
                        format!("Fetching template from url {url} failed with error")
                    };
                    Failure::new(format!("{lead}: {e}"))
                })?;
            (upid_of(&data)?, None, None)
        }
        Source::Appliance => {
            let form = [("storage", task.storage.clone()), ("template", name.to_string())];
            let data = ctx
                .client
                .post(&api::aplinfo_path(&task.node), &form)
                .map_err(|e| Failure::new(format!("Downloading template {name} failed with error: {e}")))?;
            (upid_of(&data)?, None, None)
        }
    };
    // As in 1.6, `timeout` bounds the wait for PVE's task, not the upload before it.
    let warnings = await_task(ctx, &upid, Instant::now())?;
    Ok(Done {
        progress: Progress {
            bytes,
            seconds: round(started.elapsed().as_secs_f64()),
            sending_seconds: sending.map(round),
            upid,
        },
        warnings,
    })
}

/// `download-url` with the task's checksum for a file already there: the node checks
/// the file's checksum and fetches nothing (pve-storage refuses to overwrite a file);
/// the error is PVE's, naming both checksums; `Ok`: the task's warnings.
pub(crate) fn verify_existing(ctx: &Context<'_>, url: &str, name: &str) -> Result<Vec<String>, String> {
    let task = ctx.task;
    let Some(sum) = &task.checksum else {
        return Ok(Vec::new());
    };
    let form = [
        ("content", task.content.name().to_string()),
        ("url", url.to_string()),
        ("filename", name.to_string()),
        ("checksum", sum.value.clone()),
        ("checksum-algorithm", sum.algorithm.name().to_string()),
    ];
    let started = Instant::now();
    let data = ctx
        .client
        .post(&api::download_path(&task.node, &task.storage), &form)
        .map_err(|e| e.to_string())?;
    let upid = upid_of(&data).map_err(|f| f.msg)?;
    match tasks::wait(ctx.client, &upid, task.timeout.saturating_sub(started.elapsed())) {
        Ok(done) => Ok(done.result_warnings()),
        Err(TaskError::Failed { exitstatus, .. }) => Err(exitstatus),
        Err(e) => Err(e.to_string()),
    }
}

fn upid_of(data: &Value) -> Result<String, Failure> {
    data.as_str()
        .filter(|s| s.starts_with("UPID:"))
        .map(str::to_string)
        .ok_or_else(|| Failure::new(format!("Proxmox VE answered {data} where it starts a task (a UPID)")))
}

/// Waits for the task within what is left of `timeout`; 1.6's messages for a failed
/// task and a timeout, with PVE's log. A timed-out task is stopped.
fn await_task(ctx: &Context<'_>, upid: &str, started: Instant) -> Result<Vec<String>, Failure> {
    let left = ctx.task.timeout.saturating_sub(started.elapsed());
    match tasks::wait(ctx.client, upid, left) {
        Ok(done) => Ok(done.result_warnings()),
        Err(TaskError::Failed {
            exitstatus, log_tail, ..
        }) => {
            let log: Vec<&str> = log_tail
                .iter()
                .map(String::as_str)
                .filter(|l| !l.contains(&exitstatus))
                .collect();
            let log = if log.is_empty() {
                String::new()
            } else {
                format!(" (task log: {})", log.join(" | "))
            };
            Err(Failure::new(format!(
                "Task error: {exitstatus}{log}; Proxmox VE removed the partial file"
            ))
            .with("upid", upid))
        }
        Err(TaskError::Timeout { last_line, .. }) => {
            let stopped = ctx
                .client
                .delete(&format!("/nodes/{}/tasks/{upid}", ctx.task.node), &[])
                .is_ok();
            let what = if stopped {
                "the task was stopped and Proxmox VE removes its partial file"
            } else {
                "stopping the task failed: it still runs on the node"
            };
            Err(Failure::new(format!(
                "Reached timeout while waiting for uploading/downloading template. Last line in task before timeout: {}; {what}. Raise timeout (now {}s) for large files",
                last_line.unwrap_or_default(),
                ctx.task.timeout.as_secs()
            ))
            .with("upid", upid))
        }
        Err(TaskError::Api(e)) => Err(Failure::new(format!("Waiting for task {upid} failed: {e}")).with("upid", upid)),
    }
}

fn round(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}
