//! The fields of one flat JSON object (`{"key": scalar, ...}`), read without building
//! anything: for the entries of large listings (`/cluster/resources` of thousands of
//! guests), where decoding each entry with serde costs more than the rest of the task.
//! Only the unescaped, unnested shape PVE writes is read here; anything else — a nested
//! value, an escaped string, a malformed object — answers `None`, and the caller then
//! decodes the entry with serde, so no entry is ever misread, only read more slowly.

/// A field's value, as it stands in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar<'a> {
    /// A string's contents (quotes removed; it held no escape). Not yet checked as
    /// UTF-8: only the fields a caller keeps need to be.
    Str(&'a [u8]),
    /// A number, `true`, `false` or `null`, as written.
    Raw(&'a [u8]),
}

/// Calls `each` with every key and value of the object in `json`, in order; `None` when
/// `json` is not a flat object of unescaped strings and scalars (see the module doc).
pub fn each_field<'a>(json: &'a [u8], mut each: impl FnMut(&'a [u8], Scalar<'a>)) -> Option<()> {
    let mut i = skip_space(json, 0);
    if json.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_space(json, i + 1);
    if json.get(i) == Some(&b'}') {
        return (skip_space(json, i + 1) == json.len()).then_some(());
    }
    loop {
        let (key, after_key) = string(json, i)?;
        i = skip_space(json, after_key);
        if json.get(i) != Some(&b':') {
            return None;
        }
        i = skip_space(json, i + 1);
        let value = match *json.get(i)? {
            b'"' => {
                let (text, after) = string(json, i)?;
                i = after;
                Scalar::Str(text)
            }
            b'{' | b'[' | b',' | b'}' => return None,
            _ => {
                let end = json[i..]
                    .iter()
                    .position(|&b| b == b',' || b == b'}' || b.is_ascii_whitespace())?
                    + i;
                let raw = &json[i..end];
                i = end;
                Scalar::Raw(raw)
            }
        };
        each(key, value);
        i = skip_space(json, i);
        match *json.get(i)? {
            b',' => i = skip_space(json, i + 1),
            b'}' => return (skip_space(json, i + 1) == json.len()).then_some(()),
            _ => return None,
        }
    }
}

/// The contents of the string starting at `json[at]` (a quote) and the index after its
/// closing quote; `None` when it holds an escape or does not end.
fn string(json: &[u8], at: usize) -> Option<(&[u8], usize)> {
    if json.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let mut i = start;
    // A plain loop: PVE's strings are short, where a vectorised or word-wise search
    // costs more than it saves (measured).
    while i < json.len() {
        match json[i] {
            b'"' => return Some((&json[start..i], i + 1)),
            b'\\' => return None,
            _ => i += 1,
        }
    }
    None
}

fn skip_space(json: &[u8], mut i: usize) -> usize {
    while json.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(json: &str) -> Option<Vec<(String, Scalar<'_>)>> {
        let mut out = Vec::new();
        each_field(json.as_bytes(), |k, v| {
            out.push((String::from_utf8(k.to_vec()).unwrap(), v))
        })?;
        Some(out)
    }

    #[test]
    fn a_flat_object_is_read_field_by_field() {
        let got = fields(r#"{"id":"qemu/100","vmid":100, "cpu" : 0.25,"template":0,"lock":null,"ok":true,"name":""}"#)
            .unwrap();
        assert_eq!(
            got,
            vec![
                ("id".into(), Scalar::Str(b"qemu/100")),
                ("vmid".into(), Scalar::Raw(b"100")),
                ("cpu".into(), Scalar::Raw(b"0.25")),
                ("template".into(), Scalar::Raw(b"0")),
                ("lock".into(), Scalar::Raw(b"null")),
                ("ok".into(), Scalar::Raw(b"true")),
                ("name".into(), Scalar::Str(b"")),
            ]
        );
        assert_eq!(fields(" { } ").unwrap(), vec![]);
    }

    #[test]
    fn anything_but_the_flat_unescaped_shape_is_left_to_serde() {
        for json in [
            r#"{"name":"a\"b"}"#,
            r#"{"a\"":1}"#,
            r#"{"tags":["x"]}"#,
            r#"{"ha":{"managed":1}}"#,
            r#"{"a":1,}"#,
            r#"{"a":}"#,
            r#"{"a" 1}"#,
            r#"{"a":1} x"#,
            r#"{"a":"unterminated}"#,
            r#"[1]"#,
            "",
        ] {
            assert!(fields(json).is_none(), "{json}");
        }
    }
}
