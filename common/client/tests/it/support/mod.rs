//! What the client's tests and the cluster crate's share: the simulator in-process
//! (`sim`) and a small HTTPS server for what lies below the API (`wire`). The cluster
//! crate's tests include this directory by its path: it sits with the lower of the two
//! crates, so neither crate's tests depend on the other's.

// Test support: an unwrap that fails is the test's report; each test binary uses a part.
#![allow(clippy::unwrap_used)]
#![allow(dead_code)]

pub mod sim;
mod wire;

pub use wire::*;
