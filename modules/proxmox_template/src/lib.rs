//! The `ferrox.proxmox.proxmox_template` module: a file on a storage — an ISO image, a
//! container template, or a disk image to import — uploaded from the host the task runs
//! on (streamed), downloaded by the node itself from a URL, or removed.
//!
//! Flow: read the task ([`task`]), then run it on the task driver (`ferrox_run::driver`):
//! for a present file ([`present`]) the download's privileges first (the node's
//! `query-url-metadata` demands them), then the storage takes the content type, the URL
//! against `query-url-metadata`, `import` against the node's version; find the file in the
//! storage's content listing; the privileges PVE will demand; then report (check mode, or
//! nothing to do) or transfer and await the PVE task ([`transfer`]). [`absent`] removes a
//! file.

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
use ferrox_run::driver;

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
    match task.state {
        State::Present => driver::run(m, present::Present::of(&task)?),
        State::Absent => driver::run(m, absent::Absent::of(&task)),
    }
}

/// What the steps share: the run's client and the task.
pub(crate) struct Context<'a> {
    pub client: &'a Client,
    pub task: &'a TemplateTask,
}

impl TemplateTask {
    /// `storage local on node pve1`, for messages.
    pub(crate) fn subject(&self) -> String {
        format!("storage {} on node {}", self.storage, self.node)
    }
}

impl Context<'_> {
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
