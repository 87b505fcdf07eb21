//! The Ansible side: how a module is run and answers, and how its options are declared,
//! validated, documented and read.
//!
//! - [`protocol`]: the binary-module protocol (args file in, one JSON result out).
//! - [`options`]: option declarations, AnsibleModule-compatible validation, typed reading.
//! - [`docs`]: the sidecar documentation rendered from the declarations; [`argspec`]: its
//!   argument spec (for ansible-lint and validate-modules).
//! - [`mask`]: secrets never leave the process.
//! - [`diff`]: before/after rendering for `--diff`.
//! - [`python`]: Python's `repr()` of values, as the messages of AnsibleModule and 1.6 print them.
//! - [`assume`]: `check_mode_assume`, what a check run may take as made by a skipped task.

pub mod argspec;
pub mod assume;
pub mod diff;
pub mod docs;
pub mod mask;
pub mod options;
pub mod protocol;
pub use ferrox_python_repr as python;
