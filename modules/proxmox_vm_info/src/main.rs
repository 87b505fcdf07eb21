fn main() {
    ferrox_common::protocol::run(proxmox_vm_info::spec, proxmox_vm_info::run)
}
