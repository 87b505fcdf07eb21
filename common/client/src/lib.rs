//! The PVE REST API: reaching it and waiting on it.
//!
//! - [`connection`]: how to reach and authenticate to the API, in typed form.
//! - [`client`]: the client (TLS, auth, retries, error texts, streamed listings).
//! - [`tasks`]: waiting on PVE tasks (UPIDs).
//! - [`recover`]: after a lost answer, finding out from the cluster what PVE did.

pub mod client;
pub mod connection;
pub mod recover;
pub mod tasks;
