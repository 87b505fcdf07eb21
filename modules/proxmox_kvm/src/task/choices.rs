//! The words `state`, `apply_pending` and `update_password` take, each an enum whose
//! `Choice` table is the declaration's `choices`. Below both the declaration
//! ([`crate::options`]), which lists the words, and the typed task ([`crate::task`]), which
//! reads the declaration: neither imports the other back.

use ferrox_ansible::options::Choice;

/// `state`, in the declaration's order (its `choices` come from here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Present,
    Started,
    Absent,
    Stopped,
    Restarted,
    Current,
    Template,
    Paused,
    Hibernated,
}

impl Choice for State {
    const ALL: &'static [(&'static str, State)] = &[
        ("present", State::Present),
        ("started", State::Started),
        ("absent", State::Absent),
        ("stopped", State::Stopped),
        ("restarted", State::Restarted),
        ("current", State::Current),
        ("template", State::Template),
        ("paused", State::Paused),
        ("hibernated", State::Hibernated),
    ];
}

impl State {
    /// As a verb phrase for messages (`Unable to start VM 100: ...`).
    pub(crate) fn verb(self) -> &'static str {
        match self {
            State::Started => "start",
            State::Stopped => "stop",
            State::Restarted => "restart",
            State::Paused => "pause",
            State::Hibernated => "hibernate",
            State::Template => "convert to template",
            State::Absent => "remove",
            State::Present => "update",
            State::Current => "read",
        }
    }
}

/// `apply_pending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApplyPending {
    Keep,
    Reboot,
}

impl Choice for ApplyPending {
    const ALL: &'static [(&'static str, ApplyPending)] =
        &[("keep", ApplyPending::Keep), ("reboot", ApplyPending::Reboot)];
}

/// `update_password`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdatePassword {
    Always,
    OnCreate,
}

impl Choice for UpdatePassword {
    const ALL: &'static [(&'static str, UpdatePassword)] = &[
        ("always", UpdatePassword::Always),
        ("on_create", UpdatePassword::OnCreate),
    ];
}
