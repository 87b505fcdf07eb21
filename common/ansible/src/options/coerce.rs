//! AnsibleModule's type coercions (`check_type_*`), so a value that works with the
//! Python modules works here, and a value that fails there fails here with the same words.
//!
//! ansible-core does no conversion for binary modules: `"5"`, `"yes"` and `5` all
//! arrive as the playbook produced them.

use serde_json::{Map, Number, Value};

use super::spec::Kind;
pub use crate::python::python_repr;

/// Python's `type(value)` as AnsibleModule prints it in messages (`<class 'str'>`).
pub fn python_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<class 'NoneType'>",
        Value::Bool(_) => "<class 'bool'>",
        Value::Number(n) if n.is_f64() => "<class 'float'>",
        Value::Number(_) => "<class 'int'>",
        Value::String(_) => "<class 'str'>",
        Value::Array(_) => "<class 'list'>",
        Value::Object(_) => "<class 'dict'>",
    }
}

/// The short type name ansible-core 2.19+ prints in "is of type str".
pub fn python_type_short(value: &Value) -> &'static str {
    python_type(value).trim_start_matches("<class '").trim_end_matches("'>")
}

/// Which ansible-core wording to produce: messages changed in 2.19.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// ansible-core 2.17 and 2.18.
    Legacy,
    /// ansible-core 2.19 and newer (also when the version is unknown).
    #[default]
    Modern,
}

impl Dialect {
    /// From `_ansible_version` (`"2.19.14"`).
    pub fn from_version(version: Option<&str>) -> Dialect {
        let mut parts = version.unwrap_or("").split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        match (parts.next(), parts.next()) {
            (Some(2), Some(minor)) if minor < 19 => Dialect::Legacy,
            _ => Dialect::Modern,
        }
    }

    /// `type(value)` as this version prints it after "is of type".
    pub fn type_name(self, value: &Value) -> &'static str {
        match self {
            Dialect::Legacy => python_type(value),
            Dialect::Modern => python_type_short(value),
        }
    }
}

/// Python's `str(value)`, which AnsibleModule uses to turn a non-string into a `str` option.
pub fn python_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        _ => python_repr(value),
    }
}

const TRUE_WORDS: [&str; 6] = ["y", "yes", "on", "1", "true", "t"];
const FALSE_WORDS: [&str; 6] = ["n", "no", "off", "0", "false", "f"];

/// Ansible's `boolean()`: the words it accepts, case-insensitive, and 0/1.
pub fn parse_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            _ => None,
        },
        Value::String(s) => {
            let s = s.trim().to_ascii_lowercase();
            if TRUE_WORDS.contains(&s.as_str()) {
                Some(true)
            } else if FALSE_WORDS.contains(&s.as_str()) {
                Some(false)
            } else {
                None
            }
        }
        _ => None,
    }
}

fn bool_error(value: &Value, dialect: Dialect) -> String {
    let gap = if dialect == Dialect::Legacy { "  " } else { " " };
    format!(
        "The value '{}' is not a valid boolean.{gap}Valid booleans include: {}",
        python_str(value),
        // AnsibleModule prints a Python set, where 1, 1.0 and True are one element (so are
        // 0, 0.0 and False); its order follows the hash seed, so any fixed order is as right.
        "'y', 'yes', 'on', '1', 'true', 't', 1, 'n', 'no', 'off', '0', 'false', 'f', 0"
    )
}

/// A coercion result: the converted value, and a warning when Ansible would warn.
#[derive(Debug)]
pub struct Coerced {
    /// The value as the option's type.
    pub value: Value,
    /// The warning Ansible would print for this conversion, if any.
    pub warning: Option<String>,
}

impl From<Value> for Coerced {
    fn from(value: Value) -> Coerced {
        Coerced { value, warning: None }
    }
}

/// Convert `value` to `kind` as AnsibleModule does; the error is the detail text that
/// follows `... and we were unable to convert to {kind}: `.
pub fn coerce(kind: Kind, value: &Value, dialect: Dialect) -> Result<Coerced, String> {
    match kind {
        Kind::Raw => Ok(value.clone().into()),
        Kind::Str => coerce_str(value),
        Kind::Path => coerce_str(value).map(|c| Value::String(expand_path(c.value.as_str().unwrap_or(""))).into()),
        Kind::Int => coerce_int(value, dialect).map(Into::into),
        Kind::Float => coerce_float(value).map(Into::into),
        Kind::Bool => match value {
            Value::Bool(_) => Ok(value.clone().into()),
            Value::String(_) | Value::Number(_) => parse_bool(value)
                .map(|b| Value::Bool(b).into())
                .ok_or_else(|| bool_error(value, dialect)),
            other => Err(format!("{} cannot be converted to a bool", python_type(other))),
        },
        Kind::List => match value {
            Value::Array(_) => Ok(value.clone().into()),
            Value::String(s) => Ok(Value::Array(s.split(',').map(|p| Value::String(p.to_string())).collect()).into()),
            Value::Number(_) | Value::Bool(_) => Ok(Value::Array(vec![Value::String(python_str(value))]).into()),
            other => Err(format!("{} cannot be converted to a list", python_type(other))),
        },
        Kind::Dict => match value {
            Value::Object(_) => Ok(value.clone().into()),
            Value::String(s) => parse_dict_string(s).map(Into::into),
            other => Err(format!("{} cannot be converted to a dict", python_type(other))),
        },
    }
}

fn coerce_str(value: &Value) -> Result<Coerced, String> {
    match value {
        Value::String(_) => Ok(value.clone().into()),
        other => {
            let converted = python_str(other);
            let warning = format!(
                "The value '{}' (type {}) was converted to '{}' (type string). If this does not look like what you expect, quote the entire value to ensure it does not change.",
                python_repr(other),
                python_type(other).trim_start_matches("<class '").trim_end_matches("'>"),
                converted
            );
            Ok(Coerced {
                value: Value::String(converted),
                warning: Some(warning),
            })
        }
    }
}

/// `check_type_int`. ansible-core 2.19 converts through `Decimal`, so a whole number
/// written as `"1e3"` or `2.0` is accepted; 2.17/2.18 take integer strings only. A
/// whole number past the 64-bit range fails instead of being clamped (Python would
/// take `1e300` as that exact number; PVE has no integer that large).
fn coerce_int(value: &Value, dialect: Dialect) -> Result<Value, String> {
    let fail = || match dialect {
        Dialect::Legacy => format!("{} cannot be converted to an int", python_type(value)),
        Dialect::Modern => format!("\"{}\" cannot be converted to an int", python_repr(value)),
    };
    let out_of_range = || {
        format!(
            "{} is out of range: an int option takes whole numbers from {} to {}",
            python_repr(value),
            i64::MIN,
            i64::MAX
        )
    };
    let whole = |f: f64| -> Result<Value, String> {
        if !f.is_finite() || f.fract() != 0.0 {
            return Err(fail());
        }
        // i64::MAX as f64 rounds up to 2^63, which does not fit.
        if f < i64::MIN as f64 || f >= i64::MAX as f64 {
            return Err(out_of_range());
        }
        Ok(Value::from(f as i64))
    };
    match value {
        Value::Bool(b) => Ok(Value::from(*b as i64)),
        Value::Number(n) if n.is_i64() => Ok(value.clone()),
        Value::Number(n) if n.is_u64() => Err(out_of_range()),
        Value::Number(n) => n.as_f64().map_or_else(|| Err(fail()), whole),
        Value::String(s) => match s.trim().parse::<i64>() {
            Ok(i) => Ok(Value::from(i)),
            Err(e)
                if matches!(
                    e.kind(),
                    std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow
                ) =>
            {
                Err(out_of_range())
            }
            Err(_) if dialect == Dialect::Modern => match s.trim().parse::<f64>() {
                // Decimal("1e3"); Rust also reads "inf"/"nan", which Decimal turns into
                // values int() refuses.
                Ok(f) if s.trim().chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) => whole(f),
                _ => Err(fail()),
            },
            Err(_) => Err(fail()),
        },
        _ => Err(fail()),
    }
}

fn coerce_float(value: &Value) -> Result<Value, String> {
    let fail = || format!("{} cannot be converted to a float", python_type(value));
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(fail),
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(fail),
        _ => Err(fail()),
    }
}

/// `check_type_dict` for strings: JSON when it starts with `{`, else `k=v` pairs
/// separated by commas or spaces (quotes group).
fn parse_dict_string(s: &str) -> Result<Value, String> {
    let trimmed = s.trim();
    if trimmed.starts_with('{') {
        return match serde_json::from_str::<Value>(trimmed) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err("unable to evaluate string as dictionary".into()),
        };
    }
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in trimmed.chars() {
        if escaped {
            current.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
            } else {
                current.push(c);
            }
        } else if c == '\'' || c == '"' {
            quote = Some(c);
        } else if c == ',' || c == ' ' {
            if !current.is_empty() {
                fields.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        fields.push(current);
    }
    let mut map = Map::new();
    for field in fields {
        match field.split_once('=') {
            Some((k, v)) => {
                map.insert(k.to_string(), Value::String(v.to_string()));
            }
            None => return Err("dictionary requested, could not parse JSON or key=value".into()),
        }
    }
    Ok(Value::Object(map))
}

/// `~` and `$VAR` / `${VAR}` expansion, as Python's expanduser(expandvars()).
pub fn expand_path(path: &str) -> String {
    let mut out = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let braced = chars.peek() == Some(&'{');
        if braced {
            chars.next();
        }
        let mut name = String::new();
        while let Some(&n) = chars.peek() {
            if n.is_ascii_alphanumeric() || n == '_' {
                name.push(n);
                chars.next();
            } else {
                break;
            }
        }
        if braced && chars.peek() == Some(&'}') {
            chars.next();
        }
        match std::env::var(&name) {
            Ok(v) if !name.is_empty() => out.push_str(&v),
            _ => {
                out.push('$');
                if braced {
                    out.push('{');
                }
                out.push_str(&name);
                if braced {
                    out.push('}');
                }
            }
        }
    }
    if out == "~" || out.starts_with("~/") {
        if let Ok(home) = std::env::var("HOME") {
            out = format!("{home}{}", &out[1..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const L: Dialect = Dialect::Legacy;

    #[test]
    fn modern_wording_differs() {
        assert_eq!(
            coerce(Kind::Int, &json!("x"), Dialect::Modern).unwrap_err(),
            "\"'x'\" cannot be converted to an int"
        );
        assert_eq!(Dialect::from_version(Some("2.17.14")), Dialect::Legacy);
        assert_eq!(Dialect::from_version(Some("2.19.1")), Dialect::Modern);
        assert_eq!(Dialect::from_version(None), Dialect::Modern);
    }

    #[test]
    fn ints_past_64_bits_fail_instead_of_clamping() {
        assert_eq!(
            coerce(Kind::Int, &json!(1e300), L).unwrap_err(),
            "1e+300 is out of range: an int option takes whole numbers from -9223372036854775808 to 9223372036854775807"
        );
        assert!(coerce(Kind::Int, &json!("1e300"), Dialect::Modern)
            .unwrap_err()
            .contains("is out of range"));
        assert!(coerce(Kind::Int, &json!("99999999999999999999"), L)
            .unwrap_err()
            .contains("is out of range"));
        assert!(coerce(Kind::Int, &json!(18446744073709551615u64), L)
            .unwrap_err()
            .contains("is out of range"));
        // 2.19 reads whole decimals through Decimal; 2.17 only integer strings.
        assert_eq!(
            coerce(Kind::Int, &json!("1e3"), Dialect::Modern).unwrap().value,
            json!(1000)
        );
        assert_eq!(
            coerce(Kind::Int, &json!("1e3"), L).unwrap_err(),
            "<class 'str'> cannot be converted to an int"
        );
        assert!(coerce(Kind::Int, &json!("1.5"), Dialect::Modern).is_err());
        assert!(coerce(Kind::Int, &json!("inf"), Dialect::Modern).is_err());
        assert_eq!(coerce(Kind::Int, &json!(-5), L).unwrap().value, json!(-5));
    }

    #[test]
    fn ints_accept_integer_strings_and_whole_floats() {
        assert_eq!(coerce(Kind::Int, &json!("100"), L).unwrap().value, json!(100));
        assert_eq!(coerce(Kind::Int, &json!(2.0), L).unwrap().value, json!(2));
        assert_eq!(
            coerce(Kind::Int, &json!("abc"), L).unwrap_err(),
            "<class 'str'> cannot be converted to an int"
        );
        assert!(coerce(Kind::Int, &json!(2.5), L).is_err());
    }

    #[test]
    fn bools_accept_ansible_words_only() {
        for t in ["yes", "On", "1", "TRUE", "t", "y"] {
            assert_eq!(coerce(Kind::Bool, &json!(t), L).unwrap().value, json!(true), "{t}");
        }
        for f in ["no", "off", "0", "False", "f", "n"] {
            assert_eq!(coerce(Kind::Bool, &json!(f), L).unwrap().value, json!(false), "{f}");
        }
        assert_eq!(coerce(Kind::Bool, &json!(1), L).unwrap().value, json!(true));
        let err = coerce(Kind::Bool, &json!("maybe"), L).unwrap_err();
        assert!(err.starts_with("The value 'maybe' is not a valid boolean."), "{err}");
    }

    #[test]
    fn strings_convert_with_a_warning() {
        let c = coerce(Kind::Str, &json!(5), L).unwrap();
        assert_eq!(c.value, json!("5"));
        assert!(c.warning.unwrap().contains("(type int) was converted to '5'"));
        assert_eq!(coerce(Kind::Str, &json!(true), L).unwrap().value, json!("True"));
    }

    #[test]
    fn lists_split_comma_strings() {
        assert_eq!(coerce(Kind::List, &json!("a,b"), L).unwrap().value, json!(["a", "b"]));
        assert_eq!(coerce(Kind::List, &json!(5), L).unwrap().value, json!(["5"]));
    }

    #[test]
    fn dicts_parse_json_and_key_value_strings() {
        assert_eq!(
            coerce(Kind::Dict, &json!("{\"a\": 1}"), L).unwrap().value,
            json!({"a": 1})
        );
        assert_eq!(
            coerce(Kind::Dict, &json!("a=1, b='x y'"), L).unwrap().value,
            json!({"a": "1", "b": "x y"})
        );
        assert!(coerce(Kind::Dict, &json!(3), L).is_err());
    }

    #[test]
    fn python_repr_matches_python() {
        assert_eq!(
            python_repr(&json!(["a", 1, true, null, 1.0])),
            "['a', 1, True, None, 1.0]"
        );
        assert_eq!(python_repr(&json!({"k": "v"})), "{'k': 'v'}");
    }
}
