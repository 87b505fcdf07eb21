//! The prose of the module's documentation (options are described in `options.rs`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "Upload, download or delete a file on a Proxmox VE storage: an ISO image, an LXC container template, or a disk image or OVA to import (V(import)).".into(),
        "Option-compatible with C(community.proxmox.proxmox_template); see the notes for where it does more.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "With O(url), the node downloads the file itself (C(download-url)): it never passes through the host the task runs on. With O(src), the file is streamed from disk: memory use does not grow with its size.".into(),
        "A file of that name already on the storage is left alone (V(ok)). With O(checksum), Proxmox VE verifies the checksum of the uploaded or downloaded file and removes it on a mismatch.".into(),
        "Proxmox VE's content listing reports no checksum of a stored file, only its size. So with O(checksum), an existing file whose size differs from the source's (the URL's C(Content-Length), the O(src) file's length) is refused, naming both sizes. With O(url) and an existing file of the same size, the node computes the file's checksum itself (C(download-url) with the checksum, which downloads nothing when the file is there) and the task fails naming both checksums when they differ; a check run, which starts no task, says the real run verifies it. O(force=true) replaces the file instead.".into(),
        "Check mode asks the node about the URL (C(query-url-metadata): its name and size; a URL that refuses that C(HEAD) request gets a warning, not a failure), checks that the storage takes the content type and the privileges Proxmox VE will demand, and reports what a real run would do. Later ferrox.proxmox tasks of the same check run see the file on the storage (a disk's C(import_from), an ISO on C(ide2)), without C(check_mode_assume).".into(),
        "Privileges: C(Datastore.AllocateTemplate) on C(/storage/<storage>) for an upload or download; a download also needs C(Sys.Audit) and C(Sys.Modify) on C(/), or C(Sys.AccessNetwork) on C(/nodes/<node>); removal, and O(force=true) replacing a downloaded file, need C(Datastore.Allocate) on the storage. Reading the storage needs C(Datastore.Audit) or C(Datastore.AllocateSpace) there.".into(),
        "The result's RV(transfer) gives the bytes and seconds of the transfer. Ansible shows a module's output only when it ends, so progress is reported then (with C(-v)), not while the file moves.".into(),
        "Requests of a download: the node's storages, C(query-url-metadata), the storage's content, C(POST download-url), the task's status until it ends, and the content read back.".into(),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: Upload an installer ISO
  ferrox.proxmox.proxmox_template:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
    node: pve1
    storage: local
    content_type: iso
    src: /srv/isos/debian-13.1.0-amd64-netinst.iso

- name: Let the node download a cloud image to import, verified by its checksum
  ferrox.proxmox.proxmox_template:
    node: pve1
    storage: local
    content_type: import
    url: https://cloud.debian.org/images/cloud/trixie/latest/debian-13-genericcloud-amd64.qcow2
    checksum_algorithm: sha512
    checksum: "{{ debian_image_sha512 }}"

- name: Download an appliance container template from Proxmox VE's index
  ferrox.proxmox.proxmox_template:
    node: pve1
    storage: local
    content_type: vztmpl
    template: debian-12-standard_12.7-1_amd64.tar.zst

- name: Delete an ISO
  ferrox.proxmox.proxmox_template:
    node: pve1
    storage: local
    content_type: iso
    template: debian-13.1.0-amd64-netinst.iso
    state: absent
"#;

pub(crate) const RETURN: &str = r#"
msg:
  description: What happened (community.proxmox's wording).
  returned: always
  type: str
  sample: template with volid=local:iso/debian-13.1.0-amd64-netinst.iso uploaded
volid:
  description: The file's volume id, C(storage:content/name); what C(import_from) or an C(ide2) value names.
  returned: success
  type: str
  sample: local:import/debian-13-genericcloud-amd64.qcow2
node:
  description: The node.
  returned: success
  type: str
  sample: pve1
storage:
  description: The storage.
  returned: success
  type: str
  sample: local
size:
  description: The file's size in bytes (in check mode, the source's, when it is known).
  returned: state present, success
  type: int
  sample: 347733504
checksum_verified:
  description: True when the node verified the checksum of a file already on the storage (O(url) with O(checksum)).
  returned: when such a file was verified
  type: bool
  sample: true
replaced:
  description: True when O(force=true) replaced an existing file.
  returned: when a file was replaced
  type: bool
  sample: true
transfer:
  description: The transfer, after an upload or download.
  returned: when a file was transferred
  type: dict
  contains:
    bytes:
      description: Bytes sent (upload) or stored (download).
      type: int
    seconds:
      description: Seconds from the start of the transfer to the end of Proxmox VE's task.
      type: float
    sending_seconds:
      description: Seconds the upload's request took (upload only).
      type: float
    upid:
      description: Proxmox VE's task.
      type: str
  sample: {"bytes": 347733504, "seconds": 4.2, "upid": "UPID:pve1:..."}
"#;
