//! The result of a power state, `current`, `template` or `absent`: 1.6's message, the
//! status found before acting (as 1.6 reported it), the actions, the state diff.

use ferrox_ansible::diff::Diff;
use ferrox_ansible::protocol::Output;
use serde_json::Value;

use crate::decide::power::{AlreadyAbsent, Decision};
use crate::observe::PowerObserved;
use crate::task::State;

/// `absent` of a VM that is not there.
pub(crate) fn already_absent(absent: AlreadyAbsent) -> Output {
    let out = Output::unchanged(absent.msg);
    match absent.vmid {
        Some(id) => out.with("vmid", id),
        None => out,
    }
}

/// The result of `decision` on the VM `observed`; `done`: the executed plan's actions.
pub(crate) fn output(state: State, observed: &PowerObserved, decision: Decision, done: Vec<String>) -> Output {
    let id = observed.vm.vmid;
    let status = observed.now.status.clone();
    let no_actions = Vec::<String>::new;
    match decision {
        Decision::Report(msg) | Decision::AlreadyThere(msg) => Output::unchanged(msg)
            .with("vmid", id)
            .with("status", status)
            .with("actions", no_actions()),
        Decision::AlreadyTemplate(msg) => Output::unchanged(msg).with("vmid", id).with("actions", no_actions()),
        Decision::LeftRunning(msg) => Output::unchanged(msg).with("vmid", id),
        Decision::Act { msg, after, .. } => {
            let mut diff = Diff::new(format!("VM {id}"));
            diff.change(
                "state",
                Some(Value::from(observed.now.describe())),
                Some(Value::from(after)),
            );
            let out = Output::changed(msg)
                .with("vmid", id)
                .with("actions", done)
                .with_diff(diff);
            match state {
                State::Template | State::Absent => out,
                _ => out.with("status", status),
            }
        }
    }
}
