//! PVE property strings (`virtio=BC:24:11:..,bridge=vmbr0,tag=10`): parse, format in
//! PVE's canonical order, compare normalised. (Being written; see ARCHITECTURE.md.)
