//! What PVE checks before it writes: each [`Write`] a plan makes, mapped to the
//! privileges PVE demands and where ([`needs`]; config keys by qemu-server's classes in
//! [`keys`]); [`table`]: every writing operation as such a write (the least-privilege guide's table).
//! Holding them against the caller's privileges is the run layer's (`ferrox_run::privileges`).

pub mod keys;
pub mod needs;
pub mod table;

pub use needs::{bridge_needs, Check, Need, Write};
