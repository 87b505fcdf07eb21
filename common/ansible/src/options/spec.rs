//! The one declaration of a module's options.
//!
//! Validation ([`super::validate`]), the sidecar docs ([`crate::docs`]) and typed access
//! ([`super::Params`]) all read this, so an option is described exactly once.

use serde_json::Value;

use super::Params;

/// The option types AnsibleModule knows, with its coercion rules (see `coerce.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text.
    Str,
    /// An integer.
    Int,
    /// A floating-point number.
    Float,
    /// A boolean (AnsibleModule's spellings: `yes`, `on`, `1`, ...).
    Bool,
    /// A filesystem path: `~` and `$VARS` are expanded.
    Path,
    /// A list, its elements of the option's `elements` type.
    List,
    /// A dict, free-form or of declared sub-options.
    Dict,
    /// Passed through unchanged.
    Raw,
}

impl Kind {
    /// The name AnsibleModule uses in messages and docs (`type: str`).
    pub fn ansible_name(self) -> &'static str {
        match self {
            Kind::Str => "str",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Bool => "bool",
            Kind::Path => "path",
            Kind::List => "list",
            Kind::Dict => "dict",
            Kind::Raw => "raw",
        }
    }
}

/// PVE's largest vmid (`pve-vmid`: 100 - 999999999).
pub const VMID_MAX: i64 = 999_999_999;

/// One option of a module: its type, default, choices, aliases, docs and checks.
#[derive(Debug, Clone)]
pub struct Opt {
    /// The option's name in the task.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Element type of a `list` option.
    pub elements: Option<Kind>,
    /// The value when the task does not set it.
    pub default: Option<Value>,
    /// The values it takes (empty: any).
    pub choices: Vec<Value>,
    /// Other names the task may use for it.
    pub aliases: Vec<&'static str>,
    /// Environment variables read, in order, when the option is absent from the task.
    pub env: Vec<&'static str>,
    /// Whether its value is a secret, masked in every output.
    pub no_log: bool,
    /// Whether the task must set it.
    pub required: bool,
    /// Its documentation, one paragraph an element.
    pub description: Vec<String>,
    /// The collection release that added it.
    pub version_added: Option<&'static str>,
    /// Options of a `dict` option; `None` means a free-form dict.
    pub suboptions: Option<Vec<Opt>>,
    /// Constraints between sub-options (only for `dict` options with `suboptions`).
    pub sub_rules: Rules,
    /// Smallest and largest value of an `int` option (checked with the choices).
    pub bounds: (Option<i64>, Option<i64>),
    /// Known mistakes with this option and what to do instead.
    pub hints: Vec<Hint>,
}

/// A known mistake with an option and what to do instead, declared with the option:
/// the error or warning a user meets and the option's documentation show the same text.
#[derive(Debug, Clone)]
pub enum Hint {
    /// Appended to AnsibleModule's type error for this option (its wording stays first,
    /// so what matched the Python module's message still matches).
    OnTypeError(&'static str),
    /// A warning when `when` holds for the validated task (top-level options only).
    Warning {
        /// When the warning applies.
        when: fn(&Params) -> bool,
        /// The warning.
        text: &'static str,
    },
}

impl Hint {
    /// The hint's text.
    pub fn text(&self) -> &'static str {
        match self {
            Hint::OnTypeError(text) | Hint::Warning { text, .. } => text,
        }
    }
}

impl Opt {
    fn new(name: &'static str, kind: Kind) -> Opt {
        Opt {
            name,
            kind,
            elements: None,
            default: None,
            choices: Vec::new(),
            aliases: Vec::new(),
            env: Vec::new(),
            no_log: false,
            required: false,
            description: Vec::new(),
            version_added: None,
            suboptions: None,
            sub_rules: Rules::default(),
            bounds: (None, None),
            hints: Vec::new(),
        }
    }
    /// A `str` option.
    pub fn str(name: &'static str) -> Opt {
        Opt::new(name, Kind::Str)
    }
    /// An `int` option.
    pub fn int(name: &'static str) -> Opt {
        Opt::new(name, Kind::Int)
    }
    /// A VM id: an `int` up to PVE's largest vmid; 0 keeps 1.6's meaning of "not given".
    pub fn vmid(name: &'static str) -> Opt {
        Opt::int(name).at_least(0).at_most(VMID_MAX)
    }
    /// A `float` option.
    pub fn float(name: &'static str) -> Opt {
        Opt::new(name, Kind::Float)
    }
    /// A `bool` option.
    pub fn bool(name: &'static str) -> Opt {
        Opt::new(name, Kind::Bool)
    }
    /// A `path` option.
    pub fn path(name: &'static str) -> Opt {
        Opt::new(name, Kind::Path)
    }
    /// A `raw` option, passed through unchanged.
    pub fn raw(name: &'static str) -> Opt {
        Opt::new(name, Kind::Raw)
    }
    /// A `list` option of `elements`.
    pub fn list(name: &'static str, elements: Kind) -> Opt {
        let mut o = Opt::new(name, Kind::List);
        o.elements = Some(elements);
        o
    }
    /// A free-form dict (keys are not validated by Ansible, only by the module).
    pub fn dict(name: &'static str) -> Opt {
        Opt::new(name, Kind::Dict)
    }
    /// A dict with declared sub-options.
    pub fn dict_of(name: &'static str, suboptions: Vec<Opt>) -> Opt {
        let mut o = Opt::new(name, Kind::Dict);
        o.suboptions = Some(suboptions);
        o
    }

    /// One paragraph of description per call.
    pub fn desc(mut self, paragraph: impl Into<String>) -> Opt {
        self.description.push(paragraph.into());
        self
    }
    /// The value when the task does not set it.
    pub fn default(mut self, value: impl Into<Value>) -> Opt {
        self.default = Some(value.into());
        self
    }
    /// The values it takes.
    pub fn choices<T: Into<Value> + Clone>(mut self, choices: &[T]) -> Opt {
        self.choices = choices.iter().cloned().map(Into::into).collect();
        self
    }
    /// Other names it answers to.
    pub fn aliases(mut self, aliases: &[&'static str]) -> Opt {
        self.aliases = aliases.to_vec();
        self
    }
    /// Environment variables read, in order, when the task does not set it.
    pub fn env(mut self, vars: &[&'static str]) -> Opt {
        self.env = vars.to_vec();
        self
    }
    /// Marks its value a secret, masked in every output.
    pub fn no_log(mut self) -> Opt {
        self.no_log = true;
        self
    }
    /// Makes the task set it.
    pub fn required(mut self) -> Opt {
        self.required = true;
        self
    }
    /// The collection release that added it.
    pub fn added(mut self, version: &'static str) -> Opt {
        self.version_added = Some(version);
        self
    }
    /// Smallest value an `int` option takes.
    pub fn at_least(mut self, min: i64) -> Opt {
        self.bounds.0 = Some(min);
        self
    }
    /// Largest value an `int` option takes.
    pub fn at_most(mut self, max: i64) -> Opt {
        self.bounds.1 = Some(max);
        self
    }
    /// The constraints between its sub-options.
    pub fn rules(mut self, rules: Rules) -> Opt {
        self.sub_rules = rules;
        self
    }
    /// Says what to do instead when the value has the wrong type (after AnsibleModule's
    /// message); the text is also a paragraph of the option's documentation.
    pub fn type_hint(mut self, text: &'static str) -> Opt {
        self.hints.push(Hint::OnTypeError(text));
        self.description.push(text.to_string());
        self
    }
    /// Warns with `text` when `when` holds for the validated task; the text is also a
    /// paragraph of the option's documentation.
    pub fn warn_when(mut self, when: fn(&Params) -> bool, text: &'static str) -> Opt {
        self.hints.push(Hint::Warning { when, text });
        self.description.push(text.to_string());
        self
    }
    /// The type-error hint, if declared.
    pub fn type_error_hint(&self) -> Option<&'static str> {
        self.hints.iter().find_map(|h| match h {
            Hint::OnTypeError(text) => Some(*text),
            Hint::Warning { .. } => None,
        })
    }

    /// Every name the option answers to.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }
}

/// A `required_if` rule: when `key == value`, `requirements` must be present
/// (all of them, or at least one when `any` is set).
#[derive(Debug, Clone)]
pub struct RequiredIf {
    /// The option tested.
    pub key: &'static str,
    /// The value that makes the requirements apply.
    pub value: Value,
    /// The options then required.
    pub requirements: Vec<&'static str>,
    /// Whether one of them is enough.
    pub any: bool,
}

/// The constraints between options, with AnsibleModule's meaning and messages.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Groups of options of which at most one may be set.
    pub mutually_exclusive: Vec<Vec<&'static str>>,
    /// Groups of options set all together or not at all.
    pub required_together: Vec<Vec<&'static str>>,
    /// Groups of options of which at least one must be set.
    pub required_one_of: Vec<Vec<&'static str>>,
    /// Options required when another has a given value.
    pub required_if: Vec<RequiredIf>,
    /// `(key, requirements)`: when `key` is set, every requirement must be set.
    pub required_by: Vec<(&'static str, Vec<&'static str>)>,
}

impl Rules {
    /// Adds a group of which at most one may be set.
    pub fn mutually_exclusive(mut self, names: &[&'static str]) -> Rules {
        self.mutually_exclusive.push(names.to_vec());
        self
    }
    /// Adds a group set all together or not at all.
    pub fn required_together(mut self, names: &[&'static str]) -> Rules {
        self.required_together.push(names.to_vec());
        self
    }
    /// Adds a group of which at least one must be set.
    pub fn required_one_of(mut self, names: &[&'static str]) -> Rules {
        self.required_one_of.push(names.to_vec());
        self
    }
    /// When `key` is `value`, every one of `requirements` must be set.
    pub fn required_if(mut self, key: &'static str, value: impl Into<Value>, requirements: &[&'static str]) -> Rules {
        self.required_if.push(RequiredIf {
            key,
            value: value.into(),
            requirements: requirements.to_vec(),
            any: false,
        });
        self
    }
    /// When `key` is set, every one of `requirements` must be set.
    pub fn required_by(mut self, key: &'static str, requirements: &[&'static str]) -> Rules {
        self.required_by.push((key, requirements.to_vec()));
        self
    }
    /// Rules of both sets, `self` first.
    pub fn merge(mut self, other: Rules) -> Rules {
        self.mutually_exclusive.extend(other.mutually_exclusive);
        self.required_together.extend(other.required_together);
        self.required_one_of.extend(other.required_one_of);
        self.required_if.extend(other.required_if);
        self.required_by.extend(other.required_by);
        self
    }
}

/// How far a module supports check or diff mode (the sidecar `attributes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Supported fully.
    Full,
    /// Supported with limits, which the detail text says.
    Partial,
    /// Not supported.
    None,
}

impl Support {
    /// The word the sidecar's `attributes` use (`full`, `partial`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Support::Full => "full",
            Support::Partial => "partial",
            Support::None => "none",
        }
    }
}

/// Everything declared about one module.
#[derive(Debug, Clone)]
pub struct ModuleSpec {
    /// The module's name (`proxmox_kvm`).
    pub name: &'static str,
    /// The one-line description `ansible-doc -l` shows.
    pub short_description: &'static str,
    /// Its documentation, one paragraph an element.
    pub description: Vec<String>,
    /// The collection release that added it.
    pub version_added: &'static str,
    /// Its options, in documentation order.
    pub options: Vec<Opt>,
    /// The constraints between its options.
    pub rules: Rules,
    /// How far it supports check mode, and the detail text.
    pub check_mode: (Support, &'static str),
    /// How far it supports diff mode, and the detail text.
    pub diff_mode: (Support, &'static str),
    /// The documentation's notes.
    pub notes: Vec<String>,
    /// Modules the documentation refers to (`ferrox.proxmox.proxmox_disk`).
    pub seealso: Vec<&'static str>,
    /// The EXAMPLES block, verbatim YAML text.
    pub examples: &'static str,
    /// The RETURN mapping, verbatim YAML text (top-level keys at column 0).
    pub returns: &'static str,
}

impl ModuleSpec {
    /// The declaration of the option `name` (aliases not looked up).
    pub fn option(&self, name: &str) -> Option<&Opt> {
        self.options.iter().find(|o| o.name == name)
    }
}
