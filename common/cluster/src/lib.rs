//! Reading the cluster: its guests, nodes and storages, and what a task names in it.
//!
//! A layer of its own because every module reads the cluster the same way, and these
//! reads are where the API-call budget is spent: the client stays a generic client, the
//! rules stay pure, and this crate is where the two meet in a read. It knows neither the
//! run layer nor the dry run: in a check run its reads go through the client's
//! `ReadThrough` unaware, and it knows nothing of Ansible: what a check run may take as
//! existing is its own [`assume::Assume`], which the run layer reads from the task.
//!
//! Invariants: a lookup costs one `GET /cluster/resources`, decoded as it streams and
//! keeping only the fields and guests used (entries ruled out unread by
//! [`listing_probe`]); a lookup by name finds QEMU VMs only, by exact name, and fails
//! when several share it; what a task names on a storage is checked before any write.
//!
//! Entry points: [`vm::read`] with a [`vm::ListingQuery`] (for a task's VM,
//! [`vm::ListingQuery::lookup`] with a [`listing_probe::LookupTargets`]), then
//! [`vm::by_vmid`] or [`per_node::qemu_by_name_on`] (the run layer's `vm_task::locate_qemu`
//! finds a task's VM with them, [`duplicates::explain`] wording a shared name);
//! [`references::verify_volumes`]; [`guest_net`] for a guest's addresses.
//!
//! - [`vm`]: the `/cluster/resources` listing; finding a VM by vmid or name, and its node.
//! - [`listing_probe`]: ruling listing entries out unread; [`flat_json`]: reading one entry's fields.
//! - [`per_node`]: by-name lookups where a node is given (one template per node, same name).
//! - [`load`]: nodes' capacity and guests' configured sizes, from the same listing (placement).
//! - [`duplicates`]: several VMs with the name a task gives: what tells them apart.
//! - [`references`]: storages, ISO images and volumes a task names, checked before any write.
//! - [`guest_net`]: a guest's addresses from its agent, per `netN` by MAC; which are usable.
//! - [`tags`]: guest tags compared as the cluster stores them (its tag-style read once).
//! - [`cloudinit`]: what a running VM's cloud-init drive lacks, as PVE lists it.
//! - [`pools`]: resource pools: the API form that names one, a pool read with its
//!   members, the pools listed, a missing pool told from other failures.

#![deny(missing_docs)]

pub mod assume;
pub mod cloudinit;
pub mod duplicates;
pub mod flat_json;
pub mod guest_net;
pub mod listing_probe;
pub mod load;
pub mod options;
pub mod per_node;
pub mod pools;
pub mod references;
pub mod tags;
pub mod vm;
