//! Test fixture of the decision tables: the typed task of a task's options as a
//! playbook writes them.

use ferrox_ansible::options::coerce::Dialect;
use ferrox_ansible::options::validate::validate;
use ferrox_ansible::options::Params;
use ferrox_run::connection::{ConnectionParams, FromOptions};
use serde_json::{json, Value};

use super::KvmTask;

/// The task `options` (a YAML-like JSON object, without the connection) describe, as
/// root@pam with a password (so `skiplock` is allowed).
pub(crate) fn task(options: Value) -> KvmTask {
    let mut args = json!({"api_host": "pve", "api_user": "root@pam", "api_password": "pw"});
    for (k, v) in options.as_object().expect("options are an object") {
        args[k] = v.clone();
    }
    let spec = crate::docs::spec();
    let args = args.as_object().expect("an object").clone();
    let validated =
        validate(spec.name, &spec.options, &spec.rules, args, false, Dialect::default()).expect("valid options");
    let params = Params::new(validated.params);
    let conn = ConnectionParams::from_params(&params).expect("connection options");
    KvmTask::read(params, &spec.options, &conn, false).expect("a valid task")
}
