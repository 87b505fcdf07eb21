//! Reading the cluster: its guests, nodes and storages, and what a task names in it.
//!
//! - [`vm`]: the `/cluster/resources` listing; finding a VM by vmid or name, and its node.
//! - [`listing_probe`]: ruling listing entries out unread; [`flat_json`]: reading one entry's fields.
//! - [`per_node`]: by-name lookups where a node is given (one template per node, same name).
//! - [`duplicates`]: several VMs with the name a task gives: what tells them apart.
//! - [`references`]: storages, ISO images and volumes a task names, checked before any write.
//! - [`guest_net`]: a guest's addresses from its agent, per `netN` by MAC; which are usable.
//! - [`tags`]: guest tags compared as the cluster stores them (its tag-style read once).
//! - [`cloudinit`]: what a running VM's cloud-init drive lacks, as PVE lists it.

pub mod cloudinit;
pub mod duplicates;
pub mod flat_json;
pub mod guest_net;
pub mod listing_probe;
pub mod per_node;
pub mod references;
pub mod tags;
pub mod vm;
