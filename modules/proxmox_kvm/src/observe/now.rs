//! A VM's power state as `status/current` shows it, with its HA resource entry as the
//! listing shows it: what the power states decide from ([`crate::decide::power`]).

use crate::api::Power;

/// The VM's power state as the states see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Now {
    pub(crate) status: String,
    pub(crate) running: bool,
    pub(crate) paused: bool,
    /// Suspended to disk: stopped, locked `suspended`; PVE's resume starts it from its saved state.
    pub(crate) hibernated: bool,
    pub(crate) template: bool,
    /// PVE manages it through HA (`ha.managed` of `status/current`): its start and stop
    /// are requests to the HA manager. Not so for a resource in state `ignored`, nor for
    /// any while the cluster is disarmed with mode `ignore`.
    pub(crate) ha_managed: bool,
    /// The state of its HA resource entry as the listing shows it (`hastate`), managed
    /// or not: PVE removes a VM with any HA resource entry only with `purge`.
    pub(crate) ha_resource: Option<String>,
    /// The config lock `status/current` shows (`backup`, `migrate`, `suspended`, ...).
    pub(crate) lock: Option<String>,
}

impl Now {
    pub(crate) fn of(power: &Power, template: bool) -> Now {
        let running = power.status == "running";
        Now {
            status: power.status.clone(),
            running,
            paused: running && power.qmpstatus.as_deref() == Some("paused"),
            hibernated: !running && power.lock.as_deref() == Some("suspended"),
            template,
            ha_managed: power.ha_managed,
            ha_resource: None,
            lock: power.lock.clone(),
        }
    }

    /// With the state of its HA resource entry (`hastate` of the listing; `None`: none).
    pub(crate) fn with_ha_resource(self, hastate: Option<String>) -> Now {
        Now {
            ha_resource: hastate,
            ..self
        }
    }

    /// Whether it has an HA resource entry (qemu-server's `service_is_configured`): one
    /// the listing shows, or one PVE manages.
    pub(crate) fn has_ha_resource(&self) -> bool {
        self.ha_managed || self.ha_resource.is_some()
    }

    /// The state before, for the diff.
    pub(crate) fn describe(&self) -> &str {
        if self.paused {
            "paused"
        } else if self.hibernated {
            "hibernated"
        } else {
            &self.status
        }
    }
}
