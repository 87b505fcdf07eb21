//! The Ansible side: how a module is run and answers, and how its options are declared,
//! validated, documented and read.
//!
//! A layer of its own so that what Ansible expects of a module (AnsibleModule's checks,
//! messages and coercions, the one JSON result, the sidecar docs) is written once and
//! tested without a cluster: it knows nothing of PVE. It does not depend on the client:
//! any error becomes a [`protocol::Failure`] by its text; the run-wide state of the layer
//! above rides through it as a [`protocol::PrivateState`] it never looks into; secrets reach
//! its mask as plain strings ([`protocol::register_secret`]).
//!
//! Invariants: one declaration per option ([`options::ModuleSpec`]) feeds validation, the
//! docs and the typed reads; nothing prints but [`protocol`], exactly one JSON object,
//! even after a panic; every `no_log` value and every secret told to the mask is scrubbed
//! from every string of the result.
//!
//! Entry points: [`protocol::run`] (the binary's `main`), [`protocol::Registered`] (a
//! module: name, spec, body), [`options::Opt`] and [`options::ModuleSpec`] to declare,
//! [`options::Reader`] to read the validated task, [`protocol::Output`] and
//! [`protocol::Failure`] to answer.
//!
//! - [`protocol`]: the binary-module protocol (args file in, one JSON result out;
//!   [`protocol::run_in_process`] runs it without a process, for the tests).
//! - [`options`]: option declarations, AnsibleModule-compatible validation, typed reading.
//! - [`docs`]: the sidecar documentation rendered from the declarations; [`argspec`]: its
//!   argument spec (for ansible-lint and validate-modules); [`spec_json`]: the same as
//!   JSON for ansible-core's own validator (the parity tests).
//! - [`mask`]: secrets never leave the process.
//! - [`diff`]: before/after rendering for `--diff`.
//! - [`python`]: Python's `repr()` of values, as the messages of AnsibleModule and 1.6 print them.

#![deny(missing_docs)]

pub mod argspec;
pub mod diff;
pub mod docs;
pub mod mask;
pub mod options;
pub mod protocol;
pub mod spec_json;
pub use ferrox_python_repr as python;
