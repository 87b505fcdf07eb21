//! PVE's rules, as its source states them: what PVE accepts, refuses, applies at once or
//! keeps pending. Pure where it can be; a rule that needs the cluster reads it through
//! the client.
//!
//! - [`propstring`]: property strings (`virtio=..,bridge=vmbr0`): parse, format, compare; the schema's keys.
//! - [`hotplug`]: which changes a running VM takes at once and which stay pending.
//! - [`cloudinit`]: what a running VM's cloud-init drive lacks (`GET .../cloudinit`).
//! - [`privileges`]: what PVE will refuse a plan (privileges per write, key and path).
//! - [`size`]: disk sizes as PVE spells them; [`tags`]: tags compared as the cluster stores them.
//! - [`civil`]: PVE's epoch seconds as calendar dates.

pub mod civil;
pub mod cloudinit;
pub mod hotplug;
pub mod privileges;
pub mod propstring;
pub mod size;
pub mod tags;
