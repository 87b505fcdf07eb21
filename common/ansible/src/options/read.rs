//! Reading validated parameters into a module's typed task, held to the declaration.
//!
//! A module reads its options once, at the start, through a [`Reader`]. Each getter
//! names the option's declared type, and an option with a declared default is read
//! with a `*_or_default` getter (unset is impossible: validation filled it), so the
//! default is never restated in code. In debug builds, the tests' builds, a getter that
//! disagrees with the declaration (an undeclared name, another type, a default read as
//! optional or an optional read as defaulted, an enum that does not match the choices)
//! panics; the reader also records what was read, so a module's test can show that every
//! declared option has its reader ([`Reader::unread`]).

use std::cell::RefCell;
use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{Kind, Opt, Params};
use crate::options::spec::VMID_MAX;

/// An enum whose variants are an option's `choices`, spelled as the task spells them.
pub trait Choice: Sized + Copy + 'static {
    /// Every variant with its spelling, in the declaration's order.
    const ALL: &'static [(&'static str, Self)];

    /// The declaration's `choices` list, from the one list of spellings.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|(name, _)| *name).collect()
    }

    /// The variant spelled `text`, if any.
    fn parse(text: &str) -> Option<Self> {
        Self::ALL.iter().find(|(name, _)| *name == text).map(|(_, v)| *v)
    }

    /// How the task spells this variant.
    fn name(self) -> &'static str
    where
        Self: PartialEq,
    {
        Self::ALL
            .iter()
            .find(|(_, v)| *v == self)
            .map(|(name, _)| *name)
            .unwrap_or_default()
    }
}

/// Typed reads of one module's (or one dict option's) validated parameters.
pub struct Reader<'a> {
    params: Params,
    opts: &'a [Opt],
    /// Where the reader sits (`efidisk0.` for a sub-option), for messages.
    prefix: String,
    read: RefCell<BTreeSet<&'static str>>,
}

impl<'a> Reader<'a> {
    /// A reader of `params`, held to the declarations `opts`.
    pub fn new(params: Params, opts: &'a [Opt]) -> Reader<'a> {
        Reader {
            params,
            opts,
            prefix: String::new(),
            read: RefCell::default(),
        }
    }

    /// The declaration of `name`, after checking that the getter's type is the
    /// declared one (`kinds`; empty: any) and that a default is read as such
    /// (`defaulted`; `None`: either); records the read.
    fn declared(&self, name: &str, kinds: &[Kind], defaulted: impl Into<Option<bool>>) -> Option<&'a Opt> {
        let defaulted = defaulted.into();
        let opt = self.opts.iter().find(|o| o.name == name);
        debug_assert!(opt.is_some(), "option {}{name} is not declared", self.prefix);
        let opt = opt?;
        debug_assert!(
            kinds.is_empty() || kinds.contains(&opt.kind),
            "option {}{name} is declared {}, read as {kinds:?}",
            self.prefix,
            opt.kind.ansible_name()
        );
        debug_assert!(
            defaulted.is_none_or(|d| opt.default.is_some() == d),
            "option {}{name}: {} but read {}",
            self.prefix,
            if opt.default.is_some() {
                "declared with a default"
            } else {
                "declared without a default"
            },
            if defaulted == Some(true) {
                "as defaulted"
            } else {
                "as optional"
            },
        );
        self.read.borrow_mut().insert(opt.name);
        Some(opt)
    }

    fn value(&self, name: &str) -> Option<&Value> {
        self.params.get(name)
    }

    /// A text option (`str` or `path`); `None` when unset.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.declared(name, &[Kind::Str, Kind::Path], false);
        self.value(name).and_then(Value::as_str)
    }

    /// A text option, an empty string counting as unset (1.6 tests options for truth).
    pub fn non_empty(&self, name: &str) -> Option<String> {
        self.str(name).filter(|s| !s.is_empty()).map(str::to_string)
    }

    /// A text option with a declared default.
    pub fn str_or_default(&self, name: &str) -> String {
        self.declared(name, &[Kind::Str], true);
        self.value(name).and_then(Value::as_str).unwrap_or_default().to_string()
    }

    /// A text option with declared choices and default, as its enum.
    pub fn choice<C: Choice>(&self, name: &str) -> C {
        let opt = self.declared(name, &[Kind::Str], true);
        debug_assert!(
            opt.is_none_or(|o| o.choices.iter().filter_map(Value::as_str).collect::<Vec<_>>() == C::names()),
            "option {}{name}: its choices and its enum's variants differ",
            self.prefix
        );
        let text = self.value(name).and_then(Value::as_str).unwrap_or_default();
        C::parse(text).unwrap_or(C::ALL[0].1)
    }

    /// An integer option without a default; `None` when unset.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.declared(name, &[Kind::Int], false);
        self.value(name).and_then(Value::as_i64)
    }

    /// An integer option with a declared default.
    pub fn int_or_default(&self, name: &str) -> i64 {
        self.declared(name, &[Kind::Int], true);
        self.value(name).and_then(Value::as_i64).unwrap_or_default()
    }

    /// A float option without a default; `None` when unset.
    pub fn float(&self, name: &str) -> Option<f64> {
        self.declared(name, &[Kind::Float], false);
        self.value(name).and_then(Value::as_f64)
    }

    /// A bool option without a default: `None` when unset (PVE's default applies).
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.declared(name, &[Kind::Bool], false);
        self.value(name).and_then(Value::as_bool)
    }

    /// A bool option with a declared default.
    pub fn bool_or_default(&self, name: &str) -> bool {
        self.declared(name, &[Kind::Bool], true);
        self.value(name).and_then(Value::as_bool).unwrap_or_default()
    }

    /// A list option's items as text (numbers as their digits).
    pub fn strings(&self, name: &str) -> Option<Vec<String>> {
        self.declared(name, &[Kind::List], false);
        self.params.strings(name)
    }

    /// A list option's items, as given.
    pub fn list(&self, name: &str) -> Option<&Vec<Value>> {
        self.declared(name, &[Kind::List], false);
        self.value(name).and_then(Value::as_array)
    }

    /// A free-form dict option.
    pub fn dict(&self, name: &str) -> Option<&Map<String, Value>> {
        self.declared(name, &[Kind::Dict], false);
        self.value(name).and_then(Value::as_object)
    }

    /// A dict option with declared sub-options, as a reader of its own.
    pub fn sub(&self, name: &str) -> Option<Reader<'a>> {
        let opt = self.declared(name, &[Kind::Dict], false)?;
        let subs = opt.suboptions.as_deref()?;
        let values = self.value(name).and_then(Value::as_object)?.clone();
        Some(Reader {
            params: Params::new(values),
            opts: subs,
            prefix: format!("{}{name}.", self.prefix),
            read: RefCell::default(),
        })
    }

    /// A scalar option in the text PVE takes for a config key: a bool as `1`/`0`, a
    /// number as its digits, text as it is (the declared type decides).
    pub fn config_text(&self, name: &str) -> Option<String> {
        let opt = self.declared(name, &[Kind::Str, Kind::Int, Kind::Bool, Kind::Float], false)?;
        let value = self.value(name)?;
        Some(match (opt.kind, value) {
            (Kind::Bool, Value::Bool(on)) => u8::from(*on).to_string(),
            (_, Value::String(s)) => s.clone(),
            (_, other) => other.to_string(),
        })
    }

    /// A vmid option: `None` when unset or 0 (1.6's "not given"), else between 100 and
    /// PVE's largest vmid.
    pub fn vmid(&self, name: &str) -> Result<Option<u32>, String> {
        match self.int(name) {
            None | Some(0) => Ok(None),
            Some(id) => vmid_in_range(name, id).map(Some),
        }
    }

    /// Whether the task sets `name` at all (for options whose mere presence matters).
    pub fn is_set(&self, name: &str) -> bool {
        self.declared(name, &[], None);
        self.value(name).is_some()
    }

    /// The parameters, for the shared typed constructors of `common/` (connection,
    /// `check_mode_assume`), which read their own options.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Declared options no getter has read (for the module's declaration test).
    pub fn unread(&self) -> Vec<&'static str> {
        let read = self.read.borrow();
        self.opts.iter().map(|o| o.name).filter(|n| !read.contains(n)).collect()
    }
}

/// A vmid a task gives (PVE's `pve-vmid`: 100 to 999999999), naming the option.
pub fn vmid_in_range(name: &str, id: i64) -> Result<u32, String> {
    u32::try_from(id)
        .ok()
        .filter(|id| (100..=VMID_MAX as u32).contains(id))
        .ok_or_else(|| format!("{name} must be a VMID between 100 and {VMID_MAX}, got: {id}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Colour {
        Red,
        Blue,
    }
    impl Choice for Colour {
        const ALL: &'static [(&'static str, Colour)] = &[("red", Colour::Red), ("blue", Colour::Blue)];
    }

    fn opts() -> Vec<Opt> {
        vec![
            Opt::str("colour").default("red").choices(&Colour::names()),
            Opt::int("count").default(3),
            Opt::str("label"),
            Opt::bool("flag"),
            Opt::vmid("vmid"),
            Opt::dict_of("sub", vec![Opt::str("inner")]),
        ]
    }

    fn params(v: Value) -> Params {
        Params::new(v.as_object().unwrap().clone())
    }

    #[test]
    fn reads_typed_values_and_records_them() {
        let opts = opts();
        let r = Reader::new(
            params(json!({"colour": "blue", "count": 3, "label": "", "flag": true, "vmid": 0, "sub": {"inner": "x"}})),
            &opts,
        );
        assert_eq!(r.choice::<Colour>("colour"), Colour::Blue);
        assert_eq!(r.int_or_default("count"), 3);
        assert_eq!(r.non_empty("label"), None);
        assert_eq!(r.config_text("flag").as_deref(), Some("1"));
        assert_eq!(r.vmid("vmid"), Ok(None));
        assert_eq!(r.unread(), vec!["sub"]);
        assert_eq!(r.sub("sub").unwrap().str("inner"), Some("x"));
        assert!(r.unread().is_empty());
    }

    #[test]
    fn vmids_out_of_pve_range_are_refused_naming_the_option() {
        assert_eq!(
            vmid_in_range("newid", 99),
            Err("newid must be a VMID between 100 and 999999999, got: 99".to_string())
        );
        assert_eq!(vmid_in_range("vmid", 100), Ok(100));
    }

    #[test]
    #[should_panic(expected = "declared int, read as")]
    fn a_getter_of_another_type_panics_in_debug() {
        let opts = opts();
        Reader::new(params(json!({"count": 3})), &opts).str("count");
    }

    #[test]
    #[should_panic(expected = "declared with a default but read as optional")]
    fn a_default_read_as_optional_panics_in_debug() {
        let opts = opts();
        Reader::new(params(json!({"count": 3})), &opts).int("count");
    }

    #[test]
    #[should_panic(expected = "is not declared")]
    fn an_undeclared_name_panics_in_debug() {
        let opts = opts();
        Reader::new(params(json!({})), &opts).str("colours");
    }
}
