//! Everything the ferrox.proxmox modules share, under the paths the modules used before
//! each named the layer crates it uses: a facade over the layer crates in `common/`, each
//! its own crate so that Cargo refuses a dependency cycle between layers (ARCHITECTURE.md
//! has the graph). It holds no code of its own and the layers below never see it; no
//! crate depends on it any more (ARCHITECTURE.md lists each module crate's layers, and its
//! test holds `cargo metadata` to that list). It is left for its tests (`tests/it/`), which
//! use the client and cluster crates by their own paths, until they move to those crates.
//!
//! - [`ansible`] (`ferrox-ansible`): the module protocol and the options (declared, validated, documented, read).
//! - [`api`] (`ferrox-pve-client`): the PVE REST API client, its tasks and the recovery of lost answers.
//! - [`cluster`] (`ferrox-cluster`): reading the cluster: guests, nodes, storages, and what a task names.
//! - [`pve`] (`ferrox-pve-rules`, with the tag style and cloud-init drive read by
//!   `ferrox-cluster` and the privilege gate of `ferrox-run`): PVE's rules.
//! - [`plan`] (`ferrox-dryrun`): the check-mode plan shared by the tasks of one playbook run, and the
//!   cluster seen through it.
//! - [`run`] (`ferrox-run`): what the tasks of one playbook run share through the action plugin (the
//!   plan, the name index, the login ticket), the privilege gate, and the connection options.
//!
//! A module binary is thin glue: it declares its options once
//! ([`ansible::options::ModuleSpec`]), reads them into its typed task, looks up the
//! current state through [`api::client::Client`], computes a plan, applies it unless in
//! check mode, and returns an [`ansible::protocol::Output`].

#![deny(missing_docs)]

pub use ferrox_ansible as ansible;
pub use ferrox_cluster as cluster;
pub use ferrox_dryrun as plan;
pub use ferrox_pve_client as api;
pub use ferrox_run as run;

/// PVE's rules ([`ferrox_pve_rules`]), with the parts that read the cluster
/// ([`ferrox_cluster::tags`], the cloud-init drive) or gate a task's writes
/// ([`ferrox_run::privileges`]) under the same paths.
pub mod pve {
    pub use ferrox_cluster::tags;
    pub use ferrox_pve_rules::{hotplug, pending, propstring, size, utc_time};

    /// Cloud-init keys and drives ([`ferrox_pve_rules::cloudinit`]), and the drive's
    /// listing read from the cluster.
    pub mod cloudinit {
        pub use ferrox_cluster::cloudinit::read;
        pub use ferrox_pve_rules::cloudinit::*;
    }

    /// The privileges each write needs ([`ferrox_pve_rules::privileges`]), and the
    /// gate that holds them against the caller's ([`ferrox_run::privileges`]).
    pub mod privileges {
        pub use ferrox_pve_rules::privileges::*;
        pub use ferrox_run::privileges::*;
    }
}
