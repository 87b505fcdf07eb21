//! A streaming `multipart/form-data` reader with the rules of pve-http-server's
//! `file_upload_multipart`: fields before the file part (`content`, `checksum-algorithm`,
//! `checksum`; others are ignored), then one file part named `filename` whose bytes go
//! to a [`Sink`] as they arrive, up to the closing delimiter. Memory stays bounded by the
//! largest chunk fed in, whatever the file's size.

use super::transfer::Sink;
use memchr::memmem;
use std::collections::BTreeMap;

/// The form fields pve-http-server takes from an upload.
const FIELDS: [&str; 3] = ["content", "checksum-algorithm", "checksum"];
/// Part headers larger than this are refused (pve-http-server's `maxheader` is ~2 KiB).
const MAX_PART_HEADER: usize = 16 << 10;

enum Phase {
    Preamble,
    Headers,
    Field(String),
    File,
    /// After a delimiter: the next part or the end.
    Delimiter,
    Done,
}

pub struct Multipart {
    /// `--boundary`.
    delim: Vec<u8>,
    buf: Vec<u8>,
    phase: Phase,
    pub params: BTreeMap<String, String>,
}

/// The boundary of a `multipart/form-data` content type (pve-http-server's
/// `parse_content_type`); `None` for any other type.
pub fn boundary(content_type: &str) -> Option<String> {
    let mut parts = content_type.split([';', ',']).map(str::trim);
    if parts.next()? != "multipart/form-data" {
        return None;
    }
    parts
        .find_map(|p| p.strip_prefix("boundary="))
        .map(|b| b.trim().trim_matches('"').to_string())
        .filter(|b| !b.is_empty())
}

/// `name="…"` and `filename="…"` of a part's Content-Disposition (and its type).
fn disposition(headers: &str) -> Result<(String, Option<String>), String> {
    let line = headers
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("content-disposition:"))
        .ok_or("upload failed")?;
    let value = line.split_once(':').map(|(_, v)| v.trim()).unwrap_or("");
    let kind = value.split(';').next().unwrap_or("").trim();
    if kind != "form-data" {
        return Err(format!(
            "wrong Content-Disposition '{kind}' in multipart, expected 'form-data'"
        ));
    }
    let quoted = |key: &str| {
        value
            .split(';')
            .map(str::trim)
            .find_map(|p| p.strip_prefix(&format!("{key}=\"")))
            .map(|v| v.trim_end_matches('"').to_string())
    };
    Ok((quoted("name").unwrap_or_default(), quoted("filename")))
}

impl Multipart {
    pub fn new(boundary: &str) -> Multipart {
        Multipart {
            delim: format!("--{boundary}").into_bytes(),
            buf: Vec::new(),
            phase: Phase::Preamble,
            params: BTreeMap::new(),
        }
    }

    /// Whether the closing delimiter has been seen.
    pub fn done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Take the next chunk of the body; file bytes go to `sink`.
    pub fn feed(&mut self, data: &[u8], sink: &mut Sink) -> Result<(), String> {
        if self.done() {
            return Ok(());
        }
        self.buf.extend_from_slice(data);
        while self.step(sink)? {}
        Ok(())
    }

    /// One step of the state machine; false when it needs more bytes.
    fn step(&mut self, sink: &mut Sink) -> Result<bool, String> {
        match &self.phase {
            Phase::Preamble => match memmem::find(&self.buf, &self.delim) {
                Some(at) => {
                    self.buf.drain(..at + self.delim.len());
                    self.phase = Phase::Delimiter;
                    Ok(true)
                }
                None => {
                    let keep = self.delim.len().min(self.buf.len());
                    self.buf.drain(..self.buf.len() - keep);
                    Ok(false)
                }
            },
            Phase::Delimiter => {
                if self.buf.len() < 2 {
                    return Ok(false);
                }
                if self.buf.starts_with(b"--") {
                    self.phase = Phase::Done;
                    self.buf.clear();
                    return Ok(false);
                }
                let skip = if self.buf.starts_with(b"\r\n") {
                    2
                } else if self.buf.starts_with(b"\n") {
                    1
                } else {
                    0
                };
                self.buf.drain(..skip);
                self.phase = Phase::Headers;
                Ok(true)
            }
            Phase::Headers => {
                let Some(end) = memmem::find(&self.buf, b"\r\n\r\n") else {
                    if self.buf.len() > MAX_PART_HEADER {
                        return Err("http header too large".into());
                    }
                    return Ok(false);
                };
                let headers = String::from_utf8_lossy(&self.buf[..end]).into_owned();
                self.buf.drain(..end + 4);
                let (name, filename) = disposition(&headers)?;
                self.phase = match filename {
                    Some(f) => {
                        if name != "filename" {
                            return Err(format!(
                                "wrong field name '{name}' for file upload, expected 'filename'"
                            ));
                        }
                        self.params.insert("filename".into(), f.trim().to_string());
                        Phase::File
                    }
                    None => Phase::Field(name),
                };
                Ok(true)
            }
            Phase::Field(name) => {
                let mut end_marker = b"\r\n".to_vec();
                end_marker.extend_from_slice(&self.delim);
                let Some(at) = memmem::find(&self.buf, &end_marker) else {
                    return Ok(false);
                };
                if FIELDS.contains(&name.as_str()) {
                    let value = String::from_utf8_lossy(&self.buf[..at]).trim().to_string();
                    self.params.insert(name.clone(), value);
                }
                self.buf.drain(..at + end_marker.len());
                self.phase = Phase::Delimiter;
                Ok(true)
            }
            Phase::File => {
                let mut end_marker = b"\r\n".to_vec();
                end_marker.extend_from_slice(&self.delim);
                match memmem::find(&self.buf, &end_marker) {
                    // A delimiter only when `--` (the end) or a line break follows.
                    Some(at) if self.buf.len() < at + end_marker.len() + 2 => {
                        sink.write(&self.buf[..at]);
                        self.buf.drain(..at);
                        Ok(false)
                    }
                    Some(at)
                        if !matches!(
                            &self.buf[at + end_marker.len()..at + end_marker.len() + 2],
                            b"--" | b"\r\n"
                        ) =>
                    {
                        sink.write(&self.buf[..at + 1]);
                        self.buf.drain(..at + 1);
                        Ok(true)
                    }
                    Some(at) => {
                        sink.write(&self.buf[..at]);
                        self.buf.drain(..at + end_marker.len());
                        self.phase = Phase::Delimiter;
                        Ok(true)
                    }
                    None => {
                        // Keep what could be the start of the delimiter.
                        let keep = (end_marker.len() - 1).min(self.buf.len());
                        let upto = self.buf.len() - keep;
                        sink.write(&self.buf[..upto]);
                        self.buf.drain(..upto);
                        Ok(false)
                    }
                }
            }
            Phase::Done => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(file: &[u8]) -> Vec<u8> {
        let mut b = b"--XyZ\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\niso\r\n--XyZ\r\nContent-Disposition: form-data; name=\"node\"\r\n\r\npve1\r\n--XyZ\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"a.iso\"\r\nContent-Type: application/octet-stream\r\n\r\n".to_vec();
        b.extend_from_slice(file);
        b.extend_from_slice(b"\r\n--XyZ--\r\n");
        b
    }

    #[test]
    fn fields_and_file_in_any_chunking() {
        let file: Vec<u8> = (0..5000u32)
            .map(|i| (i % 251) as u8)
            .chain(*b"\r\n--XyZ-not-it")
            .collect();
        let whole = body(&file);
        for chunk in [1, 2, 7, 64, 4096, whole.len()] {
            let mut m = Multipart::new("XyZ");
            let mut sink = Sink::default();
            for c in whole.chunks(chunk) {
                m.feed(c, &mut sink).unwrap();
            }
            assert!(m.done(), "chunk {chunk}");
            assert_eq!(m.params.get("content").map(String::as_str), Some("iso"));
            assert_eq!(m.params.get("filename").map(String::as_str), Some("a.iso"));
            assert!(!m.params.contains_key("node"), "only PVE's fields are taken");
            let mut expect = Sink::default();
            expect.write(&file);
            assert_eq!(sink.finish().checksums, expect.finish().checksums, "chunk {chunk}");
        }
    }

    #[test]
    fn refusals() {
        let mut m = Multipart::new("b");
        let e = m
            .feed(
                b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.iso\"\r\n\r\n",
                &mut Sink::default(),
            )
            .unwrap_err();
        assert_eq!(e, "wrong field name 'file' for file upload, expected 'filename'");
        let mut m = Multipart::new("b");
        let e = m
            .feed(
                b"--b\r\nContent-Disposition: attachment; name=\"content\"\r\n\r\n",
                &mut Sink::default(),
            )
            .unwrap_err();
        assert_eq!(
            e,
            "wrong Content-Disposition 'attachment' in multipart, expected 'form-data'"
        );
        assert_eq!(boundary("multipart/form-data; boundary=abc"), Some("abc".into()));
        assert_eq!(boundary("application/x-www-form-urlencoded"), None);
    }
}
