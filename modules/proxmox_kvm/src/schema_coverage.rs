//! Every key of the PVE schema the module carries can be set from a task: a declared
//! option or `extra_config`. The tables walked here are generated from PVE's API schema
//! and kept equal to it by ferrox-pve-rules' `formats_table_is_fresh`, so a new schema
//! either passes through `extra_config` (a config key) or fails here until its new
//! request parameter is given an option or a reason ([`crate::task::config::REQUEST_OPTIONS`]).

use ferrox_pve_rules::propstring::formats::{CONFIG_KEYS, REQUEST_PARAMS};
use ferrox_pve_rules::propstring::keys;

use crate::options;
use crate::task::config as wanted;

fn declared(option: &str) -> bool {
    option == "ferrox.proxmox.proxmox_disk" || options::all().iter().any(|o| o.name == option)
}

/// (config key, how it is set): `option X`, or `extra_config`.
fn coverage() -> Vec<(String, Result<String, String>)> {
    CONFIG_KEYS
        .iter()
        .map(|k| {
            let key = k.name.replace("[n]", "0");
            let how = match wanted::option_for_key(&key) {
                Some(option) if declared(option) => Ok(format!("option {option}")),
                Some(option) => Err(format!("names option {option}, which the module does not declare")),
                None if keys::config_key(&key).is_some() => Ok("extra_config".to_string()),
                None => Err("neither an option nor extra_config takes it".to_string()),
            };
            (key, how)
        })
        .collect()
}

#[test]
fn every_config_key_of_the_schema_can_be_set() {
    let uncovered: Vec<String> = coverage()
        .into_iter()
        .filter_map(|(k, how)| how.err().map(|e| format!("{k}: {e}")))
        .collect();
    assert!(
        uncovered.is_empty(),
        "config keys no task can set:\n{}",
        uncovered.join("\n")
    );
}

#[test]
fn every_request_parameter_has_an_option_or_a_reason() {
    for param in REQUEST_PARAMS {
        let entry = wanted::REQUEST_OPTIONS.iter().find(|(p, _)| p == param);
        match entry {
            Some((_, Some(option))) => assert!(declared(option), "{param}: option {option} is not declared"),
            Some((_, None)) => {}
            None => panic!("{param}: a parameter of PVE's create/config call with no option and no reason; add it to task::config::REQUEST_OPTIONS and the docs of extra_config"),
        }
    }
    for (param, _) in wanted::REQUEST_OPTIONS {
        assert!(
            REQUEST_PARAMS.contains(param),
            "{param} is no longer a parameter of the schema"
        );
    }
}

#[test]
fn keys_without_an_option_pass_through() {
    let through: Vec<String> = coverage()
        .into_iter()
        .filter(|(_, how)| how.as_deref() == Ok("extra_config"))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        through,
        ["amd-sev", "intel-tdx", "ivshmem"],
        "keep the docs of extra_config in step"
    );
}
