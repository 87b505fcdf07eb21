//! The decisions of a run, made without I/O: from the typed task ([`crate::task::KvmTask`])
//! and what [`crate::observe`] read, either a refusal (`Failure`, 1.6's wording) or the
//! actions to take and what the result says. No `Client` reaches here, so each decision
//! is a table of cases (`*_tests.rs`), as `proxmox_disk`'s plan is.
//!
//! - [`power`]: the power states, `current`, `template`, `absent`.
//! - [`config_keys`]: `delete` and `revert`, one flow over the keys set or pending.
//! - [`migrate`]: `migrate: true`.

pub mod config_keys;
pub mod migrate;
pub mod power;

#[cfg(test)]
mod config_keys_tests;
#[cfg(test)]
mod migrate_tests;
#[cfg(test)]
mod power_tests;
