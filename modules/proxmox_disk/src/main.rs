fn main() {
    ferrox_common::protocol::run(proxmox_disk::spec, proxmox_disk::run)
}
