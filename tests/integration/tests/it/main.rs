//! The end-to-end tests, one module per concern (see the crate doc of
//! `ferrox_integration` for the harness), in one test binary: each file was its own
//! binary linking the simulator and the client, and linking them dominated incremental
//! test builds. Run one concern with `cargo test -p ferrox-integration ticket::` (or
//! `cargo nextest run -p ferrox-integration -E 'test(/^ticket::/)'`).
//!
//! Shared by several concerns: `anchor::support` (running community.proxmox 1.6.0's
//! playbooks) and `anchor::operations`, `disk_scenario` (check mode, real run, again),
//! `kvm_support` (whole playbooks with their own inventory).

mod kvm_support;

mod access;
mod access_playbook;
mod anchor;
mod anchor_compare;
mod api_calls;
mod api_calls_lifecycle;
mod architecture;
mod auth;
mod broadcast_lag;
mod code_shape;
mod collection;
mod disk;
mod disk_scenario;
mod driver;
mod dry_run_parity;
mod golden_image;
mod guest;
mod harness;
mod hotplug_agreement;
mod inputs;
mod inventory;
mod kvm_clone;
mod kvm_compat;
mod kvm_faults;
mod kvm_ha;
mod kvm_playbooks;
mod kvm_present;
mod kvm_pve9;
mod kvm_states;
mod kvm_traps;
mod kvm_vmid_range;
mod local_mode;
mod multinode;
mod name_index;
mod nic;
mod not_acted_on;
mod offline_node;
mod parity;
mod placement;
mod plan;
mod platform_aarch64;
mod pool_compat;
mod pool_plan;
mod pool_target_2_0;
mod privileges;
mod privileges_matrix;
mod production;
mod recover;
mod references;
mod rehearsal;
mod shim;
mod snap;
mod snap_rollback;
mod snapshots;
mod soak;
mod tag_rules;
mod task_warnings;
mod template;
mod template_compat;
mod ticket;
mod ticket_otp;
mod twice_at_once;
mod vm_info;
