//! The `ferrox.proxmox.proxmox_template` module: a file on a storage — an ISO image, a
//! container template, or a disk image to import — uploaded from the host the task runs
//! on (streamed), downloaded by the node itself from a URL, or removed.
//!
//! Flow: read the task ([`task`]); for a present file check the storage takes the
//! content type, `import` against the node's version, the URL against the node's
//! `query-url-metadata` ([`present`]); find the file in the storage's content listing;
//! check the privileges PVE will demand; then report (check mode, or nothing to do) or
//! transfer and await the PVE task ([`transfer`]). [`absent`] removes a file.

mod absent;
mod api;
mod checks;
mod choices;
mod docs;
mod options;
mod present;
mod task;
mod transfer;

use ferrox_ansible::options::{ModuleSpec, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_dryrun::Effect;
use ferrox_pve_client::client::Client;
use ferrox_pve_rules::privileges::Write;
use ferrox_run::connection::{ConnectionParams, FromOptions};
use ferrox_run::privileges::Gate;
use ferrox_run::SharedRunState;

use task::{State, TemplateTask};

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_template",
        short_description: "Management of OS templates, ISO images and import images in Proxmox VE",
        description: docs::description(),
        version_added: "0.2.0",
        options: options::options(),
        rules: options::rules(),
        check_mode: (
            Support::Full,
            "Asks the node whether the URL answers, checks the storage and the privileges, and reports exactly what a real run would do, writing nothing. Later tasks of the same check run see the file on the storage.",
        ),
        diff_mode: (Support::None, "The file is reported in RV(volid); there is no diff."),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_disk", "ferrox.proxmox.proxmox_kvm"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let task = TemplateTask::from_params(&m.params)?;
    let conn = ConnectionParams::from_params(&m.params)?;
    let client = m.connect(&conn)?;
    client.set_retry_budget(task.timeout);
    let ctx = Context {
        client: &client,
        gate: Gate::new(&client, &conn),
        task: &task,
    };
    match task.state {
        State::Present => present::run(m, &ctx),
        State::Absent => absent::run(m, &ctx),
    }
}

/// What a run shares.
pub(crate) struct Context<'a> {
    pub client: &'a Client,
    /// The caller's privileges, read once for every check of the run.
    pub gate: Gate<'a>,
    pub task: &'a TemplateTask,
}

impl Context<'_> {
    /// `storage local on node pve1`, for messages.
    pub(crate) fn subject(&self) -> String {
        format!("storage {} on node {}", self.task.storage, self.task.node)
    }

    /// PVE's privilege checks of `writes`, before the first of them (check mode too).
    pub(crate) fn require(&self, m: &mut Module, writes: &[Write]) -> Result<(), Failure> {
        self.gate.require_for(m, &self.subject(), writes)
    }

    /// The file's fate for the run's plan (check mode): later tasks see it listed.
    pub(crate) fn effect(&self, volid: &str, size: Option<u64>, shared: bool, removed: bool) -> Effect {
        Effect::Volume {
            node: self.task.node.clone(),
            storage: self.task.storage.clone(),
            volid: volid.to_string(),
            content: ferrox_ansible::options::read::Choice::name(self.task.content).to_string(),
            size,
            shared,
            removed,
        }
    }

    /// community.proxmox 1.6's result, with the volume and node.
    pub(crate) fn output(&self, changed: bool, msg: String, volid: &str) -> Output {
        Output::new(changed, msg)
            .with("volid", volid)
            .with("node", &self.task.node)
            .with("storage", &self.task.storage)
    }
}
