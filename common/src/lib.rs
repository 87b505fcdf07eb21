//! Everything the four ferrox.proxmox modules share.
//!
//! A module binary is thin glue: it declares its options once ([`options::ModuleSpec`]),
//! hands them to [`protocol::run`], and inside its body looks up the current state
//! through [`client::Client`], computes a plan, applies it unless in check mode, and
//! returns an [`protocol::Output`].
//!
//! Sections a newcomer can name:
//! - [`protocol`]: the Ansible binary-module protocol (args file in, one JSON result out).
//! - [`options`]: option declarations, AnsibleModule-compatible validation, typed access.
//! - [`docs`]: the sidecar documentation rendered from the declarations; [`argspec`]: its
//!   argument spec (for ansible-lint and validate-modules).
//! - [`mask`]: secrets never leave the process.
//! - [`connection`]: the shared connection options and their typed form.
//! - [`client`]: the PVE REST API client (TLS, auth, retries, error texts).
//! - [`tasks`]: waiting on PVE tasks (UPIDs).
//! - [`recover`]: after a lost answer, finding out from the cluster what PVE did.
//! - [`hotplug`]: which changes a running VM takes at once and which stay pending.
//! - [`cloudinit`]: what a running VM's cloud-init drive lacks (`GET .../cloudinit`).
//! - [`guest_net`]: a guest's addresses from its agent, per `netN` by MAC; which are usable.
//! - [`vm`]: finding a VM by vmid or name, and its node.
//! - [`per_node`]: by-name lookups where a node is given (one template per node, same name).
//! - [`duplicates`]: several VMs with the name a task gives: what tells them apart, the task removing the spare.
//! - [`propstring`]: PVE property strings (`virtio=..,bridge=vmbr0`), parse, format, compare.
//! - [`size`]: disk sizes as PVE spells them.
//! - [`diff`]: before/after rendering for `--diff`.
//! - [`plan`]: the check-mode plan shared by the tasks of one playbook run, and the cluster seen through it.
//! - [`privileges`]: what PVE will refuse a plan (privileges per write, key and path), checked before any write.
//! - [`references`]: storages, ISO images and volumes a task names, checked before any write.
//! - [`python`]: Python's `repr()` of values, as the messages of AnsibleModule and 1.6 print them.
//!
//! This crate never prints except through [`protocol`], and never panics on user input.

pub mod civil;
pub mod client;
pub mod cloudinit;
pub mod connection;
pub mod diff;
pub mod argspec;
pub mod assume;
pub mod docs;
pub mod duplicates;
pub mod flat_json;
pub mod guest_net;
pub mod hotplug;
pub mod listing_probe;
pub mod mask;
pub mod options;
pub mod per_node;
pub mod plan;
pub mod privileges;
pub mod propstring;
pub mod protocol;
pub mod recover;
pub mod python;
pub mod references;
pub mod size;
pub mod tags;
pub mod tasks;
pub mod vm;
