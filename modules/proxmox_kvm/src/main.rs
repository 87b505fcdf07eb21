fn main() {
    ferrox_common::protocol::run(proxmox_kvm::spec, proxmox_kvm::run)
}
