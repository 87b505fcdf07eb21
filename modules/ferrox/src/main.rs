fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(ferrox::INVENTORY) {
        std::process::exit(proxmox_inventory::main(&args[1..]));
    }
    ferrox_ansible::protocol::run(&ferrox::MODULES, ferrox_run::read_private_state)
}
