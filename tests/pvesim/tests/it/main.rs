//! The simulator's tests, one module per concern, in one test binary: each file was its
//! own binary linking the simulator, and linking them dominated incremental test builds.
//! Run one concern with `cargo test -p pvesim -- auth::` (or `cargo nextest run -p
//! pvesim -E 'test(/^auth::/)'`).

mod common;

mod access_acl;
mod aplinfo;
mod auth;
mod cli;
mod cloudinit_drive;
mod cluster_reads;
mod content;
mod control;
mod datacenter;
mod disks;
mod download;
mod fidelity;
mod guest;
mod ha;
mod import;
mod keep_alive;
mod lxc;
mod newer_keys;
mod permissions;
mod pools;
mod request_order;
mod robustness;
mod scenario_schema;
mod snapshot_rollback;
mod snapshot_tasks;
mod snapshots_backups;
mod status_broadcast;
mod storage_state;
mod upload;
mod upload_node;
mod vm;
