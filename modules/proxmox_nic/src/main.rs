fn main() {
    ferrox_common::protocol::run(proxmox_nic::spec, proxmox_nic::run)
}
