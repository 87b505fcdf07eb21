//! Options: declared once per module ([`spec`]), validated like AnsibleModule
//! ([`validate`], [`coerce`]), read back with types ([`Params`]).

pub mod coerce;
pub mod read;
pub mod spec;
pub mod validate;

pub use read::{Choice, Reader};
pub use spec::{Hint, Kind, ModuleSpec, Opt, RequiredIf, Rules, Support};

use serde_json::{Map, Value};

/// Validated parameters with typed getters.
///
/// Every declared option is present (null when unset), so asking for a name that was
/// never declared is a programming error and panics in debug builds.
#[derive(Debug, Clone, Default)]
pub struct Params {
    values: Map<String, Value>,
}

impl Params {
    /// Parameters from validated values (every declared option present).
    pub fn new(values: Map<String, Value>) -> Params {
        Params { values }
    }

    /// The parameters validation hands a module for `args` (an object): every option of
    /// `opts` at its declared default (null without one), then what `args` sets. For the
    /// tests of how a module reads its task.
    pub fn with_defaults(opts: &[Opt], args: &Value) -> Params {
        let mut values: Map<String, Value> = opts
            .iter()
            .map(|o| (o.name.to_string(), o.default.clone().unwrap_or(Value::Null)))
            .collect();
        values.extend(args.as_object().cloned().unwrap_or_default());
        Params { values }
    }

    /// The value of a declared option; `None` when unset or null.
    pub fn get(&self, name: &str) -> Option<&Value> {
        debug_assert!(self.values.contains_key(name), "option {name} is not declared");
        self.values.get(name).filter(|v| !v.is_null())
    }
    /// Whether the option is set (not null).
    pub fn is_set(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    /// A text option; `None` when unset.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }
    /// A string option, treating an empty string as unset.
    pub fn non_empty(&self, name: &str) -> Option<&str> {
        self.str(name).filter(|s| !s.is_empty())
    }
    /// An integer option; `None` when unset.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }
    /// A float option; `None` when unset.
    pub fn float(&self, name: &str) -> Option<f64> {
        self.get(name).and_then(Value::as_f64)
    }
    /// A bool option; `None` when unset.
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }
    /// A bool option that counts as false when unset.
    pub fn flag(&self, name: &str) -> bool {
        self.bool(name).unwrap_or(false)
    }
    /// A list option; `None` when unset.
    pub fn list(&self, name: &str) -> Option<&Vec<Value>> {
        self.get(name).and_then(Value::as_array)
    }
    /// A list option's elements as text (non-strings as their JSON).
    pub fn strings(&self, name: &str) -> Option<Vec<String>> {
        self.list(name).map(|items| {
            items
                .iter()
                .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                .collect()
        })
    }
    /// A dict option; `None` when unset.
    pub fn dict(&self, name: &str) -> Option<&Map<String, Value>> {
        self.get(name).and_then(Value::as_object)
    }
    /// A dict option with declared sub-options, as its own `Params`.
    pub fn sub(&self, name: &str) -> Option<Params> {
        self.dict(name).map(|m| Params::new(m.clone()))
    }
    /// All values, canonical names, nulls included.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.values
    }
}
