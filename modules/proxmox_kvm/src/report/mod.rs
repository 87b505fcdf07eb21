//! The results: from what was decided, what the execution found out and what was
//! observed, the `Output` 1.6 returned (message, `vmid`, `status`, `changes`, `pending`,
//! `actions`, the diff).
//!
//! - [`power`]: the power states, `current`, `template`, `absent`.
//! - [`config_keys`]: `delete` and `revert`.
//! - [`migrate`]: `migrate: true`.
//! - [`update`]: `present` on an existing VM (left alone, up to date, updated), and the
//!   `mac` and `devices` of a VM's config (also a create's and a clone's).

pub(crate) mod config_keys;
pub(crate) mod migrate;
pub(crate) mod power;
pub(crate) mod update;

#[cfg(test)]
mod power_tests;
