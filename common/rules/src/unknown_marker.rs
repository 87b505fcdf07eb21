//! The words of `(known after apply)`: the marker itself and the result key that lists
//! where it stood. Below both [`crate::propstring`] (whose comparison takes the marker for
//! a value of any kind) and [`crate::unknown`] (which writes the marker into parsed
//! config values), so neither imports the other back; [`crate::unknown`] re-exports them.

/// The text standing for a value PVE decides when the change is applied.
pub const UNKNOWN: &str = "(known after apply)";

/// The result key listing the result keys whose value is known only after apply.
pub const RESULT_KEY: &str = "known_after_apply";

/// Whether a value (or a part of a property string) is only known after apply.
pub fn is_unknown(text: &str) -> bool {
    text.to_ascii_lowercase().contains(UNKNOWN)
}
