//! A new clone: the linked-clone refusal, when the source's config is read, the clone
//! call's form, and its actions with and without a route to another node and the rest
//! of the task.

use std::rc::Rc;

use ferrox_cluster::tags::TagCase;
use ferrox_cluster::vm::{Guest, GuestType};
use serde_json::{json, Map, Value};

use super::clone::{form, plan, reads_source_config, refuse_linked_of_non_template, wanted};
use crate::converge;
use crate::decide::clone_route::Route;
use crate::plan::{Action, Allocation};
use crate::task::testing::task;

/// VM 9000 `tmpl` on pve1, a template or not.
fn source(template: bool) -> Guest {
    Guest {
        vmid: 9000,
        node: Rc::from("pve1"),
        kind: GuestType::Qemu,
        name: Some("tmpl".into()),
        status: Some(Rc::from("stopped")),
        template,
        lock: None,
        pool: None,
        hastate: None,
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn a_linked_clone_needs_a_template() {
    let linked = task(json!({"clone": "tmpl", "name": "web", "full": false}));
    assert_eq!(
        refuse_linked_of_non_template(&linked, &source(false)).map_err(|f| f.msg),
        Err("Unable to clone vm web from vmid 9000: VM 9000 is not a template, and a linked clone (full: false) needs one. Convert it first (state: template), or make a full clone (full: true)".to_string())
    );
    assert!(refuse_linked_of_non_template(&linked, &source(true)).is_ok());
    let full = task(json!({"clone": "tmpl", "name": "web"}));
    assert!(refuse_linked_of_non_template(&full, &source(false)).is_ok());
}

#[test]
fn the_source_config_is_read_only_when_something_needs_it() {
    let name_only = task(json!({"clone": "tmpl", "name": "web"}));
    let more = task(json!({"clone": "tmpl", "name": "web", "memory": 4096}));
    // (task, check mode, clone's node) -> read?
    let rows = [
        (&name_only, false, "pve1", false),
        (&name_only, true, "pve1", true),
        (&name_only, false, "pve2", true),
        (&more, false, "pve1", true),
    ];
    for (task, check_mode, node, reads) in rows {
        assert_eq!(
            reads_source_config(task, check_mode, node, "pve1"),
            reads,
            "{check_mode} {node}"
        );
    }
    assert!(wanted(&name_only).is_empty());
    assert_eq!(wanted(&more).keys().collect::<Vec<_>>(), ["memory"]);
}

#[test]
fn the_clone_call_carries_the_tasks_clone_options() {
    let task = task(json!({
        "clone": "tmpl", "name": "web", "pool": "prod", "target": "pve2", "storage": "local-lvm",
        "format": "qcow2", "bwlimit": 10, "snapname": "base"
    }));
    assert_eq!(
        form(&task),
        pairs(&[
            ("full", "1"),
            ("name", "web"),
            ("pool", "prod"),
            ("snapname", "base"),
            ("target", "pve2"),
            ("storage", "local-lvm"),
            ("format", "qcow2"),
            ("bwlimit", "10")
        ])
    );
    let (plan, diff) = plan(&task, &source(true), 100, Allocation::NextId, None, None);
    assert_eq!(plan.vm.node, "pve2");
    assert_eq!(
        plan.describe(),
        [
            "clone VM 9000 on pve1 to VM 100",
            "wait until VM 100 is listed cluster-wide"
        ]
    );
    assert_eq!(Value::Object(diff.after), json!({"clone of": 9000}));
}

#[test]
fn a_route_clones_on_the_source_node_then_moves_and_the_rest_is_compared_again() {
    let task = task(json!({"clone": "tmpl", "name": "web", "target": "pve2", "storage": "local-lvm", "memory": 4096}));
    let route = Route {
        via: "pve1".into(),
        to: "pve2".into(),
        clone_storage: None,
        targetstorage: Some("local-lvm".into()),
        local: vec!["local-lvm".into()],
    };
    let source_config: Map<String, Value> = json!({"memory": "2048", "name": "tmpl"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let changes = converge::changes(&source_config, &wanted(&task), 100, &TagCase::known(false)).ok();
    let (plan, diff) = plan(&task, &source(true), 100, Allocation::Given, Some(&route), changes);
    assert_eq!(plan.vm.node, "pve1");
    assert_eq!(
        plan.describe(),
        [
            "clone VM 9000 on pve1 to VM 100",
            "wait until VM 100 is listed cluster-wide",
            "migrate VM 100 offline from pve1 to pve2, its disks onto local-lvm",
            "update VM 100: set memory (compared again once it exists)"
        ]
    );
    let Action::Clone { form, .. } = &plan.actions[0] else {
        panic!("the clone first");
    };
    assert_eq!(*form, pairs(&[("full", "1"), ("name", "web")]));
    assert_eq!(Value::Object(diff.before), json!({"memory": "2048"}));
    assert_eq!(
        Value::Object(diff.after),
        json!({"clone of": 9000, "node": "pve2", "memory": "4096"})
    );
}
