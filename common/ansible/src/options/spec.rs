//! The one declaration of a module's options.
//!
//! Validation ([`super::validate`]), the sidecar docs ([`crate::docs`]) and typed access
//! ([`super::Params`]) all read this, so an option is described exactly once.

use serde_json::Value;

use super::Params;

/// The option types AnsibleModule knows, with its coercion rules (see `coerce.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Int,
    Float,
    Bool,
    /// A filesystem path: `~` and `$VARS` are expanded.
    Path,
    List,
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

/// One option of a module.
/// PVE's largest vmid (`pve-vmid`: 100 - 999999999).
pub const VMID_MAX: i64 = 999_999_999;

#[derive(Debug, Clone)]
pub struct Opt {
    pub name: &'static str,
    pub kind: Kind,
    /// Element type of a `list` option.
    pub elements: Option<Kind>,
    pub default: Option<Value>,
    pub choices: Vec<Value>,
    pub aliases: Vec<&'static str>,
    /// Environment variables read, in order, when the option is absent from the task.
    pub env: Vec<&'static str>,
    pub no_log: bool,
    pub required: bool,
    pub description: Vec<String>,
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
        when: fn(&Params) -> bool,
        text: &'static str,
    },
}

impl Hint {
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
    pub fn str(name: &'static str) -> Opt {
        Opt::new(name, Kind::Str)
    }
    pub fn int(name: &'static str) -> Opt {
        Opt::new(name, Kind::Int)
    }
    /// A VM id: an `int` up to PVE's largest vmid; 0 keeps 1.6's meaning of "not given".
    pub fn vmid(name: &'static str) -> Opt {
        Opt::int(name).at_least(0).at_most(VMID_MAX)
    }
    pub fn float(name: &'static str) -> Opt {
        Opt::new(name, Kind::Float)
    }
    pub fn bool(name: &'static str) -> Opt {
        Opt::new(name, Kind::Bool)
    }
    pub fn path(name: &'static str) -> Opt {
        Opt::new(name, Kind::Path)
    }
    pub fn raw(name: &'static str) -> Opt {
        Opt::new(name, Kind::Raw)
    }
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
    pub fn default(mut self, value: impl Into<Value>) -> Opt {
        self.default = Some(value.into());
        self
    }
    pub fn choices<T: Into<Value> + Clone>(mut self, choices: &[T]) -> Opt {
        self.choices = choices.iter().cloned().map(Into::into).collect();
        self
    }
    pub fn aliases(mut self, aliases: &[&'static str]) -> Opt {
        self.aliases = aliases.to_vec();
        self
    }
    pub fn env(mut self, vars: &[&'static str]) -> Opt {
        self.env = vars.to_vec();
        self
    }
    pub fn no_log(mut self) -> Opt {
        self.no_log = true;
        self
    }
    pub fn required(mut self) -> Opt {
        self.required = true;
        self
    }
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
    pub key: &'static str,
    pub value: Value,
    pub requirements: Vec<&'static str>,
    pub any: bool,
}

/// The constraints between options, with AnsibleModule's meaning and messages.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub mutually_exclusive: Vec<Vec<&'static str>>,
    pub required_together: Vec<Vec<&'static str>>,
    pub required_one_of: Vec<Vec<&'static str>>,
    pub required_if: Vec<RequiredIf>,
    /// `(key, requirements)`: when `key` is set, every requirement must be set.
    pub required_by: Vec<(&'static str, Vec<&'static str>)>,
}

impl Rules {
    pub fn mutually_exclusive(mut self, names: &[&'static str]) -> Rules {
        self.mutually_exclusive.push(names.to_vec());
        self
    }
    pub fn required_together(mut self, names: &[&'static str]) -> Rules {
        self.required_together.push(names.to_vec());
        self
    }
    pub fn required_one_of(mut self, names: &[&'static str]) -> Rules {
        self.required_one_of.push(names.to_vec());
        self
    }
    pub fn required_if(mut self, key: &'static str, value: impl Into<Value>, requirements: &[&'static str]) -> Rules {
        self.required_if.push(RequiredIf {
            key,
            value: value.into(),
            requirements: requirements.to_vec(),
            any: false,
        });
        self
    }
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
    Full,
    Partial,
    None,
}

impl Support {
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
    pub name: &'static str,
    pub short_description: &'static str,
    pub description: Vec<String>,
    pub version_added: &'static str,
    pub options: Vec<Opt>,
    pub rules: Rules,
    pub check_mode: (Support, &'static str),
    pub diff_mode: (Support, &'static str),
    pub notes: Vec<String>,
    pub seealso: Vec<&'static str>,
    /// The EXAMPLES block, verbatim YAML text.
    pub examples: &'static str,
    /// The RETURN mapping, verbatim YAML text (top-level keys at column 0).
    pub returns: &'static str,
}

impl ModuleSpec {
    pub fn option(&self, name: &str) -> Option<&Opt> {
        self.options.iter().find(|o| o.name == name)
    }
}
