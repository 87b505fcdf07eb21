//! Reading the cluster: its guests, nodes and storages, and what a task names in it.
//!
//! - [`vm`]: the `/cluster/resources` listing; finding a VM by vmid or name, and its node.
//! - [`listing_probe`]: ruling listing entries out unread; [`flat_json`]: reading one entry's fields.
//! - [`per_node`]: by-name lookups where a node is given (one template per node, same name).
//! - [`duplicates`]: several VMs with the name a task gives: what tells them apart.
//! - [`references`]: storages, ISO images and volumes a task names, checked before any write.
//! - [`load`]: nodes' capacity and guests' configured sizes, from the same listing (placement).
//! - [`guest_net`]: a guest's addresses from its agent, per `netN` by MAC; which are usable.

pub mod duplicates;
pub mod flat_json;
pub mod guest_net;
pub mod listing_probe;
pub mod load;
pub mod per_node;
pub mod references;
pub mod vm;
