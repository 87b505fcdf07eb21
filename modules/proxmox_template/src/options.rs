//! The options of proxmox_template, declared once (community.proxmox 1.6's names,
//! types, defaults and choices; the choices are task.rs's enums).

use ferrox_ansible::options::read::Choice;
use ferrox_ansible::options::{Opt, Rules};
use ferrox_run::connection;

use crate::choices::{Algorithm, Content, State};

/// community.proxmox 1.6's default: seconds to wait for an upload, download or removal.
pub(crate) const DEFAULT_TIMEOUT: i64 = 30;

pub(crate) fn options() -> Vec<Opt> {
    let mut opts = connection::options();
    opts.extend([
        Opt::str("node").desc("The Proxmox VE node whose storage holds the file (and which downloads it for O(url))."),
        Opt::path("src")
            .desc("Path of a file to upload, on the host the module runs on. The file name on the storage is the path's last component.")
            .desc("The file is streamed to Proxmox VE, never read into memory whole.")
            .desc("Exactly one of O(src) or O(url) is required for O(state=present), unless O(template) names an appliance template to download (C(pveam))."),
        Opt::str("url")
            .desc("URL of a file the node downloads itself (C(download-url)): the file never passes through the host the module runs on.")
            .desc("Without O(template), the file name is the one Proxmox VE's C(query-url-metadata) reports, else the URL's last path segment.")
            .desc("C(query-url-metadata) is a C(HEAD) request; a URL that refuses it (a server answering 405, an object storage link signed for C(GET)) is still downloaded, named by O(template) or its path; check mode then warns that the size is not known before the download.")
            .desc("Exactly one of O(src) or O(url) is required for O(state=present), unless O(template) names an appliance template to download (C(pveam))."),
        Opt::str("template")
            .desc("The file name on the storage (no C(/)).")
            .desc("Required for O(state=absent) to delete a file.")
            .desc("Required for O(state=present) to download an appliance container template (C(pveam)), without O(src) and O(url).")
            .desc("With O(url), the name the downloaded file gets (default: the URL's last path segment)."),
        Opt::str("content_type")
            .default(Content::ALL[0].0)
            .choices(&Content::names())
            .desc("Content type of the file: V(vztmpl) for LXC container templates, V(iso) for ISO disc images, V(import) for disk images (qcow2, raw, vmdk) and Open Virtual Appliances (OVA) that O(ferrox.proxmox.proxmox_disk#module:import_from) can import.")
            .desc("V(import) takes an OVA (C(.ova)) from Proxmox VE 8.3 and disk images (C(.qcow2), C(.raw), C(.vmdk)) from 8.4; on an older node the task fails naming its version. The storage's C(content) must include the type."),
        Opt::str("storage").default("local").desc("The storage that holds the file."),
        Opt::int("timeout")
            .default(DEFAULT_TIMEOUT)
            .desc("Seconds to wait for the upload, download or removal task to finish."),
        Opt::bool("force")
            .default(false)
            .desc("Only with O(state=present): an existing file of that name is replaced. An upload (O(src)) overwrites it, as Proxmox VE's upload does; a download (O(url), an appliance template) removes it first, since Proxmox VE's C(download-url) refuses to overwrite (this needs C(Datastore.Allocate)).")
            .desc("Without it, an existing file is left alone (V(ok)), unless O(checksum) is given and the existing file cannot have that checksum (its size differs from the source's): then the task fails naming both sizes and the checksum."),
        Opt::str("state").default(State::ALL[0].0).choices(&State::names()).desc("Whether the file is on the storage."),
        Opt::str("checksum_algorithm")
            .choices(&Algorithm::names())
            .desc("Algorithm of O(checksum). If specified, O(checksum) must also be specified."),
        Opt::str("checksum")
            .desc("The checksum the file must have; Proxmox VE computes it on the node after the upload or download and removes a file that does not match.")
            .desc("If specified, O(checksum_algorithm) must also be specified."),
    ]);
    opts
}

pub(crate) fn rules() -> Rules {
    connection::rules()
        .required_together(&["checksum", "checksum_algorithm"])
        .required_if("state", "absent", &["template"])
        .mutually_exclusive(&["src", "url"])
}
