//! Disk sizes as PVE spells them.
//!
//! PVE writes `size=` in the largest binary unit that divides the byte count exactly
//! (`32G`, `528K`, else plain bytes) and reads `K|M|G|T` with an optional `iB`. A bare
//! number means bytes to PVE, but GiB in the `size` option of `proxmox_disk` for
//! `state: present` (as in community.proxmox): callers pick with [`parse`] (bytes) or
//! [`parse_gib_default`] (GiB). Everything here is exact integer arithmetic on bytes,
//! so `32G` and `32768M` compare equal.

// `u64::is_multiple_of` is newer than the workspace's rust-version (1.85).
#![allow(clippy::manual_is_multiple_of)]

const UNITS: [(char, u64); 4] = [('T', 1 << 40), ('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)];

/// Bytes in one GiB.
pub const GIB: u64 = 1 << 30;

/// What a `resized` request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resize {
    /// Grow to exactly this many bytes.
    To(u64),
    /// Grow by this many bytes (`+5G`).
    By(u64),
}

/// Parses `32G`, `528K`, `1.5T`, `32GiB`, `1024` (bytes). Units are binary (K = 1024).
pub fn parse(text: &str) -> Result<u64, String> {
    parse_with_bare_unit(text, 1)
}

/// Like [`parse`], but a number without a unit counts in GiB (`32` = `32G`).
pub fn parse_gib_default(text: &str) -> Result<u64, String> {
    parse_with_bare_unit(text, GIB)
}

/// A `resized` size: absolute (`500G`) or relative (`+100G`). A unit is required,
/// because PVE would read a bare number as bytes, which is never what was meant.
pub fn parse_resize(text: &str) -> Result<Resize, String> {
    let t = text.trim();
    let (relative, body) = match t.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    if split_unit(body).1.is_none() {
        return Err(format!(
            "size {text:?} has no unit: give an absolute size like 32G or a growth like +5G (units K, M, G, T; a bare number would be bytes to Proxmox VE)"
        ));
    }
    let bytes = parse(body)?;
    Ok(if relative { Resize::By(bytes) } else { Resize::To(bytes) })
}

fn parse_with_bare_unit(text: &str, bare_unit: u64) -> Result<u64, String> {
    let bad = || {
        format!("cannot read {text:?} as a size: expected a number with an optional unit K, M, G or T (like 32G, 528K, 1.5T)")
    };
    let (number, unit) = split_unit(text.trim());
    let multiplier = match unit {
        Some(u) => UNITS.iter().find(|(c, _)| *c == u).map(|(_, m)| *m).ok_or_else(bad)?,
        None => bare_unit,
    };
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') || number.matches('.').count() > 1 {
        return Err(bad());
    }
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let mut bytes = whole.checked_mul(multiplier).ok_or_else(bad)?;
    if !fraction.is_empty() {
        let digits = fraction.len().min(12) as u32;
        let numerator: u64 = fraction[..digits as usize].parse().map_err(|_| bad())?;
        let scaled = (numerator as u128 * multiplier as u128) / 10u128.pow(digits);
        bytes = bytes.checked_add(scaled as u64).ok_or_else(bad)?;
    }
    Ok(bytes)
}

/// Splits `32GiB` into (`32`, Some('G')); the unit is upper-cased, `iB`/`B` dropped.
fn split_unit(text: &str) -> (&str, Option<char>) {
    let t = text
        .strip_suffix("iB")
        .or_else(|| text.strip_suffix('B'))
        .unwrap_or(text);
    match t.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => (&t[..t.len() - 1], Some(c.to_ascii_uppercase())),
        _ => (t, None),
    }
}

/// Bytes as PVE writes them: the largest unit dividing exactly, else plain bytes.
pub fn format(bytes: u64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    for (unit, m) in UNITS {
        if bytes % m == 0 {
            return format!("{}{unit}", bytes / m);
        }
    }
    bytes.to_string()
}

/// GiB as a number for messages (`1.5`), bytes in, no rounding surprises for whole GiB.
pub fn to_gib(bytes: u64) -> f64 {
    bytes as f64 / GIB as f64
}

/// The value PVE's allocation syntax `STORAGE:SIZE` wants: GiB, fractions allowed.
pub fn gib_for_allocation(bytes: u64) -> String {
    if bytes % GIB == 0 {
        (bytes / GIB).to_string()
    } else {
        let text = format!("{:.6}", to_gib(bytes));
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_fractions_and_bytes() {
        assert_eq!(parse("32G"), Ok(32 * GIB));
        assert_eq!(parse("528K"), Ok(528 * 1024));
        assert_eq!(parse("1.5T"), Ok(3 * (1 << 39)));
        assert_eq!(parse("1024"), Ok(1024));
        assert_eq!(parse("32GiB"), Ok(32 * GIB));
        assert_eq!(parse("4m"), Ok(4 << 20));
        assert_eq!(parse("0.5G"), Ok(GIB / 2));
    }

    #[test]
    fn rejects_what_is_not_a_size() {
        for bad in ["", "G", "abc", "12X", "1.2.3G", "-5G", "+5G"] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains("cannot read"), "{bad}: {err}");
        }
    }

    #[test]
    fn equal_sizes_in_different_units_are_equal() {
        assert_eq!(parse("32G"), parse("32768M"));
        assert_eq!(parse("1T"), parse("1024G"));
    }

    #[test]
    fn formats_in_the_largest_exact_unit() {
        assert_eq!(format(34359738368), "32G");
        assert_eq!(format(540672), "528K");
        assert_eq!(format(4 << 20), "4M");
        assert_eq!(format(1 << 40), "1T");
        assert_eq!(format(1536 * GIB), "1536G");
        assert_eq!(format(1000), "1000");
        assert_eq!(format(0), "0");
    }

    #[test]
    fn bare_numbers_can_mean_gib() {
        assert_eq!(parse_gib_default("32"), Ok(32 * GIB));
        assert_eq!(parse_gib_default("0.5"), Ok(GIB / 2));
        assert_eq!(parse_gib_default("512M"), Ok(512 << 20));
    }

    #[test]
    fn resize_requests_are_absolute_or_relative_and_need_a_unit() {
        assert_eq!(parse_resize("500G"), Ok(Resize::To(500 * GIB)));
        assert_eq!(parse_resize("+100G"), Ok(Resize::By(100 * GIB)));
        let err = parse_resize("40").unwrap_err();
        assert!(err.contains("no unit") && err.contains("+5G"), "{err}");
        assert!(parse_resize("+40").is_err());
    }

    #[test]
    fn allocation_sizes_are_gib() {
        assert_eq!(gib_for_allocation(32 * GIB), "32");
        assert_eq!(gib_for_allocation(GIB / 2), "0.5");
        assert_eq!(to_gib(3 * GIB / 2), 1.5);
    }
}
