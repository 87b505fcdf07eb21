//! The elements of an answer's `data` list, one at a time, as the body arrives: the body
//! is read in chunks and split at the list's top-level commas (strings and nesting
//! tracked), so memory holds one element, and each element is then decoded from a slice
//! (serde_json decodes slices several times faster than readers).

use std::io::Read;

use serde::de::Error as _;

/// Calls `each` with the bytes of every element of the envelope's `data` list.
pub(super) fn each_element(
    body: &mut dyn Read,
    each: &mut dyn FnMut(&[u8]) -> Result<(), serde_json::Error>,
) -> Result<(), serde_json::Error> {
    let mut s = Splitter::default();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = body.read(&mut chunk).map_err(serde_json::Error::io)?;
        if n == 0 {
            break;
        }
        s.feed(&chunk[..n], each)?;
    }
    if !s.list_seen {
        return Err(serde_json::Error::custom("the answer holds no data list"));
    }
    Ok(())
}

/// The length of the object `text` starts with, when it is flat (no nested object or
/// list, no escape) and ends in `text`: then every quote delimits a string, so its first
/// `}` after an even number of quotes is its end. Found with a few vectorised searches
/// instead of a step per byte; `None` sends the element the slow way, byte by byte.
fn flat_object_len(text: &[u8]) -> Option<usize> {
    let close = memchr::memchr(b'}', text)?;
    let object = &text[..=close];
    let flat = memchr::memchr(b'\\', object).is_none()
        && memchr::memchr2(b'{', b'[', &object[1..]).is_none()
        && memchr::memchr_iter(b'"', object).count() % 2 == 0;
    flat.then_some(close + 1)
}

#[derive(Default)]
struct Splitter {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The last string at depth 1 (an envelope key), up to a few bytes.
    key: Vec<u8>,
    in_list: bool,
    list_seen: bool,
    /// The bytes of the current element that arrived in earlier chunks.
    carried: Vec<u8>,
}

impl Splitter {
    /// Scans one chunk, byte by byte except over flat elements ([`flat_object_len`]); an
    /// element is handed over as a slice of the chunk (copied only when it spans chunks):
    /// a listing of thousands of guests costs a few searches per entry, not a step and a
    /// copy per byte.
    fn feed(
        &mut self,
        bytes: &[u8],
        each: &mut dyn FnMut(&[u8]) -> Result<(), serde_json::Error>,
    ) -> Result<(), serde_json::Error> {
        let mut i = 0;
        // Where the current element's bytes in this chunk begin.
        let mut from = 0;
        while i < bytes.len() {
            if self.in_string {
                let b = bytes[i];
                i += 1;
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                if !self.in_list && self.depth == 1 && self.in_string && self.key.len() < 8 {
                    self.key.push(b);
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && !self.in_list {
                        self.key.clear();
                    }
                }
                b'[' if self.depth == 1 && !self.in_list && self.key == b"data" => {
                    self.in_list = true;
                    self.list_seen = true;
                    self.depth += 1;
                    from = i;
                }
                b'{' if self.in_list && self.depth == 2 => match flat_object_len(&bytes[i - 1..]) {
                    // A flat element wholly in this chunk: on to its end at once.
                    Some(len) => i += len - 1,
                    None => self.depth += 1,
                },
                b'{' | b'[' => self.depth += 1,
                b']' | b'}' if self.in_list && self.depth == 2 => {
                    self.flush(&bytes[from..i - 1], each)?;
                    self.in_list = false;
                    self.depth -= 1;
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b',' if self.in_list && self.depth == 2 => {
                    self.flush(&bytes[from..i - 1], each)?;
                    from = i;
                }
                _ => {}
            }
        }
        if self.in_list {
            self.carried.extend_from_slice(&bytes[from..]);
        }
        Ok(())
    }

    /// Hands over one element: the bytes carried from earlier chunks plus `tail`, without
    /// the whitespace around it (an empty list holds none).
    fn flush(
        &mut self,
        tail: &[u8],
        each: &mut dyn FnMut(&[u8]) -> Result<(), serde_json::Error>,
    ) -> Result<(), serde_json::Error> {
        let whole: &[u8] = if self.carried.is_empty() {
            tail
        } else {
            self.carried.extend_from_slice(tail);
            &self.carried
        };
        let element = whole.trim_ascii();
        let result = if element.is_empty() { Ok(()) } else { each(element) };
        self.carried.clear();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str, chunk: usize) -> Result<Vec<String>, serde_json::Error> {
        let mut s = Splitter::default();
        let mut out = Vec::new();
        for part in text.as_bytes().chunks(chunk) {
            s.feed(part, &mut |e| {
                out.push(String::from_utf8(e.to_vec()).unwrap());
                Ok(())
            })?;
        }
        assert!(s.list_seen);
        Ok(out)
    }

    #[test]
    fn elements_are_split_whatever_the_chunks() {
        let text = r#"{"total": 3, "x": {"data": [9]}, "data": [ {"a": "x,]}\"y", "b": [1, {"c": 2}]}, 7, "s,t" ,null],"more":[1]}"#;
        for chunk in [1, 2, 5, 1000] {
            assert_eq!(
                split(text, chunk).unwrap(),
                vec![r#"{"a": "x,]}\"y", "b": [1, {"c": 2}]}"#, "7", r#""s,t""#, "null"],
                "chunk {chunk}"
            );
        }
        assert!(split(r#"{"data": []}"#, 3).unwrap().is_empty());
        assert!(split(r#"{"data": [ ]}"#, 1).unwrap().is_empty());
        // Flat elements (the fast way) beside ones that are not, whatever the chunks.
        let text = r#"{"data":[{"a":"}"},{"b":1},{"c":"\\"},{"d":"{"},{"e":2}]}"#;
        for chunk in [1, 3, 7, 1000] {
            assert_eq!(
                split(text, chunk).unwrap(),
                vec![
                    r#"{"a":"}"}"#,
                    r#"{"b":1}"#,
                    r#"{"c":"\\"}"#,
                    r#"{"d":"{"}"#,
                    r#"{"e":2}"#
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn no_data_list_is_an_error() {
        let mut none = |_: &[u8]| Ok(());
        assert!(each_element(&mut &br#"{"data": null}"#[..], &mut none).is_err());
        assert!(each_element(&mut &br#"{"data": {"a": [1]}}"#[..], &mut none).is_err());
    }
}
