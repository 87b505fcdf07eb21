//! Everything the ferrox.proxmox modules share, in layers:
//!
//! - [`ansible`]: the module protocol and the options (declared, validated, documented, read).
//! - [`api`]: the PVE REST API client, its tasks and the recovery of lost answers.
//! - [`cluster`]: reading the cluster: guests, nodes, storages, and what a task names.
//! - [`pve`]: PVE's rules: property strings, hotplug, cloud-init, privileges, sizes, tags.
//! - [`plan`]: the check-mode plan shared by the tasks of one playbook run, and the
//!   cluster seen through it.
//! - [`run`]: what the tasks of one playbook run share through the action plugin (the
//!   plan, the name index, the login ticket), handed over in private arguments; the
//!   protocol carries it without knowing it (no layer below depends on this one).
//!
//! A module binary is thin glue: it declares its options once
//! ([`ansible::options::ModuleSpec`]), reads them into its typed task, looks up the
//! current state through [`api::client::Client`], computes a plan, applies it unless in
//! check mode, and returns an [`ansible::protocol::Output`].
//!
//! This crate never prints except through [`ansible::protocol`], and never panics on user input.

pub mod ansible;
pub mod api;
pub mod cluster;
pub mod plan;
pub mod pve;
pub mod run;
