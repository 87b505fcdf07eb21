//! The integration harness: every test gets its own [`pvesim`] simulator over HTTPS and
//! runs a play's tasks one of two ways:
//! - [`Env::run`]: the module bodies in this process (`src/in_process.rs`), with the
//!   arguments and run state the action plugin would give them: for what a module does
//!   (plans, writes, refuses, answers), in milliseconds per task;
//! - [`Env::play`]: real `ansible-playbook` with the built binaries, for what only
//!   Ansible shows (the shim and its stores across forks, async, templating, callbacks,
//!   parity with community.proxmox, the shipped playbooks).
//!
//! ```no_run
//! use ferrox_integration::{Env, PlayOpts};
//!
//! let env = Env::start();
//! let play = env.play(r#"
//! - name: list
//!   ferrox.proxmox.proxmox_vm_info:
//!     vmid: 100
//!   register: out
//! "#);
//! play.assert_ok();
//! assert_eq!(play.task("list").result["proxmox_vms"][0]["vmid"], 100);
//! let dry = env.play_with("- ferrox.proxmox.proxmox_vm_info: {}", &PlayOpts { check: true, ..Default::default() });
//! assert!(!dry.last().changed);
//! ```
//!
//! What [`Env::start`] prepares, in a fresh temp dir (removed on drop; kept when
//! `FERROX_KEEP_TMP=1`, and its path is printed):
//! - a simulator ([`pvesim::Simulator`]) on a free port with the default scenario,
//!   its CA written to `pvesim-ca.pem`;
//! - `collections/ansible_collections/ferrox/proxmox` → the collection as users get it:
//!   the galaxy tarball of the tree (debug binaries in `plugins/modules/__bin/<host
//!   platform>/`) installed into `build/test-collections` by `cargo collection test`, or
//!   `cargo collection build --debug && cargo collection install --for-tests` when you run
//!   the tests directly; a missing or stale install fails the test saying so
//!   ([`installed_collection`]);
//! - `ansible.cfg` enabling the `ferrox_results` callback
//!   (`tests/integration/callback_plugins/`), which records every task result as a
//!   JSON line: [`Play::results`];
//! - an inventory with only `localhost` (local connection).
//!
//! Every play gets `module_defaults` for `group/ferrox.proxmox.proxmox` with token
//! auth (`ansible@pve!automation`), `validate_certs: true` and `ca_path` = the
//! simulator CA ([`Env::auth`]); [`PlayOpts::module_defaults`] replaces that block.
//! `PROXMOX_*` variables of the calling environment are removed; set them through
//! [`PlayOpts::env`] (which can also override `ANSIBLE_COLLECTIONS_PATH`).
//!
//! `ansible-playbook` is `<repo>/.venv/bin/ansible-playbook` unless
//! `FERROX_ANSIBLE_PLAYBOOK` or [`PlayOpts::ansible`] says otherwise.
//!
//! Helpers beyond the core API: [`Env::auth`] / [`Env::defaults_with`] (build a
//! changed auth block), [`Env::run_task`] (a task-starting call, waited for),
//! [`Env::ca_path`], [`Env::collections_path`], [`Play::recap`], [`TaskOutcome::msg`],
//! [`TaskOutcome::warnings`], and the scenario's credentials in [`creds`].
//!
//! The tests are one test binary, `tests/it/main.rs`, with one module per concern
//! (`ticket`, `anchor`, `snapshots`, ...): `cargo test -p ferrox-integration ticket::`
//! runs one concern, `cargo nextest run -p ferrox-integration -E 'test(/^ticket::/)'`
//! the same under nextest. Envs are independent (own simulator, own port, own temp
//! dir), so tests run in parallel. The harness's own API calls ([`Env::api_get`], [`Env::api`]) appear in
//! the simulator's request log: call [`Env::clear_requests`] right before the play
//! whose calls you count.

mod api;
mod env;
mod in_process;
mod paths;
mod play;

pub use env::{write_ansible_cfg, Env};
pub use paths::{
    ansible_playbook, host_platform, installed_collection, module_binary, module_command, repo_root, shipped_platforms,
    BINARY, MODULES,
};
pub use play::{Play, PlayOpts, TaskOutcome};

/// The default scenario's credentials (see tests/pvesim).
pub mod creds {
    /// `root@pam`'s password.
    pub const ROOT_PASSWORD: &str = "pvesim-root";
    /// The token `ansible@pve!automation` (may manage VMs).
    pub const TOKEN_USER: &str = "ansible@pve";
    pub const TOKEN_ID: &str = "automation";
    pub const TOKEN_SECRET: &str = "5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13";
    /// The token `ansible@pve!readonly` (audit rights only).
    pub const READONLY_TOKEN_ID: &str = "readonly";
    pub const READONLY_TOKEN_SECRET: &str = "0a6b2d4c-3e8f-4a1b-9c7d-5e2f1a0b3c4d";
}
