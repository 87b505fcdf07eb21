//! What every step of a run shares, below the steps: [`Run`], what each step is handed
//! (the task, the client, the privilege gate, the tag comparison), [`Op`], what every
//! task of the driver holds (the task and the tag comparison), and [`Learned`], what
//! the run learns as it goes and hands back to the module, failed or not. The run
//! (`lib.rs`) makes them; [`crate::observe`], [`crate::execute`](mod@crate::execute),
//! [`crate::placement`] and the drivers read them, so none of them imports the file that
//! calls it. How an [`Op`] predicts and carries out a plan ([`Op::predict`],
//! [`Op::carry_out`]) is written in `execute/mod.rs`, above this file.

use ferrox_cluster::tags::TagCase;
use ferrox_cluster::vm::Cluster;
use ferrox_pve_client::client::Client;
use ferrox_run::driver::Cx;
use ferrox_run::privileges::Gate;

use crate::task::KvmTask;

/// What every step of a run is handed: the task, the client, the privilege gate (what
/// PVE will refuse, known before the first write; one call, made when needed) and the
/// cluster's tag comparison. What the run learns as it goes is passed to the steps that
/// add to it: the cluster's [`crate::observe::listing::Listing`] and the [`Learned`].
pub(crate) struct Run<'a> {
    pub(crate) client: &'a Client,
    pub(crate) gate: &'a Gate<'a>,
    pub(crate) task: &'a KvmTask,
    /// How the cluster compares tags: its `tag-style`, read the first time a comparison
    /// needs it (tags that differ in case alone), so a run that never needs it never
    /// reads it.
    pub(crate) tag_case: TagCase<'a>,
}

impl<'a> Run<'a> {
    /// What the steps of a driver task on `cx` are handed: `task`, and the run's tag
    /// comparison (one read of the cluster's setting for every task of the run).
    pub(crate) fn on(cx: &'a Cx<'_>, task: &'a KvmTask, tag_case: &TagCase<'a>) -> Run<'a> {
        Run {
            client: cx.client,
            gate: &cx.gate,
            task,
            tag_case: tag_case.clone(),
        }
    }
}

/// What every task of the driver holds of the run: the task, and the run's tag
/// comparison. Its steps are handed the [`Run`] it makes on the driver's context; its
/// check mode predicts a plan with [`Op::predict`] and a real run carries the plan out
/// with [`Op::carry_out`], the warnings going to the context.
pub(crate) struct Op<'a> {
    pub(crate) task: &'a KvmTask,
    pub(crate) tag_case: TagCase<'a>,
}

impl Op<'_> {
    /// What the steps of the task on `cx` are handed.
    pub(crate) fn run<'r>(&'r self, cx: &'r Cx<'_>) -> Run<'r> {
        Run::on(cx, self.task, &self.tag_case)
    }
}

/// What a run learns as it goes and hands back to the module, failed or not.
#[derive(Default)]
pub(crate) struct Learned {
    pub(crate) warnings: Vec<String>,
    /// A listing made after the start (a create's or clone's, showing the new VM) with
    /// when it was made: the run's name index.
    pub(crate) listed: Option<(Cluster, std::time::Instant)>,
}
