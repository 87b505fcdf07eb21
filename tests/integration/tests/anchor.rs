//! The anchor: community.proxmox 1.6.0 — code no one here wrote — run unchanged through
//! ansible-playbook against the simulator must get the results it gets from a real PVE
//! (its documented messages, `changed`, `status`, `mac`/`devices`, and its known defects).
//! A failure here means the simulator diverges from PVE, unless the documented behaviour of
//! community.proxmox proves otherwise.
//!
//! Needs `tests/anchor/setup` (run automatically; fetches the collection from PyPI once)
//! and the venv's ansible-playbook with proxmoxer (`<repo>/.venv`). The playbooks are in
//! `tests/anchor/`; each test runs one against its own simulator.

#[path = "anchor/support.rs"]
mod support;

#[path = "anchor/clone.rs"]
mod clone;
#[path = "anchor/disk.rs"]
mod disk;
#[path = "anchor/disk_format.rs"]
mod disk_format;
#[path = "anchor/disk_moves.rs"]
mod disk_moves;
#[path = "anchor/faults.rs"]
mod faults;
#[path = "anchor/kvm.rs"]
mod kvm;
#[path = "anchor/kvm_config.rs"]
mod kvm_config;
#[path = "anchor/kvm_edges.rs"]
mod kvm_edges;
#[path = "anchor/lag.rs"]
mod lag;
#[path = "anchor/nic.rs"]
mod nic;
#[path = "anchor/paused.rs"]
mod paused;
#[path = "anchor/running.rs"]
mod running;
#[path = "anchor/vm_info.rs"]
mod vm_info;
