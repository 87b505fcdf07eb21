//! playbooks/golden-image.yml end to end: a cloud image from a loopback HTTP server to a
//! template on each of three nodes. A check run on an empty cluster predicts every task's
//! change and writes nothing; the first run changes, a rerun changes nothing, and a
//! build then clones from the templates.

use serde_json::{json, Value};

use ferrox_integration::{creds, repo_root, Env, PlayOpts};
use pvesim::fileserver::{FileServer, Served};

fn three_nodes() -> pvesim::SimConfig {
    let mut cfg = pvesim::SimConfig::default();
    let mut third = cfg.scenario.nodes[1].clone();
    third.name = "pve3".into();
    cfg.scenario.nodes.push(third);
    cfg
}

pub(crate) fn as_root(env: &Env, vars: Value) -> PlayOpts {
    let mut auth = env.auth();
    auth["api_user"] = json!("root@pam");
    auth["api_password"] = json!(creds::ROOT_PASSWORD);
    auth["api_token_id"] = Value::Null;
    auth["api_token_secret"] = Value::Null;
    PlayOpts {
        module_defaults: Some(env.defaults_with(auth)),
        vars,
        ..Default::default()
    }
}

/// The playbook's tasks, run through the harness (its play header and vars kept as vars).
pub(crate) fn tasks() -> String {
    let text = std::fs::read_to_string(repo_root().join("playbooks/golden-image.yml")).unwrap();
    let at = text.find("  tasks:\n").expect("the playbook's tasks");
    text[at + "  tasks:\n".len()..]
        .lines()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Loop items reported changed, over every task of the play.
pub(crate) fn items_changed(play: &ferrox_integration::Play) -> usize {
    play.results
        .iter()
        .map(|t| match t.result["results"].as_array() {
            Some(items) => items.iter().filter(|i| i["changed"] == json!(true)).count(),
            None => usize::from(t.changed),
        })
        .sum()
}

/// Three nodes without the image, the image served over HTTP, and the playbook's vars
/// naming them: where the playbook starts (the file server lives as long as it is kept).
pub(crate) fn golden_start() -> (Env, FileServer, Value) {
    let env = Env::start_with(three_nodes());
    let files = FileServer::start().unwrap();
    let image = Served::qcow2(3 << 30, 640 << 10);
    files.add("/images/debian-13-genericcloud-amd64.qcow2", image.clone());
    let vars = json!({
        "golden_nodes": ["pve1", "pve2", "pve3"],
        "golden_image_storage": "local",
        "golden_disk_storage": "local-lvm",
        "golden_vmid_base": 9100,
        "golden_image_url": files.url("/images/debian-13-genericcloud-amd64.qcow2"),
        "golden_image_name": "debian-13-genericcloud-amd64.qcow2",
        "golden_image_sha256": image.digests()["sha256"],
    });
    // The scenario's own copy of the image is removed first: the cluster starts empty of it.
    for node in ["pve1", "pve2", "pve3"] {
        env.run_task(
            "DELETE",
            &format!("/nodes/{node}/storage/local/content/local:import/debian-13-genericcloud-amd64.qcow2"),
            &[],
        );
    }
    (env, files, vars)
}

#[test]
fn a_cloud_image_becomes_a_template_on_every_node() {
    let (env, _files, vars) = golden_start();
    let o = as_root(&env, vars);

    env.clear_requests();
    let dry = env.play_with(
        &tasks(),
        &PlayOpts {
            check: true,
            ..o.clone()
        },
    );
    assert_eq!(dry.rc, 0, "{}", dry.transcript());
    assert!(
        dry.results.iter().all(|t| t.changed && !t.failed),
        "every change predicted:\n{}",
        dry.transcript()
    );
    assert_eq!(
        items_changed(&dry),
        9,
        "three tasks on three nodes, each a predicted change:\n{}",
        dry.transcript()
    );
    assert!(env.writes().is_empty(), "check mode writes nothing: {:?}", env.writes());

    let first = env.play_with(&tasks(), &o);
    assert_eq!(first.rc, 0, "{}", first.transcript());
    assert!(
        first.results.iter().all(|t| t.changed && !t.failed),
        "{}",
        first.transcript()
    );
    assert_eq!(items_changed(&first), 9, "{}", first.transcript());
    for (i, node) in ["pve1", "pve2", "pve3"].iter().enumerate() {
        let config = env.api_get(&format!("/nodes/{node}/qemu/{}/config", 9100 + i));
        assert_eq!(config["template"], json!(1), "{node}: {config}");
        assert!(
            config["scsi0"].as_str().is_some_and(|d| d.contains("size=3G")),
            "{node}: the disk has the image's virtual size: {config}"
        );
        assert!(
            config["ide2"].as_str().is_some_and(|d| d.contains("cloudinit")),
            "{config}"
        );
        assert_eq!(
            (config["serial0"].clone(), config["vga"].clone()),
            (json!("socket"), json!("serial0"))
        );
    }

    let again = env.play_with(&tasks(), &o);
    assert_eq!(
        again.recap("changed"),
        Some(0),
        "a rerun changes nothing:\n{}",
        again.transcript()
    );

    let build =
        "- name: clone\n  ferrox.proxmox.proxmox_kvm: {clone: golden-pve3, node: pve3, name: web-pve3, newid: 300}\n";
    let built = env.play_with(build, &o);
    assert!(
        built.task("clone").changed && !built.task("clone").failed,
        "{}",
        built.transcript()
    );
}
