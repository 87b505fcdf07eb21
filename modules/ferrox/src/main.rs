fn main() {
    ferrox_common::protocol::run(&ferrox::MODULES)
}
