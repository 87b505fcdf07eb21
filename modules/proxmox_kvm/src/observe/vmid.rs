//! The vmid of a VM a task creates or clones, and how it was chosen: the one given, the
//! first free of `vmid_range` for the name ([`crate::vmid_range`]), else PVE's next free
//! id (`GET /cluster/nextid`).

use ferrox_ansible::protocol::Failure;
use ferrox_dryrun::PlanView;

use super::listing::Listing;
use crate::plan::Allocation;
use crate::step::Run;
use crate::{api, vmid_range};

/// The vmid for a new VM or clone (`given`: the task's) and how it was chosen.
pub(crate) fn choose(run: &Run, listing: &Listing, given: Option<u32>) -> Result<(u32, Allocation), Failure> {
    if let Some(id) = given {
        return Ok((id, Allocation::Given));
    }
    if let Some((first, last)) = run.task.vmid_range {
        let name = run.task.name.as_deref();
        let reserved = PlanView::of(run.client)
            .map(|plan| plan.reserved().clone())
            .unwrap_or_default();
        let id = vmid_range::first_candidate(name, first, last, |id| {
            let listed = listing.listed_name(id);
            // In check mode, an id the run's plan took earlier stays taken (as for nextid).
            vmid_range::held_by_other(listed, name) || (listed.is_none() && reserved.contains(&id))
        })
        .ok_or_else(|| Failure::new(vmid_range::range_full(first, last)))?;
        let name = name.map(str::to_string);
        return Ok((id, Allocation::Range { first, last, name }));
    }
    let id = api::next_id(run.client).map_err(|e| Failure::new(format!("Unable to retrieve next free vmid: {e}")))?;
    Ok((id, Allocation::NextId))
}
