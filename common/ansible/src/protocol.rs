//! The Ansible binary-module protocol: read the args file named by `argv[1]`, validate,
//! run the module body, print exactly one JSON object on stdout.
//!
//! ansible-core ignores the exit code when stdout holds JSON, drops anything before the
//! first `{` and warns about anything after the object, so this is the only place that
//! prints. A panic still prints a failed result (see [`install_panic_hook`]).

use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::diff::Diff;
use crate::mask::{mask_value, NO_LOG_PLACEHOLDER};
use crate::options::{coerce::Dialect, validate::validate, Hint, ModuleSpec, Opt, Params};

/// The state of one module run: validated options, Ansible's switches, and the
/// warnings and deprecations collected on the way.
#[derive(Debug)]
pub struct Module {
    /// The module's declaration.
    pub spec: ModuleSpec,
    /// The validated task arguments.
    pub params: Params,
    /// Whether this is a check run (`_ansible_check_mode`).
    pub check_mode: bool,
    /// Whether the diff is wanted (`_ansible_diff`).
    pub diff_mode: bool,
    /// Ansible's verbosity (`_ansible_verbosity`: the number of `-v`).
    pub verbosity: u64,
    /// The name as written in the task (`ferrox.proxmox.proxmox_kvm` or the short name).
    pub module_name: String,
    warnings: Vec<String>,
    deprecations: Vec<Value>,
    /// What the layer above keeps for the whole playbook run ([`PrivateState`]).
    carried: HeldPrivateState,
}

/// The carried state, shown by its presence only (it may hold a ticket).
struct HeldPrivateState(Box<dyn PrivateState>);

impl std::fmt::Debug for HeldPrivateState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrivateState")
    }
}

impl Module {
    /// The run-wide state the [`PrivateStateReader`] built, as its type (`None`: another type).
    pub fn carried<T: PrivateState>(&self) -> Option<&T> {
        (self.carried.0.as_ref() as &dyn std::any::Any).downcast_ref::<T>()
    }

    /// The run-wide state the [`PrivateStateReader`] built, as its type, to change.
    pub fn carried_mut<T: PrivateState>(&mut self) -> Option<&mut T> {
        (self.carried.0.as_mut() as &mut dyn std::any::Any).downcast_mut::<T>()
    }

    /// A warning, printed by ansible-core as `[WARNING]`.
    pub fn warn(&mut self, msg: impl Into<String>) {
        self.warnings.push(msg.into());
    }

    /// A deprecation notice, printed by ansible-core as `[DEPRECATION WARNING]`.
    pub fn deprecate(&mut self, msg: impl Into<String>, version: &str) {
        self.deprecations.push(serde_json::json!({
            "msg": msg.into(),
            "version": version,
            "collection_name": "ferrox.proxmox",
        }));
    }

    /// The warnings so far.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// A successful result under construction.
#[derive(Debug, Clone, Default)]
pub struct Output {
    fields: Map<String, Value>,
    diff: Option<Diff>,
}

impl Output {
    /// A result with `changed` and `msg`.
    pub fn new(changed: bool, msg: impl Into<String>) -> Output {
        let mut fields = Map::new();
        fields.insert("changed".into(), Value::Bool(changed));
        fields.insert("msg".into(), Value::String(msg.into()));
        Output { fields, diff: None }
    }
    /// A result that changed something.
    pub fn changed(msg: impl Into<String>) -> Output {
        Output::new(true, msg)
    }
    /// A result that changed nothing.
    pub fn unchanged(msg: impl Into<String>) -> Output {
        Output::new(false, msg)
    }
    /// Adds a result key.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Output {
        self.set(key, value);
        self
    }
    /// Sets a result key.
    pub fn set(&mut self, key: &str, value: impl Serialize) {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.fields.insert(key.to_string(), value);
    }
    /// A result key set so far.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }
    /// The before/after of the change; printed only under `--diff`.
    pub fn with_diff(mut self, diff: Diff) -> Output {
        self.diff = Some(diff);
        self
    }
    /// The result keys set so far.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }
    /// The diff, taken out (to be combined with another step's).
    pub fn take_diff(&mut self) -> Option<Diff> {
        self.diff.take()
    }
}

/// A failed result: a message that names the cause and the fix, plus optional keys
/// (`vmid`, `status`, ...) that 1.6 also returned on failure.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The message: what failed, why, and what to do.
    pub msg: String,
    /// Result keys beside `msg`.
    pub extra: Map<String, Value>,
}

impl Failure {
    /// A failure with this message.
    pub fn new(msg: impl Into<String>) -> Failure {
        Failure {
            msg: msg.into(),
            extra: Map::new(),
        }
    }
    /// Adds a result key.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Failure {
        self.extra
            .insert(key.to_string(), serde_json::to_value(value).unwrap_or(Value::Null));
        self
    }
}

/// Any error (or message) becomes a failure with its text and its causes after `: `
/// (as `anyhow`'s `{:#}` shows them), so the API client's errors (which know nothing of
/// Ansible, so cannot convert themselves) read as their `Display` — what `?` hands on.
impl<E: Into<Box<dyn std::error::Error>>> From<E> for Failure {
    fn from(e: E) -> Failure {
        let e = e.into();
        let mut msg = e.to_string();
        let mut cause = e.source();
        while let Some(c) = cause {
            msg.push_str(&format!(": {c}"));
            cause = c.source();
        }
        Failure::new(msg)
    }
}

/// The module body: read the cluster, plan, apply unless `check_mode`, report.
pub type Body = fn(&mut Module) -> Result<Output, Failure>;

/// What the layer above the protocol keeps across the tasks of one playbook run (the
/// run layer, `crate::run`: check-mode plan, name index, login ticket). It comes in the
/// private arguments ([`PRIVATE_PREFIX`]) and goes back in private result keys, which
/// the action plugin removes; the protocol only carries it.
pub trait PrivateState: std::any::Any {
    /// Private result keys added to the result (success or failure) before masking.
    fn hand_back(&mut self, result: &mut Map<String, Value>, failed: bool);
    /// Private result keys that hold a secret for the action plugin alone (a login
    /// ticket), added after masking; the action plugin removes them before anything shows
    /// the result.
    fn hand_back_sealed(&mut self, _result: &mut Map<String, Value>) {}
}

/// Builds the run-wide state from the private arguments (`check_mode` as Ansible says);
/// an error fails the task with its text.
pub type PrivateStateReader =
    fn(private: Map<String, Value>, check_mode: bool) -> Result<Box<dyn PrivateState>, String>;

/// A run without run-wide state (a module run by hand, unit tests).
pub struct NoPrivateState;

impl PrivateState for NoPrivateState {
    fn hand_back(&mut self, _result: &mut Map<String, Value>, _failed: bool) {}
}

/// The [`PrivateStateReader`] that keeps nothing.
pub fn carry_nothing(_private: Map<String, Value>, _check_mode: bool) -> Result<Box<dyn PrivateState>, String> {
    Ok(Box::new(NoPrivateState))
}

/// Arguments named so are the action plugin's, not the task's (split off before validation).
pub const PRIVATE_PREFIX: &str = "_ferrox_";

/// The args-file key holding the module protocol version the action plugin speaks.
pub const PROTOCOL_ARG: &str = "_ferrox_protocol";

/// The version of the exchange between `plugins/plugin_utils/binary_module.py` and this
/// binary (its private arguments and result keys). Raise it, there and here, whenever
/// either side changes them.
pub const PROTOCOL_VERSION: u64 = 1;

/// Secret values known so far: no_log option values, and credentials the run obtained
/// (a login ticket). Every output is masked against this list.
static SECRETS: OnceLock<Mutex<Vec<String>>> = OnceLock::new();

fn secrets() -> Vec<String> {
    SECRETS
        .get()
        .and_then(|m| m.lock().ok().map(|s| s.clone()))
        .unwrap_or_default()
}

/// Adds a value that must never appear in any output (e.g. a ticket obtained at login).
pub fn register_secret(value: &str) {
    if !value.is_empty() {
        remember_secrets(&[value.to_string()]);
    }
}

fn remember_secrets(values: &[String]) {
    let lock = SECRETS.get_or_init(|| Mutex::new(Vec::new()));
    if let Ok(mut s) = lock.lock() {
        s.extend(values.iter().cloned());
    }
}

/// A panic becomes a failed result with a readable message, never a backtrace or
/// empty output (which ansible would show as a deserialization failure).
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let detail = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let mut result = serde_json::json!({
            "failed": true,
            "changed": false,
            "msg": format!("internal error in the module{at}: {detail}. Please report this as a bug of ferrox.proxmox."),
        });
        mask_value(&mut result, &secrets());
        print_result(&result);
        // The panic's result is written: end the process as the module's failure.
        #[allow(clippy::exit)]
        std::process::exit(1);
    }));
}

/// A module the binary carries: its name (`plugins/modules/<name>.py`), its one
/// declaration and its body.
#[derive(Clone, Copy)]
pub struct Registered {
    /// The module's name, as `_ferrox_module` gives it.
    pub name: &'static str,
    /// Its one declaration.
    pub spec: fn() -> ModuleSpec,
    /// Its body, run with the validated task.
    pub body: Body,
}

/// The args-file key naming the module to run (the action plugin sets it): all modules
/// are one binary per platform, so the tarball carries each platform once.
pub const MODULE_ARG: &str = "_ferrox_module";

/// The `main` of the module binary. ansible-core runs it as `ferrox ARGS_FILE`, the
/// args file naming the module in [`MODULE_ARG`]; by hand it is `ferrox MODULE ARGS_FILE`.
pub fn run(modules: &[Registered], read_private_state: PrivateStateReader) -> ! {
    install_panic_hook();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let (result, code) = match argv.as_slice() {
        [path] => dispatch(modules, read_private_state, None, path),
        [module, path] => dispatch(modules, read_private_state, Some(module), path),
        _ => (failure_json(&usage(modules), Map::new()), 1),
    };
    print_result(&result);
    // The protocol's one exit: after its one result.
    #[allow(clippy::exit)]
    std::process::exit(code);
}

/// The one JSON object on stdout, written through one buffer (a result holding the
/// run's name index is hundreds of kilobytes).
fn print_result(result: &Value) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // Nothing can be reported if stdout is gone.
    let _ = serde_json::to_writer(&mut out, result).and_then(|()| writeln!(out).map_err(serde_json::Error::io));
    let _ = out.flush();
}

fn usage(modules: &[Registered]) -> String {
    format!(
        "this is the binary of the ferrox.proxmox modules ({}): run them from a playbook, or by hand as `ferrox MODULE ARGS_FILE` with a JSON object of options in ARGS_FILE.",
        names(modules)
    )
}

fn names(modules: &[Registered]) -> String {
    modules.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// Reads the args file, then [`dispatch_args`].
fn dispatch(
    modules: &[Registered],
    read_private_state: PrivateStateReader,
    by_hand: Option<&str>,
    args_path: &str,
) -> (Value, i32) {
    match read_args(args_path) {
        Ok(args) => dispatch_args(modules, read_private_state, by_hand, args),
        Err(msg) => (failure_json(&msg, Map::new()), 1),
    }
}

/// One module run inside the calling process, exactly as the binary runs the args file
/// holding `args` (the action plugin's object: the task's options, ansible-core's
/// `_ansible_*` switches, [`MODULE_ARG`], [`PROTOCOL_ARG`] and the private run state):
/// the result object the binary would print and its exit code. It lets the tests run a
/// module body against the simulator without a process per task; the secrets an
/// earlier run in this process registered are forgotten first, as a new process starts
/// with none.
pub fn run_in_process(
    modules: &[Registered],
    read_private_state: PrivateStateReader,
    args: Map<String, Value>,
) -> (Value, i32) {
    if let Some(Ok(mut known)) = SECRETS.get().map(Mutex::lock) {
        known.clear();
    }
    dispatch_args(modules, read_private_state, None, args)
}

/// Picks the module the command line or the args file names, then [`execute_args`].
fn dispatch_args(
    modules: &[Registered],
    read_private_state: PrivateStateReader,
    by_hand: Option<&str>,
    mut args: Map<String, Value>,
) -> (Value, i32) {
    if let Err(msg) = same_protocol(args.remove(PROTOCOL_ARG), by_hand.is_some()) {
        return (failure_json(&msg, Map::new()), 1);
    }
    let named = args.remove(MODULE_ARG);
    let name = match (by_hand, named.as_ref().map(|v| v.as_str())) {
        (Some(a), Some(Some(b))) if a != b => {
            let msg =
                format!("the command line runs {a} but the arguments file names {b} in {MODULE_ARG}: name one module");
            return (failure_json(&msg, Map::new()), 1);
        }
        (Some(a), _) => a.to_string(),
        (None, Some(Some(b))) => b.to_string(),
        (None, _) => {
            let msg = format!(
                "the arguments file names no module in {MODULE_ARG} (the action plugin sets it); {}",
                usage(modules)
            );
            return (failure_json(&msg, Map::new()), 1);
        }
    };
    match modules.iter().find(|m| m.name == name) {
        Some(m) => execute_args((m.spec)(), m.body, read_private_state, args),
        None => {
            let msg = format!("unknown module {name}: this binary runs {}", names(modules));
            (failure_json(&msg, Map::new()), 1)
        }
    }
}

/// The action plugin's protocol version against ours: a binary and Python files of
/// different builds fail before anything runs, saying how to rebuild. By hand (the
/// module on the command line) no version is needed.
fn same_protocol(given: Option<Value>, by_hand: bool) -> Result<(), String> {
    let theirs = match given {
        Some(v) if v.as_u64() == Some(PROTOCOL_VERSION) => return Ok(()),
        None if by_hand => return Ok(()),
        Some(v) => v.to_string(),
        None => "none (it sends no version)".to_string(),
    };
    Err(format!(
        "ferrox.proxmox's action plugin speaks module protocol {theirs}, but its module binary speaks {PROTOCOL_VERSION}: \
         the binary and the collection's Python files come from different builds. Rebuild the binary with \
         `cargo collection build` and install the collection again (or install one released collection)."
    ))
}

fn failure_json(msg: &str, extra: Map<String, Value>) -> Value {
    let mut map = extra;
    map.insert("failed".into(), Value::Bool(true));
    // A failure after a write (a guest that never came up after its start) keeps `changed`.
    map.entry("changed").or_insert(Value::Bool(false));
    map.insert("msg".into(), Value::String(msg.to_string()));
    Value::Object(map)
}

/// Ansible's switches, split off the task arguments.
#[derive(Debug, Default)]
struct Internals {
    check_mode: bool,
    diff: bool,
    verbosity: u64,
    module_name: Option<String>,
    ignore_unknown_opts: bool,
    /// `Some(false)` (2.21+ default) means: leave `invocation` out.
    inject_invocation: Option<bool>,
    string_conversion_warn: bool,
    version: Option<String>,
    /// The action plugin's private arguments ([`PRIVATE_PREFIX`]), for the [`PrivateStateReader`].
    private: Map<String, Value>,
}

fn split_internals(args: Map<String, Value>) -> (Map<String, Value>, Internals) {
    let mut task = Map::new();
    let mut int = Internals::default();
    for (key, value) in args {
        if key.starts_with(PRIVATE_PREFIX) {
            int.private.insert(key, value);
            continue;
        }
        let Some(name) = key.strip_prefix("_ansible_") else {
            task.insert(key, value);
            continue;
        };
        match name {
            "check_mode" => int.check_mode = value.as_bool().unwrap_or(false),
            "diff" => int.diff = value.as_bool().unwrap_or(false),
            "verbosity" => int.verbosity = value.as_u64().unwrap_or(0),
            "module_name" => int.module_name = value.as_str().map(str::to_string),
            "ignore_unknown_opts" => int.ignore_unknown_opts = value.as_bool().unwrap_or(false),
            "inject_invocation" => int.inject_invocation = value.as_bool(),
            "string_conversion_action" => int.string_conversion_warn = value.as_str() == Some("warn"),
            "version" => int.version = value.as_str().map(str::to_string),
            _ => {}
        }
    }
    (task, int)
}

/// The JSON object of an args file.
fn read_args(args_path: &str) -> Result<Map<String, Value>, String> {
    let text =
        std::fs::read_to_string(args_path).map_err(|e| format!("cannot read the arguments file {args_path}: {e}"))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("the arguments file must hold a JSON object".into()),
        Err(e) => Err(format!("the arguments file is not valid JSON: {e}")),
    }
}

/// Validates, runs; returns the result object and the exit code.
fn execute_args(
    spec: ModuleSpec,
    body: Body,
    read_private_state: PrivateStateReader,
    args: Map<String, Value>,
) -> (Value, i32) {
    let (task_args, mut internals) = split_internals(args);
    let module_name = internals.module_name.clone().unwrap_or_else(|| spec.name.to_string());
    let raw_args = task_args.clone();

    let dialect = Dialect::from_version(internals.version.as_deref());
    let validated = match validate(
        &module_name,
        &spec.options,
        &spec.rules,
        task_args,
        internals.ignore_unknown_opts,
        dialect,
    ) {
        Ok(v) => v,
        Err(msg) => {
            let secrets = no_log_values(&spec.options, &raw_args);
            remember_secrets(&secrets);
            let mut result = failure_json(&msg, Map::new());
            attach_invocation(&mut result, &spec.options, &raw_args, &internals);
            mask_value(&mut result, &secrets);
            return (result, 1);
        }
    };
    remember_secrets(&validated.secrets);
    let carried = match read_private_state(std::mem::take(&mut internals.private), internals.check_mode) {
        Ok(carried) => carried,
        Err(msg) => return (failure_json(&msg, Map::new()), 1),
    };

    let mut module = Module {
        params: Params::new(validated.params.clone()),
        spec,
        check_mode: internals.check_mode,
        diff_mode: internals.diff,
        verbosity: internals.verbosity,
        module_name,
        warnings: if internals.string_conversion_warn {
            validated.warnings
        } else {
            Vec::new()
        },
        deprecations: Vec::new(),
        carried: HeldPrivateState(carried),
    };
    for hint in module.spec.options.iter().flat_map(|o| &o.hints) {
        if let Hint::Warning { when, text } = hint {
            if when(&module.params) {
                module.warnings.push(text.to_string());
            }
        }
    }

    let outcome = body(&mut module);
    let (mut result, code) = match outcome {
        Ok(output) => {
            let mut map = output.fields;
            if module.diff_mode {
                if let Some(diff) = output.diff.filter(|d| !d.is_empty()) {
                    map.insert("diff".into(), diff.to_value());
                }
            }
            (Value::Object(map), 0)
        }
        Err(failure) => (failure_json(&failure.msg, failure.extra), 1),
    };
    if let Value::Object(map) = &mut result {
        module.carried.0.hand_back(map, code != 0);
        if !module.warnings.is_empty() {
            map.insert("warnings".into(), Value::from(module.warnings.clone()));
        }
        if !module.deprecations.is_empty() {
            map.insert("deprecations".into(), Value::Array(module.deprecations.clone()));
        }
    }
    attach_invocation(&mut result, &module.spec.options, module.params.as_map(), &internals);
    mask_value(&mut result, &secrets());
    if let Value::Object(map) = &mut result {
        module.carried.0.hand_back_sealed(map);
    }
    (result, code)
}

/// Values of `no_log` options as given, for masking when validation failed early.
fn no_log_values(options: &[Opt], args: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for opt in options.iter().filter(|o| o.no_log) {
        for name in opt.names() {
            if let Some(v) = args.get(name) {
                let s = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
                if !s.is_empty() && !v.is_null() {
                    out.push(s);
                }
            }
        }
        if let Some(v) = opt.env.iter().find_map(|var| std::env::var(var).ok()) {
            if !v.is_empty() {
                out.push(v);
            }
        }
    }
    out
}

/// `invocation.module_args` as AnsibleModule returns it (no_log values replaced),
/// unless ansible-core asked not to (2.21's `_ansible_inject_invocation: false`).
fn attach_invocation(result: &mut Value, options: &[Opt], params: &Map<String, Value>, internals: &Internals) {
    if internals.inject_invocation == Some(false) {
        return;
    }
    let module_args = Value::Object(hide_no_log(options, params));
    if let Value::Object(map) = result {
        map.insert("invocation".into(), serde_json::json!({ "module_args": module_args }));
    }
}

fn hide_no_log(options: &[Opt], params: &Map<String, Value>) -> Map<String, Value> {
    let mut out = params.clone();
    for opt in options {
        let Some(value) = out.get_mut(opt.name) else { continue };
        if opt.no_log && !value.is_null() {
            *value = Value::String(NO_LOG_PLACEHOLDER.into());
        } else if let (Some(sub), Value::Object(map)) = (&opt.suboptions, &*value) {
            *value = Value::Object(hide_no_log(sub, map));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Opt, Rules, Support};
    use serde_json::json;

    fn spec() -> ModuleSpec {
        ModuleSpec {
            name: "demo",
            short_description: "demo",
            description: vec![],
            version_added: "0.1.0",
            options: vec![Opt::str("name").required(), Opt::str("password").no_log()],
            rules: Rules::default(),
            check_mode: (Support::Full, ""),
            diff_mode: (Support::Full, ""),
            notes: vec![],
            seealso: vec![],
            examples: "",
            returns: "",
        }
    }

    fn body(m: &mut Module) -> Result<Output, Failure> {
        let name = m.params.str("name").unwrap().to_string();
        if name == "boom" {
            return Err(
                Failure::new(format!("login with {} failed", m.params.str("password").unwrap())).with("vmid", 1),
            );
        }
        if name == "leak" {
            register_secret("TICKET-abc");
            return Err(Failure::new("server said: PVEAuthCookie=TICKET-abc"));
        }
        if name == "carries" {
            let seen = m.carried::<Echo>().map(|e| e.0.clone());
            register_secret("TICKET-xyz");
            return Ok(Output::changed("carried TICKET-xyz").with("seen", seen));
        }
        if name == "old" {
            m.deprecate("name: old is deprecated", "2.0.0");
            m.warn("careful");
        }
        let mut d = Diff::new("demo");
        d.change("name", None, Some(json!(name)));
        Ok(Output::changed(format!("hello {name}"))
            .with("check", m.check_mode)
            .with_diff(d))
    }

    fn run_with(args: Value) -> (Value, i32) {
        run_spec(spec(), args)
    }

    fn run_spec(spec: ModuleSpec, args: Value) -> (Value, i32) {
        let dir = std::env::temp_dir().join(format!("ferrox-proto-{}-{}", std::process::id(), rand_suffix()));
        std::fs::write(&dir, args.to_string()).unwrap();
        let out = match read_args(dir.to_str().unwrap()) {
            Ok(args) => execute_args(spec, body, echo, args),
            Err(msg) => (failure_json(&msg, Map::new()), 1),
        };
        std::fs::remove_file(&dir).ok();
        out
    }

    fn rand_suffix() -> u128 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    }

    fn dispatch_with(by_hand: Option<&str>, args: Value) -> (Value, i32) {
        let path = std::env::temp_dir().join(format!("ferrox-proto-{}-{}", std::process::id(), rand_suffix()));
        std::fs::write(&path, args.to_string()).unwrap();
        let modules = [
            Registered {
                name: "demo",
                spec,
                body,
            },
            Registered {
                name: "other",
                spec,
                body,
            },
        ];
        let out = dispatch(&modules, carry_nothing, by_hand, path.to_str().unwrap());
        std::fs::remove_file(&path).ok();
        out
    }

    #[test]
    fn the_args_file_or_the_command_line_names_the_module() {
        let (r, code) = dispatch_with(
            None,
            json!({"name": "a", MODULE_ARG: "demo", PROTOCOL_ARG: PROTOCOL_VERSION}),
        );
        assert_eq!((r["msg"].as_str(), code), (Some("hello a"), 0), "{r}");
        assert!(
            r["invocation"]["module_args"].get(MODULE_ARG).is_none(),
            "not a task option: {r}"
        );
        let (r, code) = dispatch_with(Some("demo"), json!({"name": "b"}));
        assert_eq!((r["msg"].as_str(), code), (Some("hello b"), 0), "{r}");
        let (r, code) = dispatch_with(Some("demo"), json!({"name": "c", MODULE_ARG: "demo"}));
        assert_eq!((r["msg"].as_str(), code), (Some("hello c"), 0), "{r}");
    }

    #[test]
    fn a_missing_unknown_or_contradicting_module_name_fails_naming_the_modules() {
        let (r, code) = dispatch_with(None, json!({"name": "a", PROTOCOL_ARG: PROTOCOL_VERSION}));
        assert_eq!(code, 1);
        let msg = r["msg"].as_str().unwrap();
        assert!(
            msg.contains(MODULE_ARG) && msg.contains("demo, other") && msg.contains("ferrox MODULE ARGS_FILE"),
            "{msg}"
        );
        let (r, _) = dispatch_with(
            None,
            json!({"name": "a", MODULE_ARG: "proxmox_lxc", PROTOCOL_ARG: PROTOCOL_VERSION}),
        );
        assert_eq!(
            r["msg"], "unknown module proxmox_lxc: this binary runs demo, other",
            "{r}"
        );
        let (r, _) = dispatch_with(Some("demo"), json!({"name": "a", MODULE_ARG: "other"}));
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .contains("runs demo but the arguments file names other"),
            "{r}"
        );
    }

    #[test]
    fn declared_hints_follow_ansible_wording_or_warn() {
        let hinted = || {
            let mut s = spec();
            s.options
                .push(Opt::dict("layout").type_hint("layout is a dict; to turn it on, use layout_enabled: true."));
            s.options
                .push(Opt::bool("legacy").warn_when(|p| p.flag("legacy"), "legacy is no longer needed."));
            s
        };
        let plain = || {
            let mut s = spec();
            s.options.push(Opt::dict("layout"));
            s
        };
        for version in ["2.17.14", "2.19.14"] {
            let args = json!({"name": "x", "layout": true, "_ansible_version": version});
            let (r, code) = run_spec(hinted(), args.clone());
            assert_eq!(code, 1);
            let (ansible, _) = run_spec(plain(), args);
            let ansible = ansible["msg"].as_str().unwrap().to_string();
            assert!(ansible.starts_with("argument 'layout' is of type "), "{ansible}");
            assert_eq!(
                r["msg"],
                json!(format!(
                    "{ansible}. layout is a dict; to turn it on, use layout_enabled: true."
                ))
            );
        }
        let (r, code) = run_spec(hinted(), json!({"name": "x", "legacy": true}));
        assert_eq!(code, 0);
        assert_eq!(r["warnings"], json!(["legacy is no longer needed."]));
        let (r, _) = run_spec(hinted(), json!({"name": "x", "legacy": false}));
        assert!(r.get("warnings").is_none());
        assert_eq!(
            hinted().option("layout").unwrap().description,
            vec!["layout is a dict; to turn it on, use layout_enabled: true."]
        );
    }

    #[test]
    fn success_carries_invocation_and_diff_only_in_diff_mode() {
        let (r, code) = run_with(json!({"name": "x", "_ansible_check_mode": true, "_ansible_diff": false}));
        assert_eq!(code, 0);
        assert_eq!(r["changed"], json!(true));
        assert_eq!(r["check"], json!(true));
        assert!(r.get("diff").is_none());
        assert_eq!(r["invocation"]["module_args"]["name"], json!("x"));
        let (r, _) = run_with(json!({"name": "x", "_ansible_diff": true}));
        assert_eq!(r["diff"]["after"], json!({"name": "x"}));
    }

    #[test]
    fn failures_mask_secrets_everywhere() {
        let (r, code) = run_with(json!({"name": "boom", "password": "hunter2"}));
        assert_eq!(code, 1);
        assert_eq!(r["failed"], json!(true));
        assert_eq!(r["msg"], json!("login with ******** failed"));
        assert_eq!(r["vmid"], json!(1));
        assert_eq!(r["invocation"]["module_args"]["password"], json!(NO_LOG_PLACEHOLDER));
        assert!(!r.to_string().contains("hunter2"));
    }

    #[test]
    fn validation_errors_fail_with_ansible_text() {
        let (r, _) = run_with(json!({"password": "hunter2", "bogus": 1, "_ansible_module_name": "ns.col.demo"}));
        assert_eq!(r["msg"], json!("missing required arguments: name"));
        let (r, _) = run_with(json!({"name": "a", "bogus": 1, "_ansible_module_name": "ns.col.demo"}));
        assert_eq!(
            r["msg"],
            json!(
                "Unsupported parameters for (ns.col.demo) module: bogus. Supported parameters include: name, password."
            )
        );
        let (r, _) = run_with(json!({"name": "a", "bogus": 1, "_ansible_ignore_unknown_opts": true}));
        assert_eq!(r["changed"], json!(true));
    }

    #[test]
    fn warnings_and_deprecations_are_lists_as_ansible_reads_them() {
        let (r, _) = run_with(json!({"name": "old"}));
        assert_eq!(r["warnings"], json!(["careful"]));
        assert_eq!(
            r["deprecations"],
            json!([{"msg": "name: old is deprecated", "version": "2.0.0", "collection_name": "ferrox.proxmox"}])
        );
        let (r, _) = run_with(json!({"name": "x"}));
        assert!(r.get("warnings").is_none() && r.get("deprecations").is_none());
    }

    #[test]
    fn registered_secrets_are_masked_too() {
        let (r, _) = run_with(json!({"name": "leak"}));
        assert_eq!(r["msg"], json!("server said: PVEAuthCookie=********"));
    }

    /// A read_private_state keeping the private arguments it was given, handing back one key and a
    /// sealed one.
    struct Echo(Map<String, Value>);

    impl PrivateState for Echo {
        fn hand_back(&mut self, result: &mut Map<String, Value>, failed: bool) {
            result.insert("_ferrox_back".into(), json!({"failed": failed, "note": "TICKET-xyz"}));
        }
        fn hand_back_sealed(&mut self, result: &mut Map<String, Value>) {
            result.insert("_ferrox_sealed".into(), json!("TICKET-xyz"));
        }
    }

    fn echo(private: Map<String, Value>, check_mode: bool) -> Result<Box<dyn PrivateState>, String> {
        if private.contains_key("_ferrox_bad") {
            return Err(format!("bad private argument (check mode: {check_mode})"));
        }
        Ok(Box::new(Echo(private)))
    }

    #[test]
    fn private_arguments_go_to_the_carrier_and_come_back_masked_unless_sealed() {
        let (r, code) = run_with(json!({"name": "carries", "_ferrox_plan": {"effects": []}, "_ferrox_names": 1}));
        assert_eq!(code, 0, "{r}");
        assert_eq!(r["seen"], json!({"_ferrox_plan": {"effects": []}, "_ferrox_names": 1}));
        assert!(
            r["invocation"]["module_args"].get("_ferrox_plan").is_none(),
            "never echoed: {r}"
        );
        assert_eq!(r["msg"], json!("carried ********"));
        assert_eq!(r["_ferrox_back"], json!({"failed": false, "note": "********"}));
        assert_eq!(r["_ferrox_sealed"], json!("TICKET-xyz"), "for the action plugin alone");
        let (r, _) = run_with(json!({"name": "boom", "password": "s3cret-carried"}));
        assert_eq!(r["_ferrox_back"]["failed"], json!(true));
        let (r, code) = run_with(json!({"name": "x", "_ferrox_bad": 1, "_ansible_check_mode": true}));
        assert_eq!(
            (r["msg"].as_str(), code),
            (Some("bad private argument (check mode: true)"), 1)
        );
    }

    #[test]
    fn the_action_plugin_and_the_binary_speak_one_protocol_version() {
        let (r, code) = dispatch_with(
            None,
            json!({"name": "a", MODULE_ARG: "demo", PROTOCOL_ARG: PROTOCOL_VERSION}),
        );
        assert_eq!((r["msg"].as_str(), code), (Some("hello a"), 0), "{r}");
        for (sent, named) in [
            (json!(PROTOCOL_VERSION + 1), (PROTOCOL_VERSION + 1).to_string()),
            (Value::Null, "none".to_string()),
        ] {
            let mut args = json!({"name": "a", MODULE_ARG: "demo"});
            if !sent.is_null() {
                args[PROTOCOL_ARG] = sent;
            }
            let (r, code) = dispatch_with(None, args);
            let msg = r["msg"].as_str().unwrap();
            assert_eq!(code, 1);
            let ours = format!("its module binary speaks {PROTOCOL_VERSION}");
            for part in [
                format!("speaks module protocol {named}"),
                ours,
                "cargo collection build".into(),
            ] {
                assert!(msg.contains(&part), "{part:?} missing: {msg}");
            }
        }
        let (r, code) = dispatch_with(Some("demo"), json!({"name": "b"}));
        assert_eq!(
            (r["msg"].as_str(), code),
            (Some("hello b"), 0),
            "by hand, no version needed: {r}"
        );
    }

    #[test]
    fn invocation_is_left_out_when_ansible_asks() {
        let (r, _) = run_with(json!({"name": "x", "_ansible_inject_invocation": false}));
        assert!(r.get("invocation").is_none());
    }
}
