//! The PVE REST API: reaching it and waiting on it.
//!
//! A layer of its own so that the one piece that talks to PVE can be read, tested and
//! benchmarked without Ansible: it knows nothing of Ansible. Its errors are its own types
//! ([`client::ApiError`], [`tasks::TaskError`]; the Ansible side makes a `Failure` of them
//! by their text), the secrets it holds go to a [`client::SecretSink`] the caller passes in
//! (the run layer hands it the protocol's mask), and a check run's reads come through a
//! trait it defines ([`client::ReadThrough`], which the dry run implements). Its input is
//! a plain [`connection::ConnectionParams`]; the module options that fill it are declared
//! in the run layer.
//!
//! Invariants: a write is sent again only when PVE provably did not act on it
//! ([`client::retry`]), and a lost answer is reconciled from the cluster ([`recover`]);
//! a client that reads through a plan (check mode) refuses every write; the client prints
//! nothing.
//!
//! Entry points: [`client::Client::connect`] (or `connect_keeping` with the run's ticket),
//! then `get`/`post`/`put`/`delete` and `get_list`; [`tasks::wait`] on the UPID a write
//! returns.
//!
//! - [`connection`]: how to reach and authenticate to the API, in typed form.
//! - [`client`]: the client (TLS, auth, retries, error texts, streamed listings).
//! - [`tasks`]: waiting on PVE tasks (UPIDs).
//! - [`recover`]: after a lost answer, finding out from the cluster what PVE did.

#![deny(missing_docs)]

pub mod client;
pub mod connection;
pub mod recover;
pub mod tasks;
