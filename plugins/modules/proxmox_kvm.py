# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the module's option declaration by `cargo collection docs`; do not edit.
# Documentation and argument spec only: the action plugin plugins/action/proxmox_kvm.py runs
# the module binary, plugins/modules/__bin/<platform>/ferrox, for the task's target platform.

from __future__ import annotations

DOCUMENTATION = r"""
module: proxmox_kvm
short_description: Management of QEMU/KVM virtual machines in a Proxmox VE cluster
version_added: "0.1.0"
description:
  - Creates, clones, restores, converges, starts, stops, suspends, converts to template, migrates and removes QEMU/KVM virtual machines in a Proxmox VE
    cluster.
  - "Takes the options of C(community.proxmox.proxmox_kvm) 1.6 (the same defaults, choices, messages and result keys). An existing VM is converged: only what
    differs from the task is written, and nothing is lost on the way. Check mode and C(--diff) report exactly what a real run would do."
  - How it converges, what waits for a restart, cloud-init, clones, vmids and waiting are in the notes below; every difference from community.proxmox is in
    R(Moving from community.proxmox, ansible_collections.ferrox.proxmox.docsite.guide_moving), and what reaches the guest in R(Every VM option and what reaches
    the guest, ansible_collections.ferrox.proxmox.docsite.guide_vms).
author:
  - ferrox.proxmox contributors (!UNKNOWN)
options:
  acpi:
    description:
      - Enable or disable ACPI.
    type: bool
  affinity:
    description:
      - Host cores the VM's processes run on, for example C(0,5,8-11) (sent as C(affinity)). Takes effect at the next start; PVE lets only C(root@pam)
        (password login) set it.
    type: str
    version_added: "0.2.0"
  agent:
    description:
      - Enable the QEMU guest agent. A boolean (C(true)/C(false)) is sent as C(1)/C(0); anything else is sent as a property string, for example
        C(enabled=1,fstrim_cloned_disks=1).
    type: str
  allow_ksm:
    description:
      - Allow memory pages of this VM to be merged by KSM (sent as C(allow-ksm)).
    type: bool
    version_added: "0.1.0"
  apply_pending:
    description:
      - What to do when an update of a running VM leaves changes pending (PVE could not hotplug them). V(keep) leaves them pending and lists them in
        RV(pending); V(reboot) reboots the VM so they take effect.
    type: str
    default: keep
    choices:
      - keep
      - reboot
    version_added: "0.1.0"
  arch:
    description:
      - "Virtual processor architecture (PVE's default: the host's). PVE lets only C(root@pam) (password login) set it."
    type: str
    choices:
      - x86_64
      - aarch64
    version_added: "0.2.0"
  archive:
    description:
      - Backup archive to restore when creating the VM, for example C(local:backup/vzdump-qemu-100.vma.zst).
    type: str
  args:
    description:
      - Arbitrary arguments passed to KVM, for example C(-serial unix:/var/run/qemu-server/<vmid>.serial,server,nowait). Only allowed for C(root@pam)
        authenticated by password.
    type: str
  audio:
    description:
      - Audio devices.
      - "Keys are PVE config keys, values PVE property strings, for example C(audio0: device=ich9-intel-hda,driver=spice)."
    type: dict
  autostart:
    description:
      - Automatic restart after a crash (currently ignored by PVE).
    type: bool
  balloon:
    description:
      - Target amount of RAM for the VM in MiB. C(0) disables the balloon driver.
    type: int
  bios:
    description:
      - BIOS implementation.
    type: str
    choices:
      - seabios
      - ovmf
  boot:
    description:
      - Boot order, for example C(order=scsi0;ide2;net0).
      - "boot in legacy letters (c: the bootdisk, d: CD-ROM, n: network) is deprecated by Proxmox VE: name the devices in order instead, for example boot:
        order=scsi0;ide2;net0."
    type: str
  bootdisk:
    description:
      - Boot disk (legacy; prefer O(boot)).
    type: str
  bwlimit:
    description:
      - I/O bandwidth limit in KiB/s of a restore from O(archive), a clone (O(clone)) or a migration (O(migrate=true)); PVE's default comes from the datacenter
        and storage settings.
    type: int
    version_added: "0.2.0"
  check_mode_assume:
    description:
      - "Only in check mode: references the task may take as existing because an earlier task of another collection, one that cannot run in check mode (so
        C(--check) skips it), creates them. Without it such a check run fails, as the real run would if the earlier task had not made them."
      - Ignored in real runs, which check every reference. Each assumption used is named in a warning.
    type: dict
    version_added: "0.2.0"
    suboptions:
      pools:
        description:
          - Resource pools to take as existing.
        type: list
        elements: str
      volumes:
        description:
          - Volumes (C(storage:iso/name.iso), C(storage:import/name.qcow2)) to take as existing.
        type: list
        elements: str
  cicustom:
    description:
      - Custom cloud-init files, for example C(user=local:snippets/user.yml).
    type: str
  cipassword:
    description:
      - "Cloud-init password of O(ciuser). PVE never reveals the stored password, so it cannot be compared: on an existing VM it is set only when the VM has
        none, unless O(update_password=always)."
    type: str
  citype:
    description:
      - Cloud-init configuration format.
    type: str
    choices:
      - nocloud
      - configdrive2
  ciupgrade:
    description:
      - Upgrade packages on the first boot.
    type: bool
  ciuser:
    description:
      - Cloud-init user.
    type: str
  clone:
    description:
      - "Name of the VM to clone (with O(vmid) set, any value: O(vmid) is the source). The rest of the task (cores, memory, net, cloud-init, ...) is applied to
        the clone in the same run."
      - When several VMs have that name (one template per node with local storage), the one on the node the clone is to be made on (O(target), else O(node)) is
        cloned; the module fails listing the candidates per node when that node holds none or several.
    type: str
  cores:
    description:
      - Number of cores per socket.
    type: int
  cpu:
    description:
      - Emulated CPU type, for example C(host) or C(x86-64-v3).
    type: str
  cpulimit:
    description:
      - Limit of CPU usage (0 means unlimited).
    type: int
  cpuunits:
    description:
      - CPU weight of the VM.
    type: int
  delete:
    description:
      - Comma-separated config keys to delete. Keys the VM does not have are skipped, so a rerun reports no change. Deleted disks become C(unusedN), their data
        stays; deleting an C(unusedN) key frees its volume, and its data is lost.
    type: str
  description:
    description:
      - Description of the VM, shown in the web interface's summary.
    type: str
  destroy_unreferenced_disks:
    description:
      - "V(state=absent): also destroy volumes of this vmid that are not referenced by its config."
    type: bool
    default: false
    version_added: "0.1.0"
  digest:
    description:
      - Only change the config if its SHA1 digest still equals this value. Without it, the digest the module read is used, so a concurrent change is never
        overwritten.
    type: str
  efidisk0:
    description:
      - EFI vars disk. Needs O(bios=ovmf) when it is created.
      - Unset sub-options are left out (PVE's defaults apply) rather than sent as C(None).
    type: dict
    suboptions:
      efitype:
        description:
          - Size of the OVMF variables store (C(4m) is needed for Secure Boot).
        type: str
        choices:
          - "2m"
          - "4m"
      format:
        description:
          - Format of the disk.
        type: str
        choices:
          - raw
          - cow
          - qcow
          - qed
          - qcow2
          - vmdk
          - cloop
      ms_cert:
        description:
          - The Microsoft UEFI certificates enrolled (PVE's C(ms-cert)). V(2023k) has PVE enroll the Microsoft UEFI CA 2023, the Windows UEFI CA 2023 and the
            Microsoft KEK 2023 into an existing EFI disk (the 2011 certificates expire in June 2026); a new EFI disk with pre-enrolled keys gets them from PVE
            9. V(2023) and V(2023w) are deprecated by PVE (it records V(2023k) when it enrolls); an EFI disk that has them already satisfies them.
          - Needs O(efidisk0.pre_enrolled_keys) on the disk. On a running VM the enrollment waits for the next start and is reported in RV(pending).
        type: str
        choices:
          - "2011"
          - "2023"
          - "2023w"
          - "2023k"
        version_added: "0.2.0"
      pre_enrolled_keys:
        description:
          - Pre-enroll the distribution and Microsoft Secure Boot keys.
        type: bool
      storage:
        description:
          - Storage to allocate the EFI disk on.
        type: str
  extra_config:
    description:
      - "Any other key of the VM config, set as PVE's C(qm set) would: a dict of PVE config keys to values, for example C({\"newkey\": \"value\"}). Converged,
        diffed, predicted in check mode and reported as pending like the declared options."
      - "Checked before anything is written against the Proxmox VE API schema the module carries (PVE 9.1, with the keys later releases added): a value not in
        the key's format fails naming the key and the format, and a key that has its own option (O(cores), O(net), O(efidisk0), ...) is refused there, naming
        the option. A key or sub-key the module does not know, or one a later qemu-server release added (C(net) C(host-tunnel), C(cpu) C(level), C(agent)
        C(freeze-fs)), is never refused on a version: the node the VM is on parses it with its own qemu-server, which no version the module can read tells, so
        it is sent (with a warning for a key the module does not know, and in check mode for every such key) and a node that lacks it refuses the call that
        carries it (the create, or the config update of an existing or cloned VM) before that call changes anything; the task fails naming the key, the node
        and the fix (upgrade qemu-server on that node). Which privilege such a key needs is left to the cluster."
      - "Keys set this way today: C(amd-sev), C(intel-tdx) (confidential computing) and C(ivshmem) (shared memory with the host): hardware features whose
        property strings PVE keeps extending, so the schema's format is the one to follow, and O(extra_config) converges them like any option, for example
        C({\"amd-sev\": \"type=snp,allow-smt=1\"}). Like PVE, only C(root@pam) (password login) may set them; they take effect at the next start."
      - "The parameters of PVE's create call that are not config keys have their own options or no place in a task: C(start) is O(state=started), C(ha-managed)
        is O(ha_managed), C(archive), C(storage), C(pool), C(unique), C(live-restore), C(import-working-storage) and C(bwlimit) are O(archive), O(storage),
        O(pool), O(unique), O(live_restore), O(import_working_storage) and O(bwlimit), C(force), C(skiplock), C(digest), C(delete) and C(revert) are options of
        their own, and C(background_delay) does not apply (the module waits for every task)."
    type: dict
    version_added: "0.2.0"
  force:
    description:
      - "V(state=stopped): power off when the graceful shutdown did not finish within O(timeout). V(state=restarted): reset instead of reboot. V(state=absent),
        V(state=template): stop a running VM first. With O(archive): overwrite an existing VM."
      - Never sent on update.
    type: bool
  format:
    description:
      - "Disk format of a full clone. V(unspecified) means: the storage's default."
    type: str
    choices:
      - cloop
      - cow
      - qcow
      - qcow2
      - qed
      - raw
      - vmdk
      - unspecified
  freeze:
    description:
      - Freeze the CPU at startup (use the C(c) monitor command to start execution).
    type: bool
  full:
    description:
      - Full clone (V(true)) or linked clone (V(false), from a template).
    type: bool
    default: true
  ha_managed:
    description:
      - Create the VM as an HA resource (sent as C(ha-managed) with the create; PVE 9.0.24 or later, older versions fail naming this before anything is made).
        PVE gives it the request state C(stopped); from then on PVE's HA manager starts, stops and migrates it (a later O(state=started) task,
        O(migrate=true)), and the module waits until the VM has reached the state or node asked for.
      - "Applies to a VM this task creates or restores (PVE's clone has no such parameter: a clone gets a warning); an existing VM that is not HA-managed gets
        a warning and is left as it is."
    type: bool
    version_added: "0.2.0"
  hookscript:
    description:
      - Script run at the VM's lifecycle steps, for example C(local:snippets/hook.pl).
    type: str
  hostpci:
    description:
      - PCI passthrough devices.
      - "Keys are PVE config keys, values PVE property strings, for example C(hostpci0: 0000:01:00.0,pcie=1)."
    type: dict
  hotplug:
    description:
      - Hotplug features, for example C(network,disk,usb); C(0) disables hotplug.
    type: str
  hugepages:
    description:
      - Enable or disable hugepages memory.
    type: str
    choices:
      - any
      - "2"
      - "1024"
  ide:
    description:
      - IDE drives (C(ide0) to C(ide3)).
      - "Keys are PVE config keys, values PVE property strings, for example C(ide2: local:iso/debian.iso,media=cdrom)."
      - On an existing VM a drive's options change in place, its size only grows (resize) and its volume is never replaced; see O(scsi).
    type: dict
  import_working_storage:
    description:
      - "When a VM is created with a disk imported (C(import-from)) from an OVA: the file-based storage PVE extracts it on first (sent as
        C(import-working-storage)); PVE's default is the source storage."
    type: str
    version_added: "0.2.0"
  ip_family:
    description:
      - The address family O(wait_for_ip) waits for and RV(ip_address) is picked from. V(any) takes IPv4 when the guest has both.
    type: str
    default: any
    choices:
      - ipv4
      - ipv6
      - any
    version_added: "0.2.0"
  ipconfig:
    description:
      - Cloud-init IP configuration per NIC.
      - "Keys are PVE config keys, values PVE property strings, for example C(ipconfig0: ip=192.0.2.10/24,gw=192.0.2.1)."
    type: dict
  keephugepages:
    description:
      - Keep the hugepages of O(hugepages) after the VM shuts down, for its next start. PVE lets only C(root@pam) (password login) set it.
    type: bool
    version_added: "0.2.0"
  keyboard:
    description:
      - Keyboard layout for VNC.
    type: str
  kvm:
    description:
      - Enable or disable KVM hardware virtualization.
    type: bool
  live_restore:
    description:
      - "With O(archive) from a Proxmox Backup Server: start the VM at once and restore in the background (sent as C(live-restore))."
    type: bool
    version_added: "0.2.0"
  localtime:
    description:
      - Set the real time clock to local time (default for Windows guests).
    type: bool
  lock:
    description:
      - Lock the VM.
    type: str
    choices:
      - migrate
      - backup
      - snapshot
      - rollback
  machine:
    description:
      - QEMU machine type, for example C(q35).
    type: str
  memory:
    description:
      - Memory size in MiB.
    type: int
  migrate:
    description:
      - Migrate the VM to O(node) (online when running).
    type: bool
    default: false
  migrate_downtime:
    description:
      - Maximum tolerated downtime (seconds) for migrations.
    type: int
  migrate_speed:
    description:
      - Maximum speed (MB/s) for migrations (0 means no limit).
    type: int
  migration_network:
    description:
      - "O(migrate=true): the network (CIDR) the migration traffic takes, for example C(10.1.2.0/24). PVE lets only C(root@pam) set it."
    type: str
    version_added: "0.2.0"
  migration_type:
    description:
      - "O(migrate=true): V(insecure) sends the VM's memory unencrypted (faster, on a trusted network only). PVE lets only C(root@pam) set it."
    type: str
    choices:
      - secure
      - insecure
    version_added: "0.2.0"
  name:
    description:
      - "Name of the VM. Also how the VM is found when O(vmid) is not given: only QEMU VMs are considered. When several VMs have that name and O(node) is
        given, the one on O(node) is meant; otherwise (or when O(node) holds none or several of them) the module fails with a list of their vmids."
      - When cloning, the name of the new VM.
    type: str
  nameservers:
    description:
      - DNS servers for cloud-init (sent space-separated as C(nameserver)).
    type: list
    elements: str
  net:
    description:
      - Network interfaces (C(net0) to C(net31)).
      - "Keys are PVE config keys, values PVE property strings, for example C(net0: virtio,bridge=vmbr0,tag=10)."
      - On an existing VM a NIC keeps its MAC address unless the value names one; other settings change in place. New keys add NICs; NICs not named here are
        left alone.
    type: dict
  newid:
    description:
      - vmid of the clone. When not set, a VM named O(name) is taken to be the clone; otherwise a free id is allocated.
    type: int
  node:
    description:
      - Node to create the VM on, and the target node of O(migrate=true).
      - Required only to create a VM (without O(clone)) unless O(placement) is given. For an existing VM the node that holds it is found from the cluster; a
        clone is made on the source's node.
    type: str
  numa:
    description:
      - "numa is the NUMA topology, a dict of numaN entries (PVE property strings) such as numa0: cpus=0-3,memory=2048; to turn NUMA on, use numa_enabled:
        true."
    type: dict
  numa_enabled:
    description:
      - Enable NUMA (sent as the C(numa) config key).
    type: bool
  onboot:
    description:
      - Start the VM when the node boots.
    type: bool
  ostype:
    description:
      - Guest operating system, used by PVE to enable OS-specific optimisations.
    type: str
    choices:
      - other
      - wxp
      - w2k
      - w2k3
      - w2k8
      - wvista
      - win7
      - win8
      - win10
      - win11
      - l24
      - l26
      - solaris
  parallel:
    description:
      - Parallel ports.
      - "Keys are PVE config keys, values PVE property strings, for example C(parallel0: /dev/parport0)."
    type: dict
  placement:
    description:
      - "Create or clone without naming O(node): ferrox chooses among the candidates. Applies only when O(node) is not given and the VM is created (a clone
        without O(target)); a VM that exists is found wherever it is and never moved."
      - "Free memory is the node's memory (C(maxmem) in C(/cluster/resources)) less the configured memory of every guest on it, running or stopped: PVE
        reserves nothing for a stopped guest, but starting it needs its memory. Free CPUs likewise, from C(maxcpu)."
      - "A candidate is excluded, with the reason kept, when it is offline, its memory is not listed (the token needs C(Sys.Audit) on C(/nodes/<node>) for
        placement to hold nodes to their memory), it is full (see O(placement.max_memory_ratio)), lacks a storage the task's drives, O(efidisk0), O(tpmstate0),
        cloud-init drive or O(storage) name or has it disabled or not active (C(status: unknown) in C(/cluster/resources): the node cannot reach it, for
        example an NFS server it cannot mount), lacks a bridge the task's NICs name, or cannot take the clone source (a linked clone stays on its template's
        node; with one same-named template per node, each node clones its own). With no candidate left the task fails naming every node and its reason, and
        creates nothing."
      - The result has RV(node) and RV(placement) (the candidates, their numbers, the exclusions); C(--diff) shows the node. A task that finds its VM existing
        (made earlier, or by another run at the same moment) reports the RV(node) it is on. Check mode chooses by the same rule over the same placements.
    type: dict
    version_added: "0.2.0"
    suboptions:
      group:
        description:
          - "Anti-affinity: VMs of the same group go to different nodes while there are nodes without one; after that each goes where O(placement.strategy)
            says (the most free memory for V(most_free), the name's node for V(spread)), not to the node with the fewest members, so a small node is not filled
            as fast as a large one. Members are the VMs this run placed in the group and the guests tagged with the group's name (add it to O(tags) for later
            runs to see them)."
        type: str
      max_memory_ratio:
        description:
          - "A node is full, and excluded, when the configured memory of its guests plus this VM would exceed this ratio times its memory. Default: C(1.0), no
            overcommit: placement never configures a node past its memory unless this is set above 1 (for example C(1.5) to configure up to 150%). PVE itself
            checks no memory when a VM is created, so an overcommitted node fails only later, when its last guests start or it swaps; a value above 1 is for
            guests known not to use all their memory at once."
        type: float
      nodes:
        description:
          - "The candidate nodes. Default: every node of the cluster. Only online nodes are taken."
        type: list
        elements: str
      strategy:
        description:
          - "V(most_free): the node with the most free memory, then the most free CPUs, counting what this run already placed (placed creates of one run choose
            one at a time)."
          - "V(spread): a node derived from O(name) alone (rendezvous hashing with the FNV-1a of O(vmid_range)): the same name gets the same node on every run
            and in two runs at once, names spread evenly over the candidates, and a node added to them takes only its share of names. A name whose node is full
            (see O(placement.max_memory_ratio)) goes to its next node by the same hashing. Like V(most_free), the placed creates of one run choose one at a
            time, so each sees what the others placed (in check mode too). The rule is stable across versions; should it change, the changelog says so."
        type: str
        default: most_free
        choices:
          - most_free
          - spread
  pool:
    description:
      - Resource pool of a new VM or clone. With O(update=true), an existing VM listed in another pool (or in none) is moved into it, in the same write leaving
        its old pool (PVE's pool update with C(allow-move)); without O(update) a warning names the difference. Without O(pool) the VM's pool is left as it is.
      - A nested pool of PVE 8.1 or later is named with its parent, for example C(prod/web).
    type: str
  protection:
    description:
      - Protect the VM from removal (and its disks from removal).
    type: bool
  purge:
    description:
      - "V(state=absent): also remove the VM from backup jobs, replication and HA. PVE removes a VM that has an HA resource only with it, whether or not HA
        manages the VM (a resource in state C(ignored), or the HA stack disarmed); without it the task fails before anything is stopped."
    type: bool
    default: false
  reboot:
    description:
      - Allow reboot. If false, the VM exits when it reboots.
    type: bool
  revert:
    description:
      - Comma-separated config keys whose pending change is dropped.
    type: str
  rng0:
    description:
      - VirtIO random number generator, for example C(source=/dev/urandom).
      - "Network boot of a UEFI VM (bios: ovmf) needs a random number generator since Proxmox VE 8.3.5 (its UEFI firmware will not start the network stack
        without one): add rng0: source=/dev/urandom."
    type: str
  sata:
    description:
      - SATA drives (C(sata0) to C(sata5)).
      - "Keys are PVE config keys, values PVE property strings, for example C(sata0: local-lvm:32)."
      - Same rules as O(scsi) on an existing VM.
    type: dict
  scsi:
    description:
      - SCSI drives (C(scsi0) to C(scsi30)).
      - "Keys are PVE config keys, values PVE property strings, for example C(scsi0: local-lvm:32,discard=on,ssd=1)."
      - C(STORAGE:SIZE) (GiB) allocates a new disk when the key is not in use yet. On an existing VM, a drive's options change in place and a larger size grows
        it (resize); a smaller size, another storage or another bus fail with a message naming the safe route (M(ferrox.proxmox.proxmox_disk) with
        O(ferrox.proxmox.proxmox_disk#module:state=moved) or O(ferrox.proxmox.proxmox_disk#module:state=resized)). No disk is ever detached, replaced or
        destroyed by this option.
    type: dict
  scsihw:
    description:
      - SCSI controller model.
    type: str
    choices:
      - lsi
      - lsi53c810
      - virtio-scsi-pci
      - virtio-scsi-single
      - megasas
      - pvscsi
  searchdomains:
    description:
      - DNS search domains for cloud-init (sent space-separated as C(searchdomain)).
    type: list
    elements: str
  serial:
    description:
      - Serial ports (C(serial0) to C(serial3)).
      - "Keys are PVE config keys, values PVE property strings, for example C(serial0: socket)."
    type: dict
  shares:
    description:
      - Amount of memory shares for auto-ballooning.
    type: int
  skiplock:
    description:
      - Ignore locks (only C(root@pam) authenticated by password).
    type: bool
  smbios:
    description:
      - SMBIOS type 1 fields (sent as C(smbios1)), for example C(manufacturer=ACME). On update, fields PVE set itself (the C(uuid)) are kept.
    type: str
  snapname:
    description:
      - Snapshot to clone from.
    type: str
  sockets:
    description:
      - Number of CPU sockets.
    type: int
  spice_enhancements:
    description:
      - SPICE enhancements, for example C(foldersharing=1,videostreaming=all).
    type: str
    version_added: "0.1.0"
  sshkeys:
    description:
      - Public SSH keys for cloud-init, one per line. Compared with the VM's keys after decoding, so an unchanged list is not an update.
    type: str
  startdate:
    description:
      - Initial date of the real time clock, C(now) or C(2006-06-17T16:01:21).
    type: str
  startup:
    description:
      - Startup and shutdown behaviour, for example C(order=1,up=30,down=60).
    type: str
  state:
    description:
      - V(present) creates the VM (or clones it), and with O(update=true) converges an existing one. V(started), V(stopped), V(restarted), V(paused) (suspend
        in RAM), V(hibernated) (suspend to disk) change the power state. V(current) reports it. V(template) converts the VM. V(absent) removes it.
    type: str
    default: present
    choices:
      - present
      - started
      - absent
      - stopped
      - restarted
      - current
      - template
      - paused
      - hibernated
  storage:
    description:
      - Target storage of a full clone (PVE refuses it for linked clones), or the storage of a restore from O(archive).
    type: str
  tablet:
    description:
      - Enable the USB tablet device.
    type: bool
  tags:
    description:
      - Tags of the VM. Each must match C(^[a-zA-Z0-9_][a-zA-Z0-9_\-\+\.]*$).
      - Compared without regard to order or case (PVE stores them lower case and sorted).
    type: list
    elements: str
  target:
    description:
      - Target node of a clone. With the source's disks on shared storage (or a shared O(storage)), PVE clones straight there.
      - When they are on storage local to the source's node, the clone is made there, migrated offline to O(target) (its disks onto O(storage) there, else onto
        storages of the same names), then configured, in the same task; a rerun finds it on O(target). A linked clone (O(full=false)) cannot move and fails.
    type: str
  targetstorage:
    description:
      - "O(migrate=true): where local disks go on the target node, one storage or C(source:target) pairs, for example C(local-lvm) or
        C(local-lvm:fast,local:local)."
    type: str
    version_added: "0.2.0"
  tdf:
    description:
      - Enable time drift fix.
    type: bool
  template:
    description:
      - Set the C(template) config flag. Prefer O(state=template), which converts the disks too.
    type: bool
  timeout:
    description:
      - Seconds to wait for each PVE task, and the graceful-shutdown time of V(state=stopped). Creating, cloning and restoring wait at least 300 seconds (full
        clones of big disks take minutes), unless a larger value is given.
    type: int
    default: 30
  tpmstate0:
    description:
      - TPM state disk, created when the VM has none.
    type: dict
    suboptions:
      storage:
        description:
          - Storage to allocate the TPM state on.
        type: str
        required: true
      version:
        description:
          - TPM version (cannot change later).
        type: str
        default: "2.0"
        choices:
          - "1.2"
          - "2.0"
  unique:
    description:
      - "With O(archive): give the restored VM's NICs new random MAC addresses."
    type: bool
    version_added: "0.2.0"
  update:
    description:
      - "Converge an existing VM to the task: the task is compared with the VM's config and only the keys that differ are written, guarded by the config's
        digest. Creates the VM when it does not exist."
    type: bool
    default: false
  update_password:
    description:
      - V(on_create) sets O(cipassword) only on a VM that has none (a new VM, or one without a password). V(always) sends it on every update (O(update=true)),
        so the task reports a change each time; the password never appears in the result or C(--diff), which show PVE's mask C(**********).
    type: str
    default: on_create
    choices:
      - always
      - on_create
    version_added: "0.2.0"
  update_unsafe:
    description:
      - Accepted for compatibility (see O(scsi), O(net)).
      - "update_unsafe is no longer needed: disks and NICs are always updated safely, a NIC keeps its MAC and a disk its volume; leave it out."
    type: bool
    default: false
  usb:
    description:
      - USB devices.
      - "Keys are PVE config keys, values PVE property strings, for example C(usb0: host=1234:5678)."
    type: dict
  vcpus:
    description:
      - Number of hotplugged vCPUs.
    type: int
  vga:
    description:
      - VGA hardware, for example C(std), C(qxl) or C(serial0).
    type: str
  virtio:
    description:
      - VirtIO drives (C(virtio0) to C(virtio15)).
      - "Keys are PVE config keys, values PVE property strings, for example C(virtio0: local-lvm:32,iothread=1)."
      - Same rules as O(scsi) on an existing VM.
    type: dict
  virtiofs:
    description:
      - Host directories shared with the guest (C(virtiofs0) to C(virtiofs9)).
      - "Keys are PVE config keys, values PVE property strings, for example C(virtiofs0: dirid=share1,cache=auto)."
    type: dict
    version_added: "0.1.0"
  vmgenid:
    description:
      - "VM generation ID: a UUID, C(1) to have PVE generate one (an existing ID satisfies C(1), so a rerun changes nothing), or C(0) to disable it. PVE lets
        only C(root@pam) (password login) set it."
    type: str
    version_added: "0.2.0"
  vmid:
    description:
      - The VM's id. When cloning, the id of the source VM.
      - When not set, the VM is found by O(name); a new VM gets a free id, see O(vmid_range).
    type: int
  vmid_range:
    description:
      - "C([first, last]): allocate new vmids (create and clone without O(vmid)/O(newid)) from this inclusive range instead of PVE's C(/cluster/nextid)."
      - "The vmid is derived from O(name): the first id tried is C(first) plus the 64-bit FNV-1a hash of its UTF-8 bytes modulo the number of ids in the range,
        then each next id upward, wrapping from C(last) to C(first); an id held by a VM of another name is skipped. Without O(name), ids are tried from
        C(first) upward. A range whose ids are all held by other names fails, naming the range."
      - So two runs creating the same name at once ask PVE for the same vmid, PVE creates it only once, and the other run converges onto that VM (C(changed)
        only if it had to change something). This is the way to run the same play several times at once.
      - "The order is stable across versions: a rerun picks the same id for a name not yet created. Should it ever change, the changelog says so."
    type: list
    elements: int
    version_added: "0.1.0"
  vmstatestorage:
    description:
      - Storage for the VM state of snapshots with RAM and of hibernation.
    type: str
    version_added: "0.2.0"
  wait_for_agent:
    description:
      - "With V(state=started) or V(state=restarted): after the start or reboot (or at once, for a VM already running), wait until the QEMU guest agent in the
        guest answers, then return its addresses in RV(ip_addresses) and RV(ip_address)."
      - "Needs O(agent) enabled in the VM's config and qemu-guest-agent running in the guest, and the privilege to read it (Proxmox VE 9:
        C(VM.GuestAgent.Audit); 8: C(VM.Monitor)); without them the task fails at once, before starting anything. A V(state=restarted) waits for the agent of
        the new boot."
      - "wait_for_agent and wait_for_ip apply only to state: started and state: restarted; this task does not wait."
    type: bool
    default: false
    version_added: "0.2.0"
  wait_for_ip:
    description:
      - "Like O(wait_for_agent), and also wait until the guest has a usable address of O(ip_family) on one of its NICs: not loopback, not link-local
        (C(fe80::/10)), not the APIPA C(169.254/16) a Windows guest shows before DHCP or sysprep is done. This replaces a fixed C(pause) before connecting to a
        new VM."
    type: bool
    default: false
    version_added: "0.2.0"
  wait_timeout:
    description:
      - "Seconds O(wait_for_agent) and O(wait_for_ip) wait for the guest, counted from the end of the start or reboot (separate from O(timeout), the wait for
        PVE's own tasks). When it runs out, the task fails naming what it saw last: an agent that never answered, or the addresses the guest had."
    type: int
    default: 300
    version_added: "0.2.0"
  watchdog:
    description:
      - Virtual watchdog device, for example C(model=i6300esb,action=reset).
    type: str
  with_conntrack_state:
    description:
      - "O(migrate=true) of a running VM: carry the firewall's connection tracking state over (sent as C(with-conntrack-state))."
    type: bool
    version_added: "0.2.0"
  with_local_disks:
    description:
      - Migrate local disks too.
    type: bool
    default: false
extends_documentation_fragment:
  - ferrox.proxmox.connection
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
    details: The action plugin picks the binary built for the target's platform (C(uname -sm), or the controller's own platform on a local connection).
  async:
    support: full
    details: Like every binary module, C(async) needs Python on the target host for ansible-core's async wrapper.
  bypass_host_loop:
    support: none
  platform:
    support: full
    platforms: posix
    details: Binaries run on the host the task targets, usually the controller (C(delegate_to) C(localhost)) or a Proxmox VE node; the collection's README
      lists the platforms shipped.
  check_mode:
    support: full
    details: Reads the live cluster and reports exactly the actions a real run would take, writing nothing.
  diff_mode:
    support: full
    details: Before and after of the config keys (or power state) that change; secrets masked.
  action_group:
    description: Use C(group/ferrox.proxmox.proxmox) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - ferrox.proxmox.proxmox
notes:
  - "Convergence: with O(update=true) the task is compared with the VM's config (property strings normalised, O(tags) without regard to order, O(sshkeys)
    decoded, O(nameservers)/O(searchdomains) as lists) and only the keys that differ are written, guarded by the config digest. Nothing differing means
    C(changed=false). A VM that does not exist is created. Without O(update), an existing VM is left alone and a warning names the keys that differ from the
    task."
  - "Safe disks and NICs: on an existing VM a disk's options change in place and its size only grows, a new disk key is allocated, a NIC keeps its MAC unless
    the task names one. Shrinking a disk, or changing its storage or bus, fails with a message naming the safe route. O(update_unsafe) is therefore no longer
    needed."
  - "Pending changes: changes PVE cannot apply to a running VM are returned in RV(pending) (read back from PVE after the write; predicted from PVE's hotplug
    rules in check mode) and the message says a restart is needed; O(apply_pending=reboot) reboots the VM to apply them."
  - "Cloud-init changes: PVE writes cloud-init keys (O(ciuser), O(cipassword), O(sshkeys), O(ipconfig), O(nameservers), O(searchdomains), O(citype),
    O(ciupgrade), O(cicustom)) to a running VM's config at once, but the guest reads them from its cloud-init drive, which PVE rebuilds only when the VM starts
    (an API reboot included). Until then they are listed in RV(pending) and the message says they are not yet in the guest, also in check mode and on a rerun
    with nothing to write (read from C(GET .../cloudinit)); O(apply_pending=reboot) reboots the VM to bring them there. A VM whose C(hotplug) names
    C(cloudinit) gets them at once. PVE does not list a changed (not added or removed) O(ipconfig) entry there, so only the run that changes it reports it.
    Editing a C(cicustom) snippet is invisible: PVE does not track its content. Cloud-init options on a VM without a cloud-init drive get a warning."
  - "Clone: the rest of the task (cores, memory, net, ipconfig, cloud-init, ...) is applied to the clone in the same task. Without O(newid), an existing VM
    named O(name) is the clone, so a rerun does not clone again. A rerun converges the clone exactly as O(update=true) would (the same checks, pool move,
    cloud-init pending view, O(apply_pending) and O(update_password)); where 1.6 differs, so does it: no O(update) is needed, and with nothing to change the
    message is C(vmid <vmid> with VM name <name> already exists). The result always names the clone."
  - "Race-free vmid allocation: without O(vmid), when PVE answers that the chosen id was taken meanwhile by a parallel run, the next free id is tried
    (bounded). C(serial: 1) or C(throttle: 1) are not needed."
  - "Cluster consistency: after a create or clone the module returns once the VM is listed cluster-wide, so the next task finds it (no C(pause)). PVE lists a
    new VM's name only with its node's next status broadcast (up to 10 seconds later); until then every module that looks a VM up by name reads the name of
    such an unnamed VM from its config, so the lookup is exact at once and the create does not wait for the broadcast."
  - "Check mode and diff mode: the module reads the live cluster, computes the actions it would take and, in check mode, reports them without writing
    (C(changed) as a real run would report it; a create returns the vmid it would use). With C(--diff) the before/after of the config keys is shown."
  - O(node) is required only to create a VM. For an existing VM the node holding it is found from the cluster; a clone is made on the source's node (O(target)
    moves it elsewhere).
  - "Waiting: a PVE task that fails fails the module at once with its exit status and the end of its log; a task still running after O(timeout) fails with a
    message naming the task (the task goes on in PVE). Creating, cloning and restoring wait at least 300 seconds."
  - Name lookups consider QEMU VMs only (a container with the same name is not a match); several VMs with the same name fail with their vmids listed.
  - RV(mac) and RV(devices) are read from the VM's live config and list every NIC and disk, on every result where the VM exists.
  - O(state=paused) and O(state=hibernated) suspend the VM (to RAM, or to disk with C(todisk=1)); O(state=template) with O(force=true) shuts a running VM down
    first.
  - O(force) is sent on create only together with O(archive) (PVE accepts it only for restores). O(target) and O(snapname) are used for clones only, O(pool)
    and O(storage) for creates and clones.
  - "The PVE-version gates of 1.6 (dropping options on PVE older than 6 or 8) are not reproduced: Proxmox VE 8 or later is assumed."
  - "A guest looked up by O(name) alone (no O(vmid)) that an earlier task of the same C(ansible-playbook) run listed is found through the run's name index: one
    C(GET /nodes/{node}/{type}/{vmid}/status/current) confirms it (its name, its node) instead of a C(GET /cluster/resources) of the whole cluster. A guest
    renamed, moved or removed since, a name the index lacks (or, for one VM, holds twice), and an index older than its maximum age (60 seconds;
    C(FERROX_NAME_INDEX_MAX_AGE) in the controller's environment sets it, V(0) turns the index off) are looked up in a fresh listing; the listings of every
    module with this note refresh the index. Within that age a guest another tool gave the same name is not seen; creates, clones, migrations, removals and
    pool moves always list."
seealso:
  - module: ferrox.proxmox.proxmox_disk
  - module: ferrox.proxmox.proxmox_nic
  - module: ferrox.proxmox.proxmox_vm_info
"""

EXAMPLES = r"""
- name: Create a VM (vmid chosen by PVE, race-free)
  ferrox.proxmox.proxmox_kvm:
    node: pve1
    name: web01
    cores: 2
    memory: 2048
    scsihw: virtio-scsi-single
    scsi:
      scsi0: local-lvm:32,discard=on,iothread=1
    ide:
      ide2: local-lvm:cloudinit
    net:
      net0: virtio,bridge=vmbr0,tag=10
    ipconfig:
      ipconfig0: ip=dhcp
    ciuser: debian
    sshkeys: "{{ lookup('file', '~/.ssh/id_ed25519.pub') }}"
  register: vm

- name: Print its MAC
  ansible.builtin.debug:
    msg: "{{ vm.mac.net0 }}"

- name: Converge the VM (only differing keys are written; grows scsi0 to 40G)
  ferrox.proxmox.proxmox_kvm:
    name: web01
    update: true
    cores: 4
    scsi:
      scsi0: local-lvm:40,discard=on,iothread=1
    apply_pending: reboot

- name: Clone a template and configure the clone in one task
  ferrox.proxmox.proxmox_kvm:
    clone: base-debian13
    name: app01
    full: false
    memory: 4096
    net:
      net0: virtio,bridge=vmbr1
    ipconfig:
      ipconfig0: ip=192.0.2.20/24,gw=192.0.2.1

- name: Start it and wait until its guest has an IPv4 address (no fixed pause)
  ferrox.proxmox.proxmox_kvm:
    name: app01
    state: started
    wait_for_ip: true
    ip_family: ipv4
  register: app01

- name: Reach it at that address
  ansible.builtin.add_host:
    name: app01
    ansible_host: "{{ app01.ip_address }}"

- name: Hibernate it
  ferrox.proxmox.proxmox_kvm:
    name: app01
    state: hibernated

- name: Stop, powering off after 60 s if the guest ignores ACPI
  ferrox.proxmox.proxmox_kvm:
    name: app01
    state: stopped
    force: true
    timeout: 60

- name: Remove it
  ferrox.proxmox.proxmox_kvm:
    name: app01
    state: absent
    purge: true
"""

RETURN = r"""
vmid:
  description: The VM's id (for a clone, the clone's id; in check mode, the id a create would use).
  returned: success
  type: int
  sample: 115
status:
  description: The VM's power state before the action (C(running) or C(stopped)).
  returned: success, for the power states and current
  type: str
  sample: running
msg:
  description: What was done, in community.proxmox 1.6's words.
  returned: always
  type: str
  sample: VM web01 with vmid 115 deployed
mac:
  description: MAC address of every NIC (C(netN)) of the VM, read from its live config (in check mode, null for a NIC Proxmox VE has yet to give a MAC, see
    RV(known_after_apply)).
  returned: success, when the VM exists (state present)
  type: dict
  sample: {"net0": "BC:24:11:2E:7F:01"}
devices:
  description: Volume of every disk key of the VM, read from its live config.
  returned: success, when the VM exists (state present)
  type: dict
  sample: {"scsi0": "local-lvm:vm-115-disk-0", "ide2": "local-lvm:vm-115-cloudinit"}
changes:
  description: Config keys that differ from the task (written by an update; named in a warning otherwise).
  returned: state present on an existing VM
  type: list
  elements: str
  sample: ["cores", "net0"]
pending:
  description: Changes PVE left pending on a running VM, key to pending value; they take effect when the VM restarts (see O(apply_pending)). Includes the
    cloud-init keys the VM's cloud-init drive lacks (a password as C(**********), a removed key as "(delete)").
  returned: update of a running VM
  type: dict
  sample: {"cores": "4"}
done:
  description: On a failure half-way through, the steps that were already done (the message says the same); a rerun continues from there.
  returned: failure after a partial change
  type: list
  elements: str
  sample: ["set cores of VM 100"]
diff:
  description: Before and after of the config keys (or power state) that change, with C(--diff).
  returned: changed, in diff mode
  type: dict
actions:
  description: The actions the run took, or in check mode would take, in order.
  returned: always
  type: list
  elements: str
  sample: ["create VM 115 on pve1", "wait until VM 115 is listed cluster-wide"]
ip_addresses:
  description:
    - The guest's usable addresses per NIC, as its QEMU guest agent reports them, matched to C(netN) by MAC (any case); link-local, APIPA and loopback
      addresses are left out, and so are guest interfaces of no C(netN) (bridges, containers inside the guest).
    - In check mode null (see RV(known_after_apply)), unless the VM already runs and its agent answers.
  returned: with O(wait_for_agent) or O(wait_for_ip)
  type: dict
  sample: {"net0": {"mac": "BC:24:11:2E:7F:01", "ipv4": ["192.0.2.50"], "ipv6": ["2001:db8::50"]}}
ip_address:
  description:
    - The address to connect to (for C(add_host)'s C(ansible_host)) - the first usable address of O(ip_family) on the lowest C(netN) that has one; null when
      there is none (only with O(wait_for_agent)).
    - In check mode null (see RV(known_after_apply)), unless the VM already runs and its agent answers.
  returned: with O(wait_for_agent) or O(wait_for_ip)
  type: str
  sample: 192.0.2.50
node:
  description: The node O(placement) chose for the VM this task created or cloned (in check mode, the node a real run would choose); for a VM the task found
    existing (made earlier, or by another run at the same moment), the node it is on.
  returned: with O(placement) and no O(node), when a create (O(state=present)) or a clone without O(target) succeeds
  type: str
  sample: pve2
placement:
  description:
    - Why O(placement) chose RV(node) - the strategy, the group, the VM's memory (bytes) and CPUs, every candidate with its numbers (C(maxmem), C(maxcpu),
      C(configured_memory), C(configured_cpus), C(free_memory), C(group_members)) in the order ranked, and every excluded node with its reason.
  returned: with O(placement), when the task chose a node
  type: dict
  sample:
    node: pve2
    strategy: most_free
    group: web
    memory: 2147483648
    cpus: 1
    candidates:
      - {node: pve2, maxmem: 34359738368, maxcpu: 8, configured_memory: 0, configured_cpus: 0, free_memory: 34359738368, group_members: 0}
    excluded: {pve5: offline}
known_after_apply:
  description:
    - In check mode, the result keys whose value only Proxmox VE decides when the change is applied (the MAC of a new NIC, the volume of a new disk, the
      addresses of a guest yet to start); they are null in the result, and the config values in RV(diff) and RV(actions) show C((known after apply)) in their
      place.
  returned: check mode, when such a value is part of the result
  type: list
  elements: str
  sample: ["mac.net0", "devices.scsi0"]
"""

from ansible.module_utils import basic
from ansible.module_utils.basic import env_fallback

ARGUMENT_SPEC = {
    'api_host': {'type': 'str', 'fallback': (env_fallback, ['PROXMOX_HOST'])},
    'api_port': {'type': 'int', 'fallback': (env_fallback, ['PROXMOX_PORT'])},
    'api_user': {'type': 'str', 'default': 'root@pam', 'fallback': (env_fallback, ['PROXMOX_USER'])},
    'api_password': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_PASSWORD'])},
    'api_token_id': {'type': 'str', 'no_log': False, 'fallback': (env_fallback, ['PROXMOX_TOKEN_ID'])},
    'api_token_secret': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_TOKEN_SECRET'])},
    'api_otp': {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ['PROXMOX_OTP'])},
    'validate_certs': {'type': 'bool', 'default': True, 'fallback': (env_fallback, ['PROXMOX_VALIDATE_CERTS'])},
    'ca_path': {'type': 'path', 'fallback': (env_fallback, ['PROXMOX_CA_PATH'])},
    'api_cert_fingerprint': {'type': 'str', 'fallback': (env_fallback, ['PROXMOX_CERT_FINGERPRINT'])},
    'api_timeout': {'type': 'int', 'default': 5, 'fallback': (env_fallback, ['PROXMOX_API_TIMEOUT'])},
    'acpi': {'type': 'bool'},
    'agent': {'type': 'str'},
    'args': {'type': 'str'},
    'autostart': {'type': 'bool'},
    'balloon': {'type': 'int'},
    'bios': {'type': 'str', 'choices': ['seabios', 'ovmf']},
    'boot': {'type': 'str'},
    'bootdisk': {'type': 'str'},
    'cores': {'type': 'int'},
    'cpu': {'type': 'str'},
    'cpulimit': {'type': 'int'},
    'cpuunits': {'type': 'int'},
    'description': {'type': 'str'},
    'freeze': {'type': 'bool'},
    'hookscript': {'type': 'str'},
    'hotplug': {'type': 'str'},
    'hugepages': {'type': 'str', 'choices': ['any', '2', '1024']},
    'keyboard': {'type': 'str', 'no_log': False},
    'kvm': {'type': 'bool'},
    'localtime': {'type': 'bool'},
    'lock': {'type': 'str', 'choices': ['migrate', 'backup', 'snapshot', 'rollback']},
    'machine': {'type': 'str'},
    'memory': {'type': 'int'},
    'migrate_downtime': {'type': 'int'},
    'migrate_speed': {'type': 'int'},
    'name': {'type': 'str'},
    'numa_enabled': {'type': 'bool'},
    'onboot': {'type': 'bool'},
    'ostype': {
        'type': 'str',
        'choices': ['other', 'wxp', 'w2k', 'w2k3', 'w2k8', 'wvista', 'win7', 'win8', 'win10', 'win11', 'l24', 'l26', 'solaris'],
    },
    'protection': {'type': 'bool'},
    'reboot': {'type': 'bool'},
    'rng0': {'type': 'str'},
    'scsihw': {'type': 'str', 'choices': ['lsi', 'lsi53c810', 'virtio-scsi-pci', 'virtio-scsi-single', 'megasas', 'pvscsi']},
    'shares': {'type': 'int'},
    'smbios': {'type': 'str'},
    'sockets': {'type': 'int'},
    'startdate': {'type': 'str'},
    'startup': {'type': 'str'},
    'tablet': {'type': 'bool'},
    'tags': {'type': 'list', 'elements': 'str'},
    'tdf': {'type': 'bool'},
    'template': {'type': 'bool'},
    'vcpus': {'type': 'int'},
    'vga': {'type': 'str'},
    'watchdog': {'type': 'str'},
    'allow_ksm': {'type': 'bool'},
    'spice_enhancements': {'type': 'str'},
    'affinity': {'type': 'str'},
    'arch': {'type': 'str', 'choices': ['x86_64', 'aarch64']},
    'keephugepages': {'type': 'bool'},
    'vmgenid': {'type': 'str'},
    'vmstatestorage': {'type': 'str'},
    'extra_config': {'type': 'dict'},
    'audio': {'type': 'dict'},
    'efidisk0': {
        'type': 'dict',
        'options': {
            'storage': {'type': 'str'},
            'format': {'type': 'str', 'choices': ['raw', 'cow', 'qcow', 'qed', 'qcow2', 'vmdk', 'cloop']},
            'efitype': {'type': 'str', 'choices': ['2m', '4m']},
            'pre_enrolled_keys': {'type': 'bool', 'no_log': False},
            'ms_cert': {'type': 'str', 'choices': ['2011', '2023', '2023w', '2023k']},
        },
    },
    'hostpci': {'type': 'dict'},
    'ide': {'type': 'dict'},
    'net': {'type': 'dict'},
    'numa': {'type': 'dict'},
    'parallel': {'type': 'dict'},
    'sata': {'type': 'dict'},
    'scsi': {'type': 'dict'},
    'serial': {'type': 'dict'},
    'tpmstate0': {
        'type': 'dict',
        'options': {'storage': {'type': 'str', 'required': True}, 'version': {'type': 'str', 'default': '2.0', 'choices': ['1.2', '2.0']}},
    },
    'usb': {'type': 'dict'},
    'virtio': {'type': 'dict'},
    'virtiofs': {'type': 'dict'},
    'cicustom': {'type': 'str'},
    'cipassword': {'type': 'str', 'no_log': True},
    'update_password': {'type': 'str', 'default': 'on_create', 'choices': ['always', 'on_create'], 'no_log': False},
    'citype': {'type': 'str', 'choices': ['nocloud', 'configdrive2']},
    'ciupgrade': {'type': 'bool'},
    'ciuser': {'type': 'str'},
    'ipconfig': {'type': 'dict'},
    'nameservers': {'type': 'list', 'elements': 'str'},
    'searchdomains': {'type': 'list', 'elements': 'str'},
    'sshkeys': {'type': 'str', 'no_log': False},
    'vmid': {'type': 'int'},
    'vmid_range': {'type': 'list', 'elements': 'int'},
    'node': {'type': 'str'},
    'placement': {
        'type': 'dict',
        'options': {
            'nodes': {'type': 'list', 'elements': 'str'},
            'strategy': {'type': 'str', 'default': 'most_free', 'choices': ['most_free', 'spread']},
            'group': {'type': 'str'},
            'max_memory_ratio': {'type': 'float'},
        },
    },
    'pool': {'type': 'str'},
    'ha_managed': {'type': 'bool'},
    'state': {
        'type': 'str',
        'default': 'present',
        'choices': ['present', 'started', 'absent', 'stopped', 'restarted', 'current', 'template', 'paused', 'hibernated'],
    },
    'update': {'type': 'bool', 'default': False},
    'update_unsafe': {'type': 'bool', 'default': False},
    'apply_pending': {'type': 'str', 'default': 'keep', 'choices': ['keep', 'reboot']},
    'clone': {'type': 'str'},
    'newid': {'type': 'int'},
    'full': {'type': 'bool', 'default': True},
    'format': {'type': 'str', 'choices': ['cloop', 'cow', 'qcow', 'qcow2', 'qed', 'raw', 'vmdk', 'unspecified']},
    'snapname': {'type': 'str'},
    'storage': {'type': 'str'},
    'target': {'type': 'str'},
    'archive': {'type': 'str'},
    'force': {'type': 'bool'},
    'purge': {'type': 'bool', 'default': False},
    'destroy_unreferenced_disks': {'type': 'bool', 'default': False},
    'delete': {'type': 'str'},
    'revert': {'type': 'str'},
    'migrate': {'type': 'bool', 'default': False},
    'with_local_disks': {'type': 'bool', 'default': False},
    'targetstorage': {'type': 'str'},
    'with_conntrack_state': {'type': 'bool'},
    'migration_network': {'type': 'str'},
    'migration_type': {'type': 'str', 'choices': ['secure', 'insecure']},
    'bwlimit': {'type': 'int'},
    'unique': {'type': 'bool'},
    'live_restore': {'type': 'bool'},
    'import_working_storage': {'type': 'str'},
    'digest': {'type': 'str'},
    'skiplock': {'type': 'bool'},
    'timeout': {'type': 'int', 'default': 30},
    'wait_for_agent': {'type': 'bool', 'default': False},
    'wait_for_ip': {'type': 'bool', 'default': False},
    'ip_family': {'type': 'str', 'default': 'any', 'choices': ['ipv4', 'ipv6', 'any']},
    'wait_timeout': {'type': 'int', 'default': 300},
    'check_mode_assume': {'type': 'dict', 'options': {'volumes': {'type': 'list', 'elements': 'str'}, 'pools': {'type': 'list', 'elements': 'str'}}},
}

NOT_THE_MODULE = (
    'plugins/modules/proxmox_kvm.py holds only the documentation and argument spec of ferrox.proxmox.proxmox_kvm; the module is a binary, run by '
    'the action plugin ferrox.proxmox.proxmox_kvm. Something ran this file instead: call the module by its name (ferrox.proxmox.proxmox_kvm) and '
    'do not replace its action plugin.'
)


def main():
    # AnsibleModule is looked up when called: the argument checks replace it to read the spec.
    module = basic.AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
        mutually_exclusive=[
            ['delete', 'revert'],
            ['delete', 'update'],
            ['revert', 'update'],
            ['clone', 'update'],
            ['clone', 'delete'],
            ['clone', 'revert'],
        ],
        required_one_of=[['name', 'vmid']],
    )
    module.fail_json(msg=NOT_THE_MODULE)


if __name__ == '__main__':
    main()
