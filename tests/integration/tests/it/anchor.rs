//! The anchor: community.proxmox 1.6.0 — code no one here wrote — run unchanged through
//! ansible-playbook against the simulator must get the results it gets from a real PVE
//! (its documented messages, `changed`, `status`, `mac`/`devices`, and its known defects).
//! A failure here means the simulator diverges from PVE, unless the documented behaviour of
//! community.proxmox proves otherwise.
//!
//! Needs `tests/anchor/setup` (run automatically; fetches the collection from PyPI once)
//! and the venv's ansible-playbook with proxmoxer (`<repo>/.venv`). The playbooks are in
//! `tests/anchor/`; each test runs one against its own simulator.

pub(crate) mod operations;
pub(crate) mod support;

mod clone;
mod disk;
mod disk_format;
mod disk_moves;
mod faults;
mod kvm;
mod kvm_config;
mod kvm_edges;
mod lag;
mod nic;
mod paused;
mod running;
mod vm_info;
