//! `state: absent`: the file removed from the storage (`DELETE .../content/{volume}`,
//! a PVE task since PVE 7, awaited).

use std::time::{Duration, Instant};

use ferrox_ansible::protocol::{Failure, Output};
use ferrox_pve_client::tasks;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::driver::{Cx, Decided, Guard, Outcome, Prediction, Subject, Task};

use crate::task::TemplateTask;
use crate::{api, Context};

/// `state: absent` of one file.
pub(crate) struct Absent<'t> {
    task: &'t TemplateTask,
    volid: String,
    subject: String,
}

impl<'t> Absent<'t> {
    pub(crate) fn of(task: &'t TemplateTask) -> Self {
        Absent {
            task,
            volid: task.volid(task.name.as_deref().unwrap_or_default()),
            subject: task.subject(),
        }
    }

    fn ctx<'c>(&'c self, cx: &Cx<'c>) -> Context<'c> {
        Context {
            client: cx.client,
            task: self.task,
        }
    }

    fn output(&self, cx: &Cx<'_>, changed: bool) -> Output {
        let msg = match changed {
            true => format!("template with volid={} deleted", self.volid),
            false => format!("template with volid={} is already deleted", self.volid),
        };
        self.ctx(cx).output(changed, msg, &self.volid)
    }
}

/// Whether the storage lists the file.
pub(crate) struct Listed(bool);

impl Decided for Listed {
    fn changes(&self) -> bool {
        self.0
    }
}

impl Task for Absent<'_> {
    type Seen = Listed;
    type Plan = Listed;
    /// The deletion task's warnings.
    type Done = Vec<String>;

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Listed, Failure> {
        let task = self.task;
        let listed = api::listing(cx.client, &task.node, &task.storage, task.content)
            .map_err(|e| Failure::new(format!("Failed to retrieve template '{}': {e}", self.volid)))?;
        Ok(Listed(listed.iter().any(|s| s.volid == self.volid)))
    }

    fn plan(&self, seen: &Listed) -> Result<Listed, Failure> {
        Ok(Listed(seen.0))
    }

    fn guard<'s>(&'s self, _: &'s Listed, _: &Listed) -> Guard<'s> {
        Guard {
            subject: Subject::Named(&self.subject),
            lock: None,
            writes: vec![Write::RemoveFile {
                storage: self.task.storage.clone(),
            }],
        }
    }

    fn predict(&mut self, cx: &mut Cx<'_>, _: &Listed, _: &Listed) -> Result<Prediction, Failure> {
        Ok(Prediction {
            effects: vec![self.ctx(cx).effect(&self.volid, None, false, true)],
            warnings: Vec::new(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, _: &Listed, _: &Listed) -> Result<Vec<String>, Failure> {
        let name = self.task.name.as_deref().unwrap_or_default();
        remove(&self.ctx(cx), &self.volid)
            .map_err(|f| Failure::new(format!("deleting of template {name} failed with exception: {}", f.msg)))
    }

    fn report(self, cx: &mut Cx<'_>, _: &Listed, _: &Listed, outcome: Outcome<Vec<String>>) -> Result<Output, Failure> {
        let changed = !matches!(outcome, Outcome::Unchanged);
        if let Outcome::Done(warnings) = outcome {
            for w in warnings {
                cx.warn(w);
            }
        }
        Ok(self.output(cx, changed))
    }
}

/// Deletes the file and waits until the storage no longer lists it: the task PVE
/// answers with is awaited (its warnings returned); an older PVE that answers `null`
/// deleted it already.
pub(crate) fn remove(ctx: &Context<'_>, volid: &str) -> Result<Vec<String>, Failure> {
    let task = ctx.task;
    let started = Instant::now();
    let data = ctx
        .client
        .delete(&api::content_path(&task.node, &task.storage, volid), &[])
        .map_err(|e| Failure::new(e.to_string()))?;
    let warnings = match data.as_str().filter(|s| s.starts_with("UPID:")) {
        Some(upid) => tasks::wait(ctx.client, upid, task.timeout.saturating_sub(started.elapsed()))
            .map_err(|e| Failure::new(e.to_string()))?
            .result_warnings(),
        None => Vec::new(),
    };
    while started.elapsed() < task.timeout {
        let listed = api::listing(ctx.client, &task.node, &task.storage, task.content)
            .map_err(|e| Failure::new(e.to_string()))?;
        if !listed.iter().any(|s| s.volid == volid) {
            return Ok(warnings);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    Err(Failure::new("Reached timeout while waiting for deleting template."))
}
