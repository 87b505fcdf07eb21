//! Epoch seconds as a UTC calendar date and time, without a date crate: what messages
//! and reports print (PVE gives times as epoch seconds).

/// `(year, month, day, hour, minute, second)` of `secs` since 1970-01-01 UTC
/// (civil-from-days, proleptic Gregorian).
pub fn utc_parts(secs: u64) -> (i64, i64, i64, u64, u64, u64) {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::utc_parts;

    #[test]
    fn dates_across_leap_years_and_the_epoch() {
        assert_eq!(utc_parts(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(utc_parts(951_782_400), (2000, 2, 29, 0, 0, 0));
        assert_eq!(utc_parts(1_764_581_401), (2025, 12, 1, 9, 30, 1));
    }
}
