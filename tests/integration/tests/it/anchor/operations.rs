//! The operations whose API calls are measured: by `anchor_compare` (community.proxmox
//! 1.6 vs ferrox.proxmox, the table in `bench/results/compare.md`) and by `api_calls`
//! (ferrox.proxmox alone, in CI, against that table). Written once with the
//! `community.proxmox.` prefix; a run for ferrox.proxmox changes only the prefix.

/// The measured operations, in order, on one simulator: (label, task YAML).
pub const OPERATIONS: [(&str, &str); 7] = [
    (
        "kvm create (by name, no vmid)",
        "community.proxmox.proxmox_kvm:
          name: bench-web
          node: pve1
          cores: 2
          memory: 1024
          scsihw: virtio-scsi-single
          scsi:
            scsi0: local-lvm:4
          net:
            net0: virtio,bridge=vmbr0",
    ),
    (
        "kvm present again (no-op)",
        "community.proxmox.proxmox_kvm:
          name: bench-web
          node: pve1
          cores: 2
          memory: 1024
          scsihw: virtio-scsi-single
          scsi:
            scsi0: local-lvm:4
          net:
            net0: virtio,bridge=vmbr0",
    ),
    (
        "kvm update (memory)",
        "community.proxmox.proxmox_kvm:
          name: bench-web
          node: pve1
          update: true
          cores: 2
          memory: 2048",
    ),
    (
        "disk create",
        "community.proxmox.proxmox_disk:
          vmid: 100
          disk: scsi1
          storage: local-lvm
          size: 8",
    ),
    (
        "nic create",
        "community.proxmox.proxmox_nic:
          vmid: 100
          interface: net1
          bridge: vmbr1",
    ),
    (
        "vm_info (by name)",
        "community.proxmox.proxmox_vm_info:
          name: bench-web",
    ),
    ("vm_info (all guests)", "community.proxmox.proxmox_vm_info: {}"),
];
