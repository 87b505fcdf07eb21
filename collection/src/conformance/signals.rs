//! Ctrl-C during a conformance run: the first SIGINT (or SIGTERM) stops the running
//! playbook and lets the run clean up and write its report; a second one exits at once
//! (a rerun then cleans up what is left).
//!
//! The playbook runs in its own process group, so a terminal's Ctrl-C reaches only us
//! and we decide what the playbook gets: one SIGINT, which ansible-playbook handles by
//! stopping after the task in flight.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        const MSG: &[u8] = b"\ninterrupted again: exiting without cleanup (a rerun cleans up)\n";
        // Only async-signal-safe calls here.
        unsafe {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(130);
        }
    }
    let group = CHILD_GROUP.load(Ordering::SeqCst);
    if group > 0 {
        unsafe {
            libc::kill(-group, libc::SIGINT);
        }
    }
}

/// Installs the handlers for SIGINT and SIGTERM.
pub(super) fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

pub(super) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The process group of the playbook running now (0: none).
pub(super) fn set_child_group(pid: u32) {
    CHILD_GROUP.store(pid as i32, Ordering::SeqCst);
}
