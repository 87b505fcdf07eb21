//! The options of `proxmox_kvm`, declared once: every option of community.proxmox 1.6
//! with its type, default and choices, the 2.0 additions, and the few options that
//! exist only here (`apply_pending`, `vmid_range`, `wait_cluster_timeout`, waiting for the
//! guest).
//!
//! Validation, the sidecar docs and the typed task ([`crate::task`]) all read this list;
//! the choices of `state`, `apply_pending`, `update_password` and `ip_family` are the
//! typed task's enums.

use ferrox_ansible::options::{Choice, Kind, Opt, Params, Rules};
use ferrox_cluster::guest_net::Family;
use ferrox_run::connection;

use crate::task::choices::{ApplyPending, State, UpdatePassword};

/// Every option: the shared connection options first, then the module's own.
pub(crate) fn all() -> Vec<Opt> {
    let mut opts = connection::options();
    opts.extend(vm_config());
    opts.extend(pve9_config());
    opts.extend(disks_and_devices());
    opts.extend(cloud_init());
    opts.extend(control());
    opts.extend(guest_wait());
    opts.push(ferrox_ansible::check_mode_assume::option());
    opts
}

/// The constraints between options (community.proxmox 1.6 §2.3), with `node` relaxed:
/// it is needed only to create a VM, which the module checks itself.
pub(crate) fn rules() -> Rules {
    Rules::default()
        .mutually_exclusive(&["delete", "revert"])
        .mutually_exclusive(&["delete", "update"])
        .mutually_exclusive(&["revert", "update"])
        .mutually_exclusive(&["clone", "update"])
        .mutually_exclusive(&["clone", "delete"])
        .mutually_exclusive(&["clone", "revert"])
        .required_one_of(&["name", "vmid"])
        .merge(connection::rules())
}

fn bool_key(name: &'static str, what: &str) -> Opt {
    Opt::bool(name).desc(what.to_string())
}

fn dict_devices(name: &'static str, what: &str, example: &str) -> Opt {
    Opt::dict(name).desc(what.to_string()).desc(format!(
        "Keys are PVE config keys, values PVE property strings, for example C({example})."
    ))
}

/// Options that map one-to-one onto a VM config key.
fn vm_config() -> Vec<Opt> {
    vec![
        bool_key("acpi", "Enable or disable ACPI."),
        Opt::str("agent")
            .desc("Enable the QEMU guest agent. A boolean (C(true)/C(false)) is sent as C(1)/C(0); anything else is sent as a property string, for example C(enabled=1,fstrim_cloned_disks=1)."),
        Opt::str("args").desc("Arbitrary arguments passed to KVM, for example C(-serial unix:/var/run/qemu-server/<vmid>.serial,server,nowait). Only allowed for C(root@pam) authenticated by password."),
        bool_key("autostart", "Automatic restart after a crash (currently ignored by PVE)."),
        Opt::int("balloon").desc("Target amount of RAM for the VM in MiB. C(0) disables the balloon driver."),
        Opt::str("bios").choices(&["seabios", "ovmf"]).desc("BIOS implementation."),
        Opt::str("boot")
            .desc("Boot order, for example C(order=scsi0;ide2;net0).")
            .warn_when(
                |p| p.str("boot").is_some_and(is_legacy_boot),
                "boot in legacy letters (c: the bootdisk, d: CD-ROM, n: network) is deprecated by Proxmox VE: name the devices in order instead, for example boot: order=scsi0;ide2;net0.",
            ),
        Opt::str("bootdisk").desc("Boot disk (legacy; prefer O(boot))."),
        Opt::int("cores").desc("Number of cores per socket."),
        Opt::str("cpu").desc("Emulated CPU type, for example C(host) or C(x86-64-v3)."),
        Opt::int("cpulimit").desc("Limit of CPU usage (0 means unlimited)."),
        Opt::int("cpuunits").desc("CPU weight of the VM."),
        Opt::str("description").desc("Description of the VM, shown in the web interface's summary."),
        bool_key("freeze", "Freeze the CPU at startup (use the C(c) monitor command to start execution)."),
        Opt::str("hookscript").desc("Script run at the VM's lifecycle steps, for example C(local:snippets/hook.pl)."),
        Opt::str("hotplug").desc("Hotplug features, for example C(network,disk,usb); C(0) disables hotplug."),
        Opt::str("hugepages").choices(&["any", "2", "1024"]).desc("Enable or disable hugepages memory."),
        Opt::str("keyboard").desc("Keyboard layout for VNC."),
        bool_key("kvm", "Enable or disable KVM hardware virtualization."),
        bool_key("localtime", "Set the real time clock to local time (default for Windows guests)."),
        Opt::str("lock").choices(&["migrate", "backup", "snapshot", "rollback"]).desc("Lock the VM."),
        Opt::str("machine").desc("QEMU machine type, for example C(q35)."),
        Opt::int("memory").desc("Memory size in MiB."),
        Opt::int("migrate_downtime").desc("Maximum tolerated downtime (seconds) for migrations."),
        Opt::int("migrate_speed").desc("Maximum speed (MB/s) for migrations (0 means no limit)."),
        Opt::str("name")
            .desc("Name of the VM. Also how the VM is found when O(vmid) is not given: only QEMU VMs are considered. When several VMs have that name and O(node) is given, the one on O(node) is meant; otherwise (or when O(node) holds none or several of them) the module fails with a list of their vmids.")
            .desc("When cloning, the name of the new VM."),
        bool_key("numa_enabled", "Enable NUMA (sent as the C(numa) config key)."),
        bool_key("onboot", "Start the VM when the node boots."),
        Opt::str("ostype")
            .choices(&["other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26", "solaris"])
            .desc("Guest operating system, used by PVE to enable OS-specific optimisations."),
        bool_key("protection", "Protect the VM from removal (and its disks from removal)."),
        bool_key("reboot", "Allow reboot. If false, the VM exits when it reboots."),
        Opt::str("rng0")
            .desc("VirtIO random number generator, for example C(source=/dev/urandom).")
            .warn_when(
                needs_rng_for_network_boot,
                "Network boot of a UEFI VM (bios: ovmf) needs a random number generator since Proxmox VE 8.3.5 (its UEFI firmware will not start the network stack without one): add rng0: source=/dev/urandom.",
            ),
        Opt::str("scsihw")
            .choices(&["lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi"])
            .desc("SCSI controller model."),
        Opt::int("shares").desc("Amount of memory shares for auto-ballooning."),
        Opt::str("smbios").desc("SMBIOS type 1 fields (sent as C(smbios1)), for example C(manufacturer=ACME). On update, fields PVE set itself (the C(uuid)) are kept."),
        Opt::int("sockets").desc("Number of CPU sockets."),
        Opt::str("startdate").desc("Initial date of the real time clock, C(now) or C(2006-06-17T16:01:21)."),
        Opt::str("startup").desc("Startup and shutdown behaviour, for example C(order=1,up=30,down=60)."),
        bool_key("tablet", "Enable the USB tablet device."),
        Opt::list("tags", Kind::Str)
            .desc("Tags of the VM. Each must match C(^[a-zA-Z0-9_][a-zA-Z0-9_\\-\\+\\.]*$).")
            .desc("Compared without regard to order or case (PVE stores them lower case and sorted)."),
        bool_key("tdf", "Enable time drift fix."),
        bool_key("template", "Set the C(template) config flag. Prefer O(state=template), which converts the disks too."),
        Opt::int("vcpus").desc("Number of hotplugged vCPUs."),
        Opt::str("vga").desc("VGA hardware, for example C(std), C(qxl) or C(serial0)."),
        Opt::str("watchdog").desc("Virtual watchdog device, for example C(model=i6300esb,action=reset)."),
        bool_key("allow_ksm", "Allow memory pages of this VM to be merged by KSM (sent as C(allow-ksm)).").added("0.1.0"),
        Opt::str("spice_enhancements").desc("SPICE enhancements, for example C(foldersharing=1,videostreaming=all).").added("0.1.0"),
    ]
}

/// The config keys added to PVE after community.proxmox 1.6, and the pass-through for
/// any other key of the schema (a key PVE adds later needs no release of this module).
fn pve9_config() -> Vec<Opt> {
    vec![
        Opt::str("affinity").added("0.2.0").desc("Host cores the VM's processes run on, for example C(0,5,8-11) (sent as C(affinity)). Takes effect at the next start; PVE lets only C(root@pam) (password login) set it."),
        Opt::str("arch").added("0.2.0").choices(&["x86_64", "aarch64"]).desc("Virtual processor architecture (PVE's default: the host's). PVE lets only C(root@pam) (password login) set it."),
        bool_key("keephugepages", "Keep the hugepages of O(hugepages) after the VM shuts down, for its next start. PVE lets only C(root@pam) (password login) set it.").added("0.2.0"),
        Opt::str("vmgenid")
            .added("0.2.0")
            .desc("VM generation ID: a UUID, C(1) to have PVE generate one (an existing ID satisfies C(1), so a rerun changes nothing), or C(0) to disable it. PVE lets only C(root@pam) (password login) set it."),
        Opt::str("vmstatestorage").added("0.2.0").desc("Storage for the VM state of snapshots with RAM and of hibernation."),
        Opt::dict("extra_config")
            .added("0.2.0")
            .desc("Any other key of the VM config, set as PVE's C(qm set) would: a dict of PVE config keys to values, for example C({\"newkey\": \"value\"}). Converged, diffed, predicted in check mode and reported as pending like the declared options.")
            .desc("Checked before anything is written against the Proxmox VE API schema the module carries (PVE 9.1, with the keys later releases added): a value not in the key's format fails naming the key and the format, and a key that has its own option (O(cores), O(net), O(efidisk0), ...) is refused there, naming the option. A key or sub-key the module does not know, or one a later qemu-server release added (C(net) C(host-tunnel), C(cpu) C(level), C(agent) C(freeze-fs)), is never refused on a version: the node the VM is on parses it with its own qemu-server, which no version the module can read tells, so it is sent (with a warning for a key the module does not know, and in check mode for every such key) and a node that lacks it refuses the call that carries it (the create, or the config update of an existing or cloned VM) before that call changes anything; the task fails naming the key, the node and the fix (upgrade qemu-server on that node). Which privilege such a key needs is left to the cluster.")
            .desc("Keys set this way today: C(amd-sev), C(intel-tdx) (confidential computing) and C(ivshmem) (shared memory with the host): hardware features whose property strings PVE keeps extending, so the schema's format is the one to follow, and O(extra_config) converges them like any option, for example C({\"amd-sev\": \"type=snp,allow-smt=1\"}). Like PVE, only C(root@pam) (password login) may set them; they take effect at the next start.")
            .desc("The parameters of PVE's create call that are not config keys have their own options or no place in a task: C(start) is O(state=started), C(ha-managed) is O(ha_managed), C(archive), C(storage), C(pool), C(unique), C(live-restore), C(import-working-storage) and C(bwlimit) are O(archive), O(storage), O(pool), O(unique), O(live_restore), O(import_working_storage) and O(bwlimit), C(force), C(skiplock), C(digest), C(delete) and C(revert) are options of their own, and C(background_delay) does not apply (the module waits for every task)."),
    ]
}

/// Disks, NICs and other numbered devices.
fn disks_and_devices() -> Vec<Opt> {
    vec![
        dict_devices("audio", "Audio devices.", "audio0: device=ich9-intel-hda,driver=spice"),
        Opt::dict_of(
            "efidisk0",
            vec![
                Opt::str("storage").desc("Storage to allocate the EFI disk on."),
                Opt::str("format").choices(&["raw", "cow", "qcow", "qed", "qcow2", "vmdk", "cloop"]).desc("Format of the disk."),
                Opt::str("efitype").choices(&["2m", "4m"]).desc("Size of the OVMF variables store (C(4m) is needed for Secure Boot)."),
                Opt::bool("pre_enrolled_keys").desc("Pre-enroll the distribution and Microsoft Secure Boot keys."),
                Opt::str("ms_cert")
                    .added("0.2.0")
                    .choices(&["2011", "2023", "2023w", "2023k"])
                    .desc("The Microsoft UEFI certificates enrolled (PVE's C(ms-cert)). V(2023k) has PVE enroll the Microsoft UEFI CA 2023, the Windows UEFI CA 2023 and the Microsoft KEK 2023 into an existing EFI disk (the 2011 certificates expire in June 2026); a new EFI disk with pre-enrolled keys gets them from PVE 9. V(2023) and V(2023w) are deprecated by PVE (it records V(2023k) when it enrolls); an EFI disk that has them already satisfies them.")
                    .desc("Needs O(efidisk0.pre_enrolled_keys) on the disk. On a running VM the enrollment waits for the next start and is reported in RV(pending)."),
            ],
        )
        .desc("EFI vars disk. Needs O(bios=ovmf) when it is created.")
        .desc("Unset sub-options are left out (PVE's defaults apply) rather than sent as C(None)."),
        dict_devices("hostpci", "PCI passthrough devices.", "hostpci0: 0000:01:00.0,pcie=1"),
        dict_devices("ide", "IDE drives (C(ide0) to C(ide3)).", "ide2: local:iso/debian.iso,media=cdrom")
            .desc("On an existing VM a drive's options change in place, its size only grows (resize) and its volume is never replaced; see O(scsi)."),
        dict_devices("net", "Network interfaces (C(net0) to C(net31)).", "net0: virtio,bridge=vmbr0,tag=10")
            .desc("On an existing VM a NIC keeps its MAC address unless the value names one; other settings change in place. New keys add NICs; NICs not named here are left alone."),
        Opt::dict("numa").type_hint(
            "numa is the NUMA topology, a dict of numaN entries (PVE property strings) such as numa0: cpus=0-3,memory=2048; to turn NUMA on, use numa_enabled: true.",
        ),
        dict_devices("parallel", "Parallel ports.", "parallel0: /dev/parport0"),
        dict_devices("sata", "SATA drives (C(sata0) to C(sata5)).", "sata0: local-lvm:32")
            .desc("Same rules as O(scsi) on an existing VM."),
        dict_devices("scsi", "SCSI drives (C(scsi0) to C(scsi30)).", "scsi0: local-lvm:32,discard=on,ssd=1")
            .desc("C(STORAGE:SIZE) (GiB) allocates a new disk when the key is not in use yet. On an existing VM, a drive's options change in place and a larger size grows it (resize); a smaller size, another storage or another bus fail with a message naming the safe route (M(ferrox.proxmox.proxmox_disk) with O(ferrox.proxmox.proxmox_disk#module:state=moved) or O(ferrox.proxmox.proxmox_disk#module:state=resized)). No disk is ever detached, replaced or destroyed by this option."),
        dict_devices("serial", "Serial ports (C(serial0) to C(serial3)).", "serial0: socket"),
        Opt::dict_of(
            "tpmstate0",
            vec![
                Opt::str("storage").required().desc("Storage to allocate the TPM state on."),
                Opt::str("version").default("2.0").choices(&["1.2", "2.0"]).desc("TPM version (cannot change later)."),
            ],
        )
        .desc("TPM state disk, created when the VM has none."),
        dict_devices("usb", "USB devices.", "usb0: host=1234:5678"),
        dict_devices("virtio", "VirtIO drives (C(virtio0) to C(virtio15)).", "virtio0: local-lvm:32,iothread=1")
            .desc("Same rules as O(scsi) on an existing VM."),
        dict_devices("virtiofs", "Host directories shared with the guest (C(virtiofs0) to C(virtiofs9)).", "virtiofs0: dirid=share1,cache=auto").added("0.1.0"),
    ]
}

fn cloud_init() -> Vec<Opt> {
    vec![
        Opt::str("cicustom").desc("Custom cloud-init files, for example C(user=local:snippets/user.yml)."),
        Opt::str("cipassword")
            .no_log()
            .desc("Cloud-init password of O(ciuser). PVE never reveals the stored password, so it cannot be compared: on an existing VM it is set only when the VM has none, unless O(update_password=always)."),
        Opt::str("update_password")
            .default("on_create")
            .choices(&UpdatePassword::names())
            .added("0.2.0")
            .desc("V(on_create) sets O(cipassword) only on a VM that has none (a new VM, or one without a password). V(always) sends it on every update (O(update=true)), so the task reports a change each time; the password never appears in the result or C(--diff), which show PVE's mask C(**********)."),
        Opt::str("citype").choices(&["nocloud", "configdrive2"]).desc("Cloud-init configuration format."),
        Opt::bool("ciupgrade").desc("Upgrade packages on the first boot."),
        Opt::str("ciuser").desc("Cloud-init user."),
        dict_devices("ipconfig", "Cloud-init IP configuration per NIC.", "ipconfig0: ip=192.0.2.10/24,gw=192.0.2.1"),
        Opt::list("nameservers", Kind::Str).desc("DNS servers for cloud-init (sent space-separated as C(nameserver))."),
        Opt::list("searchdomains", Kind::Str).desc("DNS search domains for cloud-init (sent space-separated as C(searchdomain))."),
        Opt::str("sshkeys").desc("Public SSH keys for cloud-init, one per line. Compared with the VM's keys after decoding, so an unchanged list is not an update."),
    ]
}

/// `placement`: the node of a created VM, chosen by ferrox when `node` is not given.
fn placement() -> Opt {
    Opt::dict_of(
        "placement",
        vec![
            Opt::list("nodes", Kind::Str).desc("The candidate nodes. Default: every node of the cluster. Only online nodes are taken."),
            Opt::str("strategy")
                .default("most_free")
                .choices(&crate::task::placement::Strategy::names())
                .desc("V(most_free): the node with the most free memory, then the most free CPUs, counting what this run already placed (placed creates of one run choose one at a time).")
                .desc("V(spread): a node derived from O(name) alone (rendezvous hashing with the FNV-1a of O(vmid_range)): the same name gets the same node on every run and in two runs at once, names spread evenly over the candidates, and a node added to them takes only its share of names. A name whose node is full (see O(placement.max_memory_ratio)) goes to its next node by the same hashing. Like V(most_free), the placed creates of one run choose one at a time, so each sees what the others placed (in check mode too). The rule is stable across versions; should it change, the changelog says so."),
            Opt::str("group").desc("Anti-affinity: VMs of the same group go to different nodes while there are nodes without one; after that each goes where O(placement.strategy) says (the most free memory for V(most_free), the name's node for V(spread)), not to the node with the fewest members, so a small node is not filled as fast as a large one. Members are the VMs this run placed in the group and the guests tagged with the group's name (add it to O(tags) for later runs to see them)."),
            Opt::float("max_memory_ratio").desc("A node is full, and excluded, when the configured memory of its guests plus this VM would exceed this ratio times its memory. Default: C(1.0), no overcommit: placement never configures a node past its memory unless this is set above 1 (for example C(1.5) to configure up to 150%). PVE itself checks no memory when a VM is created, so an overcommitted node fails only later, when its last guests start or it swaps; a value above 1 is for guests known not to use all their memory at once."),
        ],
    )
    .added("0.2.0")
    .desc("Create or clone without naming O(node): ferrox chooses among the candidates. Applies only when O(node) is not given and the VM is created (a clone without O(target)); a VM that exists is found wherever it is and never moved.")
    .desc("Free memory is the node's memory (C(maxmem) in C(/cluster/resources)) less the configured memory of every guest on it, running or stopped: PVE reserves nothing for a stopped guest, but starting it needs its memory. Free CPUs likewise, from C(maxcpu).")
    .desc("A candidate is excluded, with the reason kept, when it is offline, its memory is not listed (the token needs C(Sys.Audit) on C(/nodes/<node>) for placement to hold nodes to their memory), it is full (see O(placement.max_memory_ratio)), lacks a storage the task's drives, O(efidisk0), O(tpmstate0), cloud-init drive or O(storage) name or has it disabled or not active (C(status: unknown) in C(/cluster/resources): the node cannot reach it, for example an NFS server it cannot mount), lacks a bridge the task's NICs name, or cannot take the clone source (a linked clone stays on its template's node; with one same-named template per node, each node clones its own). With no candidate left the task fails naming every node and its reason, and creates nothing.")
    .desc("The result has RV(node) and RV(placement) (the candidates, their numbers, the exclusions); C(--diff) shows the node. A task that finds its VM existing (made earlier, or by another run at the same moment) reports the RV(node) it is on. Check mode chooses by the same rule over the same placements.")
}

/// Options that select the VM and steer the run rather than set config keys.
fn control() -> Vec<Opt> {
    vec![
        Opt::vmid("vmid").desc("The VM's id. When cloning, the id of the source VM.").desc("When not set, the VM is found by O(name); a new VM gets a free id, see O(vmid_range)."),
        Opt::list("vmid_range", Kind::Int)
            .added("0.1.0")
            .desc("C([first, last]): allocate new vmids (create and clone without O(vmid)/O(newid)) from this inclusive range instead of PVE's C(/cluster/nextid).")
            .desc("The vmid is derived from O(name): the first id tried is C(first) plus the 64-bit FNV-1a hash of its UTF-8 bytes modulo the number of ids in the range, then each next id upward, wrapping from C(last) to C(first); an id held by a VM of another name is skipped. Without O(name), ids are tried from C(first) upward. A range whose ids are all held by other names fails, naming the range.")
            .desc("So two runs creating the same name at once ask PVE for the same vmid, PVE creates it only once, and the other run converges onto that VM (C(changed) only if it had to change something). This is the way to run the same play several times at once.")
            .desc("The order is stable across versions: a rerun picks the same id for a name not yet created. Should it ever change, the changelog says so."),
        Opt::str("node")
            .desc("Node to create the VM on, and the target node of O(migrate=true).")
            .desc("Required only to create a VM (without O(clone)) unless O(placement) is given. For an existing VM the node that holds it is found from the cluster; a clone is made on the source's node."),
        placement(),
        Opt::str("pool")
            .desc("Resource pool of a new VM or clone. With O(update=true), an existing VM listed in another pool (or in none) is moved into it, in the same write leaving its old pool (PVE's pool update with C(allow-move)); without O(update) a warning names the difference. Without O(pool) the VM's pool is left as it is.")
            .desc("A nested pool of PVE 8.1 or later is named with its parent, for example C(prod/web)."),
        Opt::bool("ha_managed")
            .added("0.2.0")
            .desc("Create the VM as an HA resource (sent as C(ha-managed) with the create; PVE 9.0.24 or later, older versions fail naming this before anything is made). PVE gives it the request state C(stopped); from then on PVE's HA manager starts, stops and migrates it (a later O(state=started) task, O(migrate=true)), and the module waits until the VM has reached the state or node asked for.")
            .desc("Applies to a VM this task creates or restores (PVE's clone has no such parameter: a clone gets a warning); an existing VM that is not HA-managed gets a warning and is left as it is."),
        Opt::str("state")
            .default("present")
            .choices(&State::names())
            .desc("V(present) creates the VM (or clones it), and with O(update=true) converges an existing one. V(started), V(stopped), V(restarted), V(paused) (suspend in RAM), V(hibernated) (suspend to disk) change the power state. V(current) reports it. V(template) converts the VM. V(absent) removes it."),
        Opt::bool("update")
            .default(false)
            .desc("Converge an existing VM to the task: the task is compared with the VM's config and only the keys that differ are written, guarded by the config's digest. Creates the VM when it does not exist."),
        Opt::bool("update_unsafe")
            .default(false)
            .desc("Accepted for compatibility (see O(scsi), O(net)).")
            .warn_when(
                |p| p.flag("update_unsafe"),
                "update_unsafe is no longer needed: disks and NICs are always updated safely, a NIC keeps its MAC and a disk its volume; leave it out.",
            ),
        Opt::str("apply_pending")
            .default("keep")
            .choices(&ApplyPending::names())
            .added("0.1.0")
            .desc("What to do when an update of a running VM leaves changes pending (PVE could not hotplug them). V(keep) leaves them pending and lists them in RV(pending); V(reboot) reboots the VM so they take effect."),
        Opt::str("clone").desc("Name of the VM to clone (with O(vmid) set, any value: O(vmid) is the source). The rest of the task (cores, memory, net, cloud-init, ...) is applied to the clone in the same run.")
            .desc("When several VMs have that name (one template per node with local storage), the one on the node the clone is to be made on (O(target), else O(node)) is cloned; the module fails listing the candidates per node when that node holds none or several."),
        Opt::vmid("newid").desc("vmid of the clone. When not set, a VM named O(name) is taken to be the clone; otherwise a free id is allocated."),
        Opt::bool("full").default(true).desc("Full clone (V(true)) or linked clone (V(false), from a template)."),
        Opt::str("format")
            .choices(&["cloop", "cow", "qcow", "qcow2", "qed", "raw", "vmdk", "unspecified"])
            .desc("Disk format of a full clone. V(unspecified) means: the storage's default."),
        Opt::str("snapname").desc("Snapshot to clone from."),
        Opt::str("storage").desc("Target storage of a full clone (PVE refuses it for linked clones), or the storage of a restore from O(archive)."),
        Opt::str("target")
            .desc("Target node of a clone. With the source's disks on shared storage (or a shared O(storage)), PVE clones straight there.")
            .desc("When they are on storage local to the source's node, the clone is made there, migrated offline to O(target) (its disks onto O(storage) there, else onto storages of the same names), then configured, in the same task; a rerun finds it on O(target). A linked clone (O(full=false)) cannot move and fails."),
        Opt::str("archive").desc("Backup archive to restore when creating the VM, for example C(local:backup/vzdump-qemu-100.vma.zst)."),
        Opt::bool("force")
            .desc("V(state=stopped): power off when the graceful shutdown did not finish within O(timeout). V(state=restarted): reset instead of reboot. V(state=absent), V(state=template): stop a running VM first. With O(archive): overwrite an existing VM.")
            .desc("Never sent on update."),
        Opt::bool("purge").default(false).desc("V(state=absent): also remove the VM from backup jobs, replication and HA. PVE removes a VM that has an HA resource only with it, whether or not HA manages the VM (a resource in state C(ignored), or the HA stack disarmed); without it the task fails before anything is stopped."),
        Opt::bool("destroy_unreferenced_disks")
            .default(false)
            .added("0.1.0")
            .desc("V(state=absent): also destroy volumes of this vmid that are not referenced by its config."),
        Opt::str("delete").desc("Comma-separated config keys to delete. Keys the VM does not have are skipped, so a rerun reports no change. Deleted disks become C(unusedN), their data stays; deleting an C(unusedN) key frees its volume, and its data is lost."),
        Opt::str("revert").desc("Comma-separated config keys whose pending change is dropped."),
        Opt::bool("migrate").default(false).desc("Migrate the VM to O(node) (online when running)."),
        Opt::bool("with_local_disks").default(false).desc("Migrate local disks too."),
        Opt::str("targetstorage").added("0.2.0").desc("O(migrate=true): where local disks go on the target node, one storage or C(source:target) pairs, for example C(local-lvm) or C(local-lvm:fast,local:local)."),
        Opt::bool("with_conntrack_state").added("0.2.0").desc("O(migrate=true) of a running VM: carry the firewall's connection tracking state over (sent as C(with-conntrack-state))."),
        Opt::str("migration_network").added("0.2.0").desc("O(migrate=true): the network (CIDR) the migration traffic takes, for example C(10.1.2.0/24). PVE lets only C(root@pam) set it."),
        Opt::str("migration_type").added("0.2.0").choices(&["secure", "insecure"]).desc("O(migrate=true): V(insecure) sends the VM's memory unencrypted (faster, on a trusted network only). PVE lets only C(root@pam) set it."),
        Opt::int("bwlimit").added("0.2.0").at_least(0).desc("I/O bandwidth limit in KiB/s of a restore from O(archive), a clone (O(clone)) or a migration (O(migrate=true)); PVE's default comes from the datacenter and storage settings."),
        Opt::bool("unique").added("0.2.0").desc("With O(archive): give the restored VM's NICs new random MAC addresses."),
        Opt::bool("live_restore").added("0.2.0").desc("With O(archive) from a Proxmox Backup Server: start the VM at once and restore in the background (sent as C(live-restore))."),
        Opt::str("import_working_storage").added("0.2.0").desc("When a VM is created with a disk imported (C(import-from)) from an OVA: the file-based storage PVE extracts it on first (sent as C(import-working-storage)); PVE's default is the source storage."),
        Opt::str("digest").desc("Only change the config if its SHA1 digest still equals this value. Without it, the digest the module read is used, so a concurrent change is never overwritten."),
        Opt::bool("skiplock").desc("Ignore locks (only C(root@pam) authenticated by password)."),
        Opt::int("timeout")
            .default(30)
            .at_least(1)
            .desc("Seconds to wait for each PVE task, and the graceful-shutdown time of V(state=stopped). Creating, cloning and restoring wait at least 300 seconds (full clones of big disks take minutes), unless a larger value is given."),
    ]
}

/// `state: started` / `restarted` waiting until the guest can be reached.
fn guest_wait() -> Vec<Opt> {
    vec![
        Opt::bool("wait_for_agent")
            .default(false)
            .added("0.2.0")
            .desc("With V(state=started) or V(state=restarted): after the start or reboot (or at once, for a VM already running), wait until the QEMU guest agent in the guest answers, then return its addresses in RV(ip_addresses) and RV(ip_address).")
            .desc("Needs O(agent) enabled in the VM's config and qemu-guest-agent running in the guest, and the privilege to read it (Proxmox VE 9: C(VM.GuestAgent.Audit); 8: C(VM.Monitor)); without them the task fails at once, before starting anything. A V(state=restarted) waits for the agent of the new boot.")
            .warn_when(waits_elsewhere, "wait_for_agent and wait_for_ip apply only to state: started and state: restarted; this task does not wait."),
        Opt::bool("wait_for_ip")
            .default(false)
            .added("0.2.0")
            .desc("Like O(wait_for_agent), and also wait until the guest has a usable address of O(ip_family) on one of its NICs: not loopback, not link-local (C(fe80::/10)), not the APIPA C(169.254/16) a Windows guest shows before DHCP or sysprep is done. This replaces a fixed C(pause) before connecting to a new VM."),
        Opt::str("ip_family")
            .default("any")
            .choices(&Family::names())
            .added("0.2.0")
            .desc("The address family O(wait_for_ip) waits for and RV(ip_address) is picked from. V(any) takes IPv4 when the guest has both."),
        Opt::int("wait_timeout")
            .default(300)
            .at_least(1)
            .added("0.2.0")
            .desc("Seconds O(wait_for_agent) and O(wait_for_ip) wait for the guest, counted from the end of the start or reboot (separate from O(timeout), the wait for PVE's own tasks). When it runs out, the task fails naming what it saw last: an agent that never answered, or the addresses the guest had."),
    ]
}

fn waits_elsewhere(p: &Params) -> bool {
    (p.flag("wait_for_agent") || p.flag("wait_for_ip")) && !matches!(p.str("state"), Some("started" | "restarted"))
}

/// `boot` in PVE's legacy form: up to four of the letters `a`, `c`, `d`, `n`, alone or
/// as `legacy=` (instead of `order=`).
fn is_legacy_boot(boot: &str) -> bool {
    boot.split(',').any(|part| {
        let letters = part.trim().strip_prefix("legacy=").unwrap_or(part.trim());
        (1..=4).contains(&letters.len()) && letters.chars().all(|c| "acdn".contains(c))
    })
}

/// An OVMF VM whose boot order (as the task gives it) names a NIC, without `rng0`.
fn needs_rng_for_network_boot(p: &Params) -> bool {
    let boots_from_network = p.str("boot").is_some_and(|boot| {
        boot.split(',').any(|part| match part.trim().strip_prefix("order=") {
            Some(order) => order.split(';').any(|dev| dev.trim().starts_with("net")),
            None => is_legacy_boot(part) && part.contains('n'),
        })
    });
    boots_from_network && p.str("bios") == Some("ovmf") && p.non_empty("rng0").is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map, Value};

    fn params(set: Value) -> Params {
        let mut values: Map<String, Value> = all().iter().map(|o| (o.name.to_string(), Value::Null)).collect();
        for (k, v) in set.as_object().unwrap() {
            values.insert(k.clone(), v.clone());
        }
        Params::new(values)
    }

    #[test]
    fn legacy_boot_letters_are_recognised() {
        for legacy in ["c", "cdn", "legacy=dc", "cdn,order=scsi0"] {
            assert!(is_legacy_boot(legacy), "{legacy}");
        }
        for modern in ["order=scsi0;net0", "", "acdnx", "order=net0"] {
            assert!(!is_legacy_boot(modern), "{modern}");
        }
    }

    #[test]
    fn network_boot_of_ovmf_without_rng_is_found() {
        let ovmf_net = json!({"bios": "ovmf", "boot": "order=scsi0;net0"});
        assert!(needs_rng_for_network_boot(&params(ovmf_net.clone())));
        assert!(needs_rng_for_network_boot(&params(
            json!({"bios": "ovmf", "boot": "cn"})
        )));
        let mut with_rng = ovmf_net;
        with_rng["rng0"] = json!("source=/dev/urandom");
        assert!(!needs_rng_for_network_boot(&params(with_rng)));
        assert!(!needs_rng_for_network_boot(&params(
            json!({"bios": "seabios", "boot": "order=net0"})
        )));
        assert!(!needs_rng_for_network_boot(&params(
            json!({"bios": "ovmf", "boot": "order=scsi0;ide2"})
        )));
    }
}
