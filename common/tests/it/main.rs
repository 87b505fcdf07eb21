//! The facade's tests, one module per concern, in one test binary (each file was its own
//! binary linking the client and the simulator): the client, task waiting, tag reads and
//! guest lookup against the simulator and against `support`'s small HTTPS server.
//! Run one concern with `cargo test -p ferrox-common --test it -- client_wire::`.

mod support;

mod client_pvesim;
mod client_tfa;
mod client_tickets_by_cluster;
mod client_wire;
mod tags_wire;
mod tasks_wire;
