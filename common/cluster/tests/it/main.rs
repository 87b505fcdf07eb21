//! The cluster reads' tests, one module per concern, in one test binary: the guest
//! listing and tag reads through a real client, against the simulator and against a
//! small HTTPS server that answers as PVE does. Run one concern with
//! `cargo test -p ferrox-cluster --test it -- tags_wire::`.

// The client's test support, shared by path: it sits with the client's tests, the
// crate below this one, so neither crate's tests depend on the other's.
#[path = "../../../client/tests/it/support/mod.rs"]
mod support;

mod listing_pvesim;
mod listing_wire;
mod tags_wire;
