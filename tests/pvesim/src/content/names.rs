//! The file-name rules of `upload` and `download-url` (pve-storage's
//! `normalize_content_filename` and the extension patterns of `PVE::Storage`).

use crate::error::{ApiError, ApiResult};
use regex::Regex;
use std::sync::LazyLock;

static ISO: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)[^/]+\.(?:iso|img)$").unwrap());
static VZTMPL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)[^/]+\.(?:tar|tar\.(?:gz|xz|zst|bz2))$").unwrap());
/// `SAFE_CHAR_CLASS_RE` + `UPLOAD_IMPORT_EXT_RE_1` (case-sensitive, as in pve-storage).
static IMPORT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[a-zA-Z0-9\-.+=_]+\.(ova|qcow2|raw|vmdk)$").unwrap());

/// `normalize_content_filename`: the last path segment (after `/` or `\`), every
/// character other than `a-zA-Z0-9_.-` replaced by `_`. A name with a `/` is not refused:
/// what follows its last `/` is the name.
pub fn normalize(filename: &str) -> String {
    let name = filename.strip_suffix('\n').unwrap_or(filename);
    let name = name.rsplit(['/', '\\']).next().unwrap_or("");
    name.chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-') {
                ch
            } else {
                '_'
            }
        })
        .collect()
}

/// What a file of `content` named `filename` (normalised) becomes: its volume name and,
/// for an `import` image, its format. `ova_only`: PVE 8.3 took only `.ova` as `import`.
pub fn volume_for(content: &str, filename: &str, ova_only: bool) -> ApiResult<(String, Option<String>)> {
    match content {
        "iso" if ISO.is_match(filename) => Ok((format!("iso/{filename}"), None)),
        "vztmpl" if VZTMPL.is_match(filename) => Ok((format!("vztmpl/{filename}"), None)),
        "iso" | "vztmpl" => Err(ApiError::param("filename", "wrong file extension")),
        "import" => {
            let format = IMPORT
                .captures(filename)
                .map(|c| c[1].to_string())
                .filter(|f| !ova_only || f == "ova");
            match format {
                Some(f) => Ok((format!("import/{filename}"), Some(f))),
                None => Err(ApiError::param("filename", "invalid filename or wrong extension")),
            }
        }
        other => Err(ApiError::param(
            "content",
            format!("upload content-type '{other}' is not allowed"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_keeps_the_last_segment() {
        assert_eq!(normalize("debian 13.iso"), "debian_13.iso");
        assert_eq!(normalize("../../etc/x.iso"), "x.iso");
        assert_eq!(normalize("a\\b.img"), "b.img");
        assert_eq!(normalize("dir/"), "");
        assert_eq!(normalize("ä.iso"), "_.iso");
    }

    #[test]
    fn extensions_per_content() {
        assert_eq!(volume_for("iso", "x.ISO", false).unwrap().0, "iso/x.ISO");
        assert!(volume_for("iso", ".iso", false).is_err(), "a name before the extension");
        assert_eq!(volume_for("vztmpl", "d.tar.zst", false).unwrap().0, "vztmpl/d.tar.zst");
        assert!(volume_for("vztmpl", "d.tar.lz4", false).is_err());
        assert_eq!(
            volume_for("import", "c.qcow2", false).unwrap(),
            ("import/c.qcow2".into(), Some("qcow2".into()))
        );
        assert!(volume_for("import", "c.QCOW2", false).is_err(), "case-sensitive");
        assert!(volume_for("import", "c.ovf", false).is_err(), "ovf is not uploaded");
        assert!(volume_for("import", "c.qcow2", true).is_err(), "PVE 8.3: ova only");
        assert!(volume_for("import", "c.ova", true).is_ok());
        let e = volume_for("iso", "x.qcow2", false).unwrap_err();
        assert_eq!(e.errors.unwrap()["filename"], "wrong file extension");
    }
}
