//! AnsibleModule's argument validation, in its order and with its messages, so a
//! playbook error reads the same as with the Python modules.
//!
//! Order (first error wins): environment fallbacks, aliases, unsupported keys,
//! mutually exclusive, non-null defaults, required, types, choices, required together,
//! required one of, required if, required by, sub-options, remaining (null) defaults.

use serde_json::{Map, Value};

use super::coerce::{coerce, python_str, Dialect};
use super::spec::{Kind, Opt, Rules};

/// What validation produced.
#[derive(Debug, Default)]
pub struct Validated {
    /// Every declared option, present (null when unset), with canonical names.
    pub params: Map<String, Value>,
    /// Values of `no_log` options, to be masked in every output.
    pub secrets: Vec<String>,
    /// Warnings validation raised (conversions, the options' own hints), for the result.
    pub warnings: Vec<String>,
}

/// Where in the option tree a check runs: empty at the top, `["efidisk0"]` inside a dict.
type Context<'a> = &'a [&'a str];

fn located(msg: String, ctx: Context) -> String {
    if ctx.is_empty() {
        msg
    } else {
        format!("{msg} found in {}", ctx.join(" -> "))
    }
}

/// Validate task arguments against a module's declaration.
///
/// `module_name` is `_ansible_module_name` (as written in the task), used in the
/// unsupported-parameter message like AnsibleModule does.
pub fn validate(
    module_name: &str,
    options: &[Opt],
    rules: &Rules,
    args: Map<String, Value>,
    ignore_unknown: bool,
    dialect: Dialect,
) -> Result<Validated, String> {
    let mut out = Validated::default();
    let mut unsupported = Vec::new();
    let params = validate_level(options, rules, args, &[], dialect, &mut out, &mut unsupported)?;
    if let (false, Some((level, _))) = (ignore_unknown, unsupported.first()) {
        // Reported by AnsibleModule only when nothing else failed first; the supported
        // names listed are those of the level where the first unknown key was found.
        let level = level.clone();
        let mut names: Vec<String> = unsupported
            .iter()
            .filter(|(l, _)| *l == level)
            .map(|(_, n)| n.clone())
            .collect();
        names.sort();
        let level_options = level.iter().fold(options, |opts, name| {
            opts.iter()
                .find(|o| o.name == name)
                .and_then(|o| o.suboptions.as_deref())
                .unwrap_or(opts)
        });
        let mut supported: Vec<String> = level_options
            .iter()
            .map(|o| {
                if o.aliases.is_empty() {
                    o.name.to_string()
                } else {
                    let mut a = o.aliases.clone();
                    a.sort();
                    format!("{} ({})", o.name, a.join(", "))
                }
            })
            .collect();
        supported.sort();
        return Err(format!(
            "Unsupported parameters for ({module_name}) module: {}. Supported parameters include: {}.",
            names.join(", "),
            supported.join(", ")
        ));
    }
    out.params = params;
    Ok(out)
}

fn present(params: &Map<String, Value>, name: &str) -> bool {
    params.contains_key(name)
}

/// A value counts as given for required_* checks when it is present and not null.
fn given(params: &Map<String, Value>, name: &str) -> bool {
    params.get(name).is_some_and(|v| !v.is_null())
}

/// One level of the option tree (the top, or a dict option's suboptions), through
/// AnsibleModule's steps in its order; the first failing step's message wins.
fn validate_level(
    options: &[Opt],
    rules: &Rules,
    mut args: Map<String, Value>,
    ctx: Context,
    dialect: Dialect,
    out: &mut Validated,
    unsupported: &mut Vec<(Vec<String>, String)>,
) -> Result<Map<String, Value>, String> {
    if ctx.is_empty() {
        set_fallbacks(options, &mut args);
    }
    let mut params = handle_aliases(options, args, ctx, out, unsupported);
    check_mutually_exclusive(rules, &params, ctx)?;
    set_defaults(options, &mut params);
    check_required_arguments(options, &params, ctx)?;
    validate_argument_types(options, &mut params, ctx, dialect, out)?;
    collect_no_log_values(options, &params, out);
    check_bounds(options, &params, ctx)?;
    validate_argument_values(options, &params, ctx, dialect)?;
    check_required_together(rules, &params, ctx)?;
    check_required_one_of(rules, &params, ctx)?;
    check_required_if(rules, &params, ctx)?;
    check_required_by(rules, &params, ctx)?;
    validate_sub_spec(options, &mut params, ctx, dialect, out, unsupported)?;
    for opt in options {
        params.entry(opt.name.to_string()).or_insert(Value::Null);
    }
    Ok(params)
}

/// `env_fallback`: environment variables, only for keys the task did not set at all.
fn set_fallbacks(options: &[Opt], args: &mut Map<String, Value>) {
    for opt in options {
        if opt.names().any(|n| args.contains_key(n)) {
            continue;
        }
        if let Some(v) = opt.env.iter().find_map(|var| std::env::var(var).ok()) {
            args.insert(opt.name.to_string(), Value::String(v));
        }
    }
}

/// Aliases to canonical names (an alias beside its option is warned about and
/// dropped); anything else unknown is collected as unsupported.
fn handle_aliases(
    options: &[Opt],
    args: Map<String, Value>,
    ctx: Context,
    out: &mut Validated,
    unsupported: &mut Vec<(Vec<String>, String)>,
) -> Map<String, Value> {
    let mut params = Map::new();
    for (key, value) in args {
        match options.iter().find(|o| o.names().any(|n| n == key)) {
            Some(opt) => {
                if key != opt.name && params.contains_key(opt.name) {
                    out.warnings.push(located(
                        format!("Both option {} and its alias {key} are set.", opt.name),
                        ctx,
                    ));
                    continue;
                }
                params.insert(opt.name.to_string(), value);
            }
            None => {
                let level: Vec<String> = ctx.iter().map(|s| s.to_string()).collect();
                let mut path = level.clone();
                path.push(key.clone());
                unsupported.push((level, path.join(".")));
            }
        }
    }
    params
}

fn check_mutually_exclusive(rules: &Rules, params: &Map<String, Value>, ctx: Context) -> Result<(), String> {
    let violated: Vec<String> = rules
        .mutually_exclusive
        .iter()
        .filter(|group| group.iter().filter(|n| present(params, n)).count() > 1)
        .map(|group| group.join("|"))
        .collect();
    if violated.is_empty() {
        return Ok(());
    }
    Err(located(
        format!("parameters are mutually exclusive: {}", violated.join(", ")),
        ctx,
    ))
}

/// The non-null defaults of options the task did not set.
fn set_defaults(options: &[Opt], params: &mut Map<String, Value>) {
    for opt in options {
        if let Some(default) = &opt.default {
            if !params.contains_key(opt.name) {
                params.insert(opt.name.to_string(), default.clone());
            }
        }
    }
}

fn check_required_arguments(options: &[Opt], params: &Map<String, Value>, ctx: Context) -> Result<(), String> {
    let mut missing: Vec<&str> = options
        .iter()
        .filter(|o| o.required && !present(params, o.name))
        .map(|o| o.name)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort();
    Err(located(
        format!("missing required arguments: {}", missing.join(", ")),
        ctx,
    ))
}

/// Every non-null value coerced to its option's type, as AnsibleModule converts it.
fn validate_argument_types(
    options: &[Opt],
    params: &mut Map<String, Value>,
    ctx: Context,
    dialect: Dialect,
    out: &mut Validated,
) -> Result<(), String> {
    for opt in options {
        let Some(value) = params.get(opt.name) else { continue };
        if value.is_null() {
            continue;
        }
        let converted = convert(opt, value, ctx, dialect, out)?;
        params.insert(opt.name.to_string(), converted);
    }
    Ok(())
}

/// After conversion, so a secret written as a number (`api_otp: 123456`) is masked as
/// the string it became, as AnsibleModule does.
fn collect_no_log_values(options: &[Opt], params: &Map<String, Value>, out: &mut Validated) {
    for opt in options.iter().filter(|o| o.no_log) {
        if let Some(Value::String(s)) = params.get(opt.name) {
            if !s.is_empty() {
                out.secrets.push(s.clone());
            }
        }
    }
}

/// Ranges, in the words of AnsibleModule's choices check ("value of x must be ...").
fn check_bounds(options: &[Opt], params: &Map<String, Value>, ctx: Context) -> Result<(), String> {
    for opt in options.iter().filter(|o| o.bounds != (None, None)) {
        let Some(n) = params.get(opt.name).and_then(Value::as_i64) else {
            continue;
        };
        let msg = match opt.bounds {
            (Some(min), Some(max)) if n < min || n > max => {
                format!("value of {} must be between {min} and {max}, got: {n}", opt.name)
            }
            (Some(min), None) if n < min => format!("value of {} must be at least {min}, got: {n}", opt.name),
            (None, Some(max)) if n > max => format!("value of {} must be at most {max}, got: {n}", opt.name),
            _ => continue,
        };
        return Err(located(msg, ctx));
    }
    Ok(())
}

/// `choices`, of a single value or of every item of a list.
fn validate_argument_values(
    options: &[Opt],
    params: &Map<String, Value>,
    ctx: Context,
    dialect: Dialect,
) -> Result<(), String> {
    for opt in options.iter().filter(|o| !o.choices.is_empty()) {
        let Some(value) = params.get(opt.name) else { continue };
        let values: Vec<&Value> = match value {
            Value::Array(items) => items.iter().collect(),
            v => vec![v],
        };
        if let Some(v) = values.into_iter().find(|v| !opt.choices.contains(v)) {
            return Err(located(not_a_choice(opt, value, v, dialect), ctx));
        }
    }
    Ok(())
}

/// AnsibleModule's message for `v` (the value, or an item of the list `value`) outside
/// the option's choices.
fn not_a_choice(opt: &Opt, value: &Value, v: &Value, dialect: Dialect) -> String {
    let choices: Vec<String> = opt.choices.iter().map(python_str).collect();
    let got = match (v, dialect) {
        (Value::Null, Dialect::Modern) => String::new(),
        _ => python_str(v),
    };
    if value.is_array() {
        format!(
            "value of {} must be one or more of: {}. Got no match for: {}",
            opt.name,
            choices.join(", "),
            got
        )
    } else {
        format!(
            "value of {} must be one of: {}, got: {got}",
            opt.name,
            choices.join(", ")
        )
    }
}

fn check_required_together(rules: &Rules, params: &Map<String, Value>, ctx: Context) -> Result<(), String> {
    for group in &rules.required_together {
        let count = group.iter().filter(|n| given(params, n)).count();
        if count > 0 && count < group.len() {
            return Err(located(
                format!("parameters are required together: {}", group.join(", ")),
                ctx,
            ));
        }
    }
    Ok(())
}

fn check_required_one_of(rules: &Rules, params: &Map<String, Value>, ctx: Context) -> Result<(), String> {
    for group in &rules.required_one_of {
        if !group.iter().any(|n| given(params, n)) {
            return Err(located(
                format!("one of the following is required: {}", group.join(", ")),
                ctx,
            ));
        }
    }
    Ok(())
}

fn check_required_if(rules: &Rules, params: &Map<String, Value>, ctx: Context) -> Result<(), String> {
    for rule in &rules.required_if {
        if params.get(rule.key) != Some(&rule.value) {
            continue;
        }
        let missing: Vec<&str> = rule
            .requirements
            .iter()
            .copied()
            .filter(|n| !given(params, n))
            .collect();
        let failed = if rule.any {
            missing.len() == rule.requirements.len()
        } else {
            !missing.is_empty()
        };
        if failed {
            let which = if rule.any { "any" } else { "all" };
            return Err(located(
                format!(
                    "{} is {} but {which} of the following are missing: {}",
                    rule.key,
                    python_str(&rule.value),
                    missing.join(", ")
                ),
                ctx,
            ));
        }
    }
    Ok(())
}

fn check_required_by(rules: &Rules, params: &Map<String, Value>, ctx: Context) -> Result<(), String> {
    for (key, requirements) in &rules.required_by {
        if !given(params, key) {
            continue;
        }
        let missing: Vec<&str> = requirements.iter().copied().filter(|n| !given(params, n)).collect();
        if !missing.is_empty() {
            return Err(located(
                format!("missing parameter(s) required by '{key}': {}", missing.join(", ")),
                ctx,
            ));
        }
    }
    Ok(())
}

/// Dict options with suboptions: each validated as a level of its own.
fn validate_sub_spec(
    options: &[Opt],
    params: &mut Map<String, Value>,
    ctx: Context,
    dialect: Dialect,
    out: &mut Validated,
    unsupported: &mut Vec<(Vec<String>, String)>,
) -> Result<(), String> {
    for opt in options {
        let Some(sub) = &opt.suboptions else { continue };
        let Some(Value::Object(map)) = params.get(opt.name) else {
            continue;
        };
        let mut path: Vec<&str> = ctx.to_vec();
        path.push(opt.name);
        let validated = validate_level(sub, &opt.sub_rules, map.clone(), &path, dialect, out, unsupported)?;
        params.insert(opt.name.to_string(), Value::Object(validated));
    }
    Ok(())
}

fn convert(opt: &Opt, value: &Value, ctx: Context, dialect: Dialect, out: &mut Validated) -> Result<Value, String> {
    let coerced = coerce(opt.kind, value, dialect).map_err(|detail| {
        let mut msg = format!("argument '{}' is of type {}", opt.name, dialect.type_name(value));
        if !ctx.is_empty() {
            msg.push_str(&format!(" found in '{}'.", ctx.join(" -> ")));
        }
        let msg = format!(
            "{msg} and we were unable to convert to {}: {detail}",
            opt.kind.ansible_name()
        );
        match opt.type_error_hint() {
            Some(hint) => format!("{msg}. {hint}"),
            None => msg,
        }
    })?;
    if let Some(w) = coerced.warning {
        out.warnings.push(w);
    }
    let mut converted = coerced.value;
    if let (Kind::List, Some(element), Value::Array(items)) = (opt.kind, opt.elements, &converted) {
        let mut elements = Vec::with_capacity(items.len());
        for item in items {
            let c = coerce(element, item, dialect).map_err(|detail| {
                format!(
                    "Elements value for option '{}' is of type {} and we were unable to convert to {}: {detail}",
                    opt.name,
                    dialect.type_name(item),
                    element.ansible_name()
                )
            })?;
            elements.push(c.value);
        }
        converted = Value::Array(elements);
    }
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::spec::Opt;
    use serde_json::json;

    fn spec() -> (Vec<Opt>, Rules) {
        (
            vec![
                Opt::str("name").aliases(&["vm_name"]),
                Opt::vmid("vmid"),
                Opt::int("timeout").at_least(1),
                Opt::str("state").default("present").choices(&["present", "absent"]),
                Opt::str("node"),
                Opt::str("secret").no_log(),
                Opt::bool("update"),
                Opt::str("clone"),
                Opt::list("trunks", Kind::Int),
                Opt::dict_of(
                    "tpmstate0",
                    vec![
                        Opt::str("storage").required(),
                        Opt::str("version").default("2.0").choices(&["1.2", "2.0"]),
                    ],
                ),
            ],
            Rules::default()
                .mutually_exclusive(&["clone", "update"])
                .required_one_of(&["name", "vmid"])
                .required_if("state", "present", &["node"]),
        )
    }

    fn run(args: Value) -> Result<Validated, String> {
        let (opts, rules) = spec();
        let Value::Object(map) = args else { unreachable!() };
        validate("ferrox.proxmox.test", &opts, &rules, map, false, Dialect::Legacy)
    }

    #[test]
    fn int_bounds_are_one_rule_with_ansible_wording() {
        assert_eq!(
            run(json!({"vmid": 1, "node": "n", "timeout": 0})).unwrap_err(),
            "value of timeout must be at least 1, got: 0"
        );
        assert_eq!(
            run(json!({"vmid": 1_000_000_000, "node": "n"})).unwrap_err(),
            "value of vmid must be between 0 and 999999999, got: 1000000000"
        );
        assert_eq!(
            run(json!({"vmid": 1e300, "node": "n"})).unwrap_err(),
            "argument 'vmid' is of type <class 'float'> and we were unable to convert to int: 1e+300 is out of range: an int option takes whole numbers from -9223372036854775808 to 9223372036854775807"
        );
        assert!(run(json!({"vmid": 0, "name": "x", "node": "n", "timeout": 1})).is_ok());
    }

    #[test]
    fn fills_defaults_and_coerces() {
        let v = run(json!({"vmid": "100", "node": "pve1", "update": "yes", "trunks": "10,20"})).unwrap();
        assert_eq!(v.params["vmid"], json!(100));
        assert_eq!(v.params["state"], json!("present"));
        assert_eq!(v.params["update"], json!(true));
        assert_eq!(v.params["trunks"], json!([10, 20]));
        assert_eq!(v.params["name"], Value::Null);
    }

    #[test]
    fn aliases_map_to_the_canonical_name() {
        let v = run(json!({"vm_name": "web", "node": "pve1"})).unwrap();
        assert_eq!(v.params["name"], json!("web"));
    }

    #[test]
    fn messages_match_ansible_module() {
        assert_eq!(
            run(json!({"vmid": 1, "node": "n", "bogus": 1, "other": 2})).unwrap_err(),
            "Unsupported parameters for (ferrox.proxmox.test) module: bogus, other. Supported parameters include: clone, name (vm_name), node, secret, state, timeout, tpmstate0, trunks, update, vmid."
        );
        assert_eq!(
            run(json!({"vmid": 1, "clone": "a", "update": false})).unwrap_err(),
            "parameters are mutually exclusive: clone|update"
        );
        assert_eq!(
            run(json!({"vmid": 1, "node": "n", "state": "gone"})).unwrap_err(),
            "value of state must be one of: present, absent, got: gone"
        );
        assert_eq!(
            run(json!({"node": "n"})).unwrap_err(),
            "one of the following is required: name, vmid"
        );
        assert_eq!(
            run(json!({"vmid": 1})).unwrap_err(),
            "state is present but all of the following are missing: node"
        );
        assert_eq!(
            run(json!({"vmid": "x", "node": "n"})).unwrap_err(),
            "argument 'vmid' is of type <class 'str'> and we were unable to convert to int: <class 'str'> cannot be converted to an int"
        );
        assert_eq!(
            run(json!({"vmid": 1, "node": "n", "tpmstate0": {"version": "2.0"}})).unwrap_err(),
            "missing required arguments: storage found in tpmstate0"
        );
    }

    #[test]
    fn unknown_suboptions_list_the_sub_level() {
        assert_eq!(
            run(json!({"vmid": 1, "node": "n", "tpmstate0": {"storage": "s", "bogus": 1}})).unwrap_err(),
            "Unsupported parameters for (ferrox.proxmox.test) module: tpmstate0.bogus. Supported parameters include: storage, version."
        );
    }

    #[test]
    fn suboptions_get_defaults_and_nulls() {
        let v = run(json!({"vmid": 1, "node": "n", "tpmstate0": {"storage": "local-lvm"}})).unwrap();
        assert_eq!(v.params["tpmstate0"], json!({"storage": "local-lvm", "version": "2.0"}));
    }

    #[test]
    fn secrets_are_collected() {
        let v = run(json!({"vmid": 1, "node": "n", "secret": "hunter2"})).unwrap();
        assert_eq!(v.secrets, vec!["hunter2".to_string()]);
        let v = run(json!({"vmid": 1, "node": "n", "secret": 123456})).unwrap();
        assert_eq!(
            v.secrets,
            vec!["123456".to_string()],
            "a numeric secret is masked as the text it became"
        );
    }
}
