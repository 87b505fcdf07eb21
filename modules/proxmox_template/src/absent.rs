//! `state: absent`: the file removed from the storage (`DELETE .../content/{volume}`,
//! a PVE task since PVE 7, awaited).

use std::time::{Duration, Instant};

use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_pve_client::tasks;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::SharedRunState;

use crate::{api, Context};

pub(crate) fn run(m: &mut Module, ctx: &Context<'_>) -> Result<Output, Failure> {
    let task = ctx.task;
    let name = task.name.clone().unwrap_or_default();
    let volid = task.volid(&name);
    let fail =
        |e: &dyn std::fmt::Display| Failure::new(format!("deleting of template {name} failed with exception: {e}"));
    let listed = api::listing(ctx.client, &task.node, &task.storage, task.content)
        .map_err(|e| Failure::new(format!("Failed to retrieve template '{volid}': {e}")))?;
    if !listed.iter().any(|s| s.volid == volid) {
        return Ok(ctx.output(false, format!("template with volid={volid} is already deleted"), &volid));
    }
    ctx.require(
        m,
        &[Write::RemoveFile {
            storage: task.storage.clone(),
        }],
    )?;
    if m.check_mode {
        m.plan_effect(ctx.effect(&volid, None, false, true));
        return Ok(ctx.output(true, format!("template with volid={volid} deleted"), &volid));
    }
    remove(ctx, &volid).map_err(|f| fail(&f.msg))?;
    Ok(ctx.output(true, format!("template with volid={volid} deleted"), &volid))
}

/// Deletes the file and waits until the storage no longer lists it: the task PVE
/// answers with is awaited; an older PVE that answers `null` deleted it already.
pub(crate) fn remove(ctx: &Context<'_>, volid: &str) -> Result<(), Failure> {
    let task = ctx.task;
    let started = Instant::now();
    let data = ctx
        .client
        .delete(&api::content_path(&task.node, &task.storage, volid), &[])
        .map_err(|e| Failure::new(e.to_string()))?;
    if let Some(upid) = data.as_str().filter(|s| s.starts_with("UPID:")) {
        tasks::wait(ctx.client, upid, task.timeout.saturating_sub(started.elapsed()))
            .map_err(|e| Failure::new(e.to_string()))?;
    }
    while started.elapsed() < task.timeout {
        let listed = api::listing(ctx.client, &task.node, &task.storage, task.content)
            .map_err(|e| Failure::new(e.to_string()))?;
        if !listed.iter().any(|s| s.volid == volid) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    Err(Failure::new("Reached timeout while waiting for deleting template."))
}
