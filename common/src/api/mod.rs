//! The PVE REST API: reaching it and waiting on it.
//!
//! - [`connection`]: the shared connection options and their typed form.
//! - [`client`]: the client (TLS, auth, retries, error texts, streamed listings).
//! - [`tasks`]: waiting on PVE tasks (UPIDs).
//! - [`recover`]: after a lost answer, finding out from the cluster what PVE did.

pub mod client;
pub mod connection;
pub mod recover;
pub mod tasks;
