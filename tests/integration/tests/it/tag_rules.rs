//! datacenter.cfg's tag rules (`user-tag-access`, `registered-tags`): PVE refuses a tag
//! they keep from users without `Sys.Modify` on `/` (on update, and on create since
//! qemu-server 9.2.0); the pre-write check predicts it in `--check` and refuses it in
//! the real run before anything is written.

use ferrox_integration::{Env, PlayOpts};

fn env_with_tag_rules() -> Env {
    let env = Env::start();
    let (status, body) = env.api(
        "PUT",
        "/cluster/options",
        &[
            ("user-tag-access", "user-allow=list,user-allow-list=web"),
            ("registered-tags", "prod"),
        ],
    );
    assert_eq!(status, 200, "{body}");
    env
}

fn create(tags: &str) -> String {
    format!("- name: vm\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 150\n    name: tagged\n    node: pve1\n    tags: {tags}\n")
}

fn check() -> PlayOpts {
    PlayOpts {
        check: true,
        ..Default::default()
    }
}

#[test]
fn a_tag_the_cluster_keeps_from_the_token_fails_in_check_mode_and_for_real_before_any_write() {
    let env = env_with_tag_rules();
    let task = create("[web, other]");
    let dry = env.run_with(&task, &check());
    let t = dry.task("vm");
    assert!(t.failed, "{}", t.result);
    assert!(
        t.msg()
            .contains("needs Sys.Modify on / to add or remove the tag 'other'"),
        "{}",
        t.msg()
    );
    env.clear_requests();
    let real = env.run(&task);
    assert!(real.task("vm").failed, "{}", real.task("vm").result);
    assert_eq!(
        real.task("vm").msg(),
        t.msg().replace(" (planned)", ""),
        "the dry run predicted the refusal"
    );
    assert!(env.writes().is_empty(), "refused before any write: {:?}", env.writes());

    let registered = env.run_with(&create("[prod]"), &check());
    assert!(
        registered.task("vm").msg().contains("the tag 'prod'"),
        "a registered tag: {}",
        registered.task("vm").msg()
    );

    let allowed = env.run(&create("[web]"));
    allowed.assert_ok();
    assert!(allowed.task("vm").changed);
    assert_eq!(env.api_get("/nodes/pve1/qemu/150/config")["tags"], "web");
}

#[test]
fn an_update_checks_only_the_tags_it_adds_or_removes() {
    let env = env_with_tag_rules();
    // Set by root: a tag the token may not add, which it may keep.
    env.api("PUT", "/nodes/pve1/qemu/100/config", &[("tags", "other")]);
    let keep = "- name: t\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    node: pve1\n    update: true\n    tags: [other, web]\n";
    let play = env.run(keep);
    play.assert_ok();
    assert_eq!(env.api_get("/nodes/pve1/qemu/100/config")["tags"], "other;web");
    let add = "- name: t\n  ferrox.proxmox.proxmox_kvm:\n    vmid: 100\n    node: pve1\n    update: true\n    tags: [other, web, db]\n";
    let dry = env.run_with(add, &check());
    assert!(dry.task("t").msg().contains("the tag 'db'"), "{}", dry.task("t").result);
}
