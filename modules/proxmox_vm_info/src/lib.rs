//! The `ferrox.proxmox.proxmox_vm_info` module: QEMU VMs and LXC containers of the
//! cluster with their status, and on request their config and guest network.
//!
//! Compatible with community.proxmox 1.6 (options, filters, result, messages), except
//! that what 1.6 turned into a failure of the whole task (an unreachable node, a
//! stopped guest or a missing guest agent with `network: true`) is a warning here.
//!
//! - [`spec`]: the declaration (options, rules, docs).
//! - [`collect`]: what is read from the cluster and how it is merged.
//! - [`indexed`]: a lookup by name through the run's name index instead of a listing.
//!
//! [`run`] chooses between the two: the index when it tells every guest asked for, else
//! the listing; `indexed` builds its records with `collect`'s types, so the choice is made
//! here, above both.

mod collect;
mod docs;
mod indexed;

use ferrox_ansible::options::{ModuleSpec, Opt, Rules, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_run::connection::{self, ConnectionParams, FromOptions};
use ferrox_run::name_index;
use ferrox_run::SharedRunState;

use collect::Filters;

pub fn spec() -> ModuleSpec {
    let mut options = connection::options();
    options.extend([
        Opt::str("node")
            .desc("Restrict the results to guests on this node.")
            .desc("The node must exist in the cluster, otherwise the module fails."),
        Opt::str("type")
            .default("all")
            .choices(&["all", "qemu", "lxc"])
            .desc("Restrict the results to QEMU VMs (V(qemu)) or LXC containers (V(lxc)); V(all) lists both."),
        Opt::vmid("vmid")
            .desc("Restrict the results to the guest with this VMID.")
            .desc("An unknown VMID gives an empty list; V(0) means no filter."),
        Opt::str("name")
            .desc("Restrict the results to guests with exactly this name (case-sensitive).")
            .desc("Names need not be unique, so several guests can match; an unknown name gives an empty list."),
        Opt::str("config")
            .default("none")
            .choices(&["none", "current", "pending"])
            .desc("Whether to add each guest's configuration as RV(proxmox_vms[].config).")
            .desc("V(current) is the configuration in effect; V(pending) is the configuration with pending changes applied (what the guest gets at its next restart); V(none) adds nothing.")
            .desc("Costs one API call per guest."),
        Opt::bool("network")
            .default(false)
            .desc("Whether to add each guest's network interfaces as reported from inside the guest, as RV(proxmox_vms[].network).")
            .desc("A QEMU VM needs a running QEMU guest agent. A guest that is not running, or a VM whose agent is not configured or not running, is skipped with a warning, as is a guest whose agent the caller may not read (Proxmox VE 9 needs C(VM.GuestAgent.Audit) on it, 8 needed C(VM.Monitor)); the warning names the privilege and the guest.")
            .desc("Costs one API call per running guest."),
    ]);
    ModuleSpec {
        name: "proxmox_vm_info",
        short_description: "Retrieve information about QEMU VMs and LXC containers of a Proxmox VE cluster",
        description: docs::description(),
        version_added: "0.1.0",
        options,
        rules: Rules::default().merge(connection::rules()),
        check_mode: (Support::Full, "The module only reads, so check mode runs it normally."),
        diff_mode: (
            Support::None,
            "The module changes nothing, so there is nothing to diff.",
        ),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_kvm"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let filters = Filters::from_params(&m.params)?;
    let conn = ConnectionParams::from_params(&m.params)?;
    let client = m.connect(&conn)?;
    let key = name_index::cluster_key(&conn);
    let given = m.name_index();
    let index = given.and_then(|given| given.fresh(&key));
    let seeding = given.map(|_| key.as_str());
    collect::check_node(&client, &filters)?;
    // By name through the run's name index (this cluster's, when fresh) when it tells
    // every guest the task asks for, else from the listing.
    let found = match index.and_then(|index| indexed::collect(&client, &filters, index)) {
        Some(found) => found?,
        None => collect::listed(&client, &filters, seeding)?,
    };
    if let Some((index, listed_at)) = found.seeded {
        m.refresh_name_index(index, listed_at);
    }
    for warning in found.warnings {
        m.warn(warning);
    }
    let count = found.guests.len();
    Ok(
        Output::unchanged(format!("{count} guest{} found", if count == 1 { "" } else { "s" }))
            .with("proxmox_vms", found.guests),
    )
}
