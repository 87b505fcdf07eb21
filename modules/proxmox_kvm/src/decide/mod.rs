//! The decisions of a run, made without I/O: from the typed task ([`crate::task::KvmTask`])
//! and what [`crate::observe`] read, either a refusal (`Failure`, 1.6's wording) or the
//! actions to take and what the result says. No `Client` reaches here, so each decision
//! is a table of cases (`*_tests.rs`), as `proxmox_disk`'s plan is. One read is left to
//! the comparison of `update` ([`update::compare`], through the library
//! [`crate::converge`]): the cluster's `tag-style`, which its `TagCase` reads once and
//! only when tags differ in case alone (read up front, it would add a call to runs that
//! never need it; the tables pass a known one).
//!
//! - [`power`]: the power states, `current`, `template`, `absent`.
//! - [`config_keys`]: `delete` and `revert`, one flow over the keys set or pending.
//! - [`migrate`]: `migrate: true`.
//! - [`create`]: `present` of a VM that does not exist: its node, form and actions.
//! - [`efi`]: `efidisk0` only with OVMF (a create's and an update's refusal).
//! - [`clone`]: a new clone: refused, or its form and actions; [`clone_route`]: a clone
//!   to another node's local storage, made on the source's node and moved.
//! - [`update`]: `present` on a VM that exists (the warnings; without `update`, left
//!   alone), with `update: true` and of a clone that exists: up to date, cloud-init
//!   changes for the guest, or the update's writes.

pub(crate) mod clone;
pub(crate) mod clone_route;
pub(crate) mod config_keys;
pub(crate) mod create;
pub(crate) mod efi;
pub(crate) mod migrate;
pub(crate) mod power;
pub(crate) mod update;

#[cfg(test)]
mod clone_tests;
#[cfg(test)]
mod config_keys_tests;
#[cfg(test)]
mod create_tests;
#[cfg(test)]
mod migrate_tests;
#[cfg(test)]
mod power_tests;
#[cfg(test)]
mod update_tests;
