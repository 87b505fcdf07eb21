//! An upload names its target node, yet runs where pveproxy received the file: pve-storage's
//! `upload` has no `proxyto`, so the `imgcopy` task is the receiving node's, which copies
//! the file to another target node with scp (pve-storage `src/PVE/API2/Storage/Status.pm`
//! `upload`; pve-http-server `AnyEvent.pm` saves the body to the local `/var/tmp`).

use crate::common::*;
use pvesim::{Scenario, SimConfig};

const B: &str = "----pvesimNodeBoundary";

fn upload(api: &Api, node: &str) -> (String, Vec<String>) {
    let body = format!(
        "--{B}\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\niso\r\n--{B}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"tiny.iso\"\r\nContent-Type: application/octet-stream\r\n\r\n{}\r\n--{B}--\r\n",
        "x".repeat(4096)
    );
    let mut rb = api
        .agent
        .post(api.url(&format!("/api2/json/nodes/{node}/storage/local/upload")))
        .header("content-type", format!("multipart/form-data; boundary={B}"));
    for (k, v) in &api.auth {
        rb = rb.header(k, v);
    }
    let mut r = rb.send(body.as_bytes()).expect("HTTP exchange");
    let raw = r.body_mut().read_to_string().unwrap_or_default();
    assert_eq!(r.status().as_u16(), 200, "{raw}");
    let upid = serde_json::from_str::<serde_json::Value>(&raw).unwrap()["data"]
        .as_str()
        .unwrap()
        .to_string();
    let status = api.wait_task(&upid);
    assert_eq!(status["exitstatus"], "OK", "{status}");
    let log = api.task_log(&upid);
    (upid, log)
}

#[test]
fn an_upload_to_another_node_runs_on_the_receiving_node_and_copies_with_scp() {
    let mut s = Scenario::default_cluster();
    with_template_user(&mut s);
    let mut api = Api::start(SimConfig { scenario: s, ..quick() });
    api.with_auth(vec![("Authorization", TEMPLATE_TOKEN)]);

    let (upid, log) = upload(&api, "pve2");
    assert!(upid.starts_with("UPID:pve1:"), "the receiving node's task: {upid}");
    assert!(log.contains(&"target node: pve2".to_string()), "{log:?}");
    let command = log.iter().find(|l| l.starts_with("command: ")).unwrap();
    assert!(
        command.starts_with("command: /usr/bin/scp -o BatchMode=yes -o HostKeyAlias=pve2 ")
            && command.ends_with("[192.0.2.12]:/var/lib/vz/template/iso/tiny.iso"),
        "{command}"
    );
    let on_pve2 = api.get("/nodes/pve2/storage/local/content?content=iso");
    assert!(
        on_pve2.raw.contains("local:iso/tiny.iso"),
        "stored on the target: {}",
        on_pve2.raw
    );

    let (upid, log) = upload(&api, "pve1");
    assert!(upid.starts_with("UPID:pve1:"), "{upid}");
    assert!(log.iter().any(|l| l.starts_with("command: cp -- ")), "{log:?}");
}
