//! The client's tests, one module per concern, in one test binary (it links the client
//! and the simulator once): authentication, TLS, retries, error texts, kept tickets and
//! task waiting, against the simulator and against `support`'s small HTTPS server.
//! Run one concern with `cargo test -p ferrox-pve-client --test it -- client_wire::`.

mod support;

mod client_pvesim;
mod client_tfa;
mod client_tickets_by_cluster;
mod client_wire;
mod tasks_wire;
