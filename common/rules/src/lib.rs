//! PVE's rules, as its source states them: what PVE accepts, refuses, applies at once or
//! keeps pending.
//!
//! A layer of its own because these are pure tables and functions, testable against PVE's
//! source and schema without a cluster: this crate does no I/O and knows neither the
//! client, nor Ansible, nor the dry run. A rule that needs the cluster (the tag style,
//! a cloud-init drive, the caller's privileges) is read by the layers above and handed in.
//!
//! - [`boot`]: the boot order as qemu-server keeps it when devices go.
//! - [`propstring`]: property strings (`virtio=..,bridge=vmbr0`): parse, format, compare; the schema's keys.
//! - [`hotplug`]: which changes a running VM takes at once and which stay pending.
//! - [`pending`]: the `/pending` listing, its `delete` field read as PVE defines it.
//! - [`cloudinit`]: cloud-init keys, and what a running VM's drive lacks (its listing parsed).
//! - [`privileges`]: the privileges PVE checks for each write (per key and path), and the table of them.
//! - [`size`]: disk sizes as PVE spells them.
//! - [`snapshot`]: the snapshot names PVE takes, and which volumes can be snapshotted.
//! - [`unknown`]: `(known after apply)`, the dry run's marker for values only PVE decides.
//! - [`utc_time`]: PVE's epoch seconds as calendar dates.
//!
//! Invariants: a rule is written once and read by every module and by check mode alike
//! (what stays pending, what a write needs), so a prediction and the real run cannot
//! disagree; the property-string tables are rendered from PVE's API schema
//! (`propstring/generate.rs`) and a test fails when they are stale.
//!
//! Entry points: [`propstring::parse_config_value`] and [`propstring::differing_keys`],
//! [`hotplug::stays_pending`], [`privileges::needs::needs`] (and the least-privilege guide's table,
//! [`privileges::table::markdown`]), [`size::parse`].

#![deny(missing_docs)]

/// ACL paths as pve-access-control normalises and accepts them.
pub mod acl_path;
pub mod boot;
pub mod cloudinit;
pub mod hotplug;
pub mod pending;
pub mod privileges;
pub mod propstring;
pub mod size;
pub mod snapshot;
pub mod unknown;
mod unknown_marker;
pub mod utc_time;
