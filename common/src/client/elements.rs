//! The elements of an answer's `data` list, one at a time, as the body arrives: the body
//! is read in chunks and split at the list's top-level commas (strings and nesting
//! tracked), so memory holds one element, and each element is then decoded from a slice
//! (serde_json decodes slices several times faster than readers).

use std::io::Read;

use serde::de::Error as _;

/// Calls `each` with the bytes of every element of the envelope's `data` list.
pub fn each_element(body: &mut dyn Read, each: &mut dyn FnMut(&[u8]) -> Result<(), serde_json::Error>) -> Result<(), serde_json::Error> {
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

#[derive(Default)]
struct Splitter {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The last string at depth 1 (an envelope key), up to a few bytes.
    key: Vec<u8>,
    in_list: bool,
    list_seen: bool,
    element: Vec<u8>,
}

impl Splitter {
    fn feed(&mut self, bytes: &[u8], each: &mut dyn FnMut(&[u8]) -> Result<(), serde_json::Error>) -> Result<(), serde_json::Error> {
        for &b in bytes {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                if self.in_list {
                    self.element.push(b);
                } else if self.depth == 1 && self.in_string && self.key.len() < 8 {
                    self.key.push(b);
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && !self.in_list {
                        self.key.clear();
                    }
                }
                b'{' | b'[' => {
                    if b == b'[' && self.depth == 1 && !self.in_list && self.key == b"data" {
                        self.in_list = true;
                        self.list_seen = true;
                        self.depth += 1;
                        continue;
                    }
                    self.depth += 1;
                }
                b'}' | b']' => {
                    if self.in_list && self.depth == 2 {
                        self.flush(each)?;
                        self.in_list = false;
                        self.depth -= 1;
                        continue;
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                b',' if self.in_list && self.depth == 2 => {
                    self.flush(each)?;
                    continue;
                }
                b' ' | b'\t' | b'\r' | b'\n' if self.in_list && self.depth == 2 => continue,
                _ => {}
            }
            if self.in_list {
                self.element.push(b);
            }
        }
        Ok(())
    }

    fn flush(&mut self, each: &mut dyn FnMut(&[u8]) -> Result<(), serde_json::Error>) -> Result<(), serde_json::Error> {
        if !self.element.is_empty() {
            each(&self.element)?;
            self.element.clear();
        }
        Ok(())
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
    }

    #[test]
    fn no_data_list_is_an_error() {
        let mut none = |_: &[u8]| Ok(());
        assert!(each_element(&mut &br#"{"data": null}"#[..], &mut none).is_err());
        assert!(each_element(&mut &br#"{"data": {"a": [1]}}"#[..], &mut none).is_err());
    }
}
