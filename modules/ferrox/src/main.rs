fn main() {
    ferrox_common::ansible::protocol::run(&ferrox::MODULES)
}
