//! A streaming `multipart/form-data` reader that follows pve-http-server's
//! `file_upload_multipart` (src/PVE/APIServer/AnyEvent.pm) step by step. pveproxy does
//! not parse multipart bodies in general: on every read it applies a few regexes,
//! anchored at the start of its buffer, in a fixed order: `content`, then
//! `checksum-algorithm`, then `checksum`, then the file part, which must be named
//! `filename`. A field out of that order makes a regex match across parts (its
//! Content-Disposition capture spans the parts in between) and the upload dies with
//! `wrong Content-Disposition '…' in multipart, expected 'form-data'`; any other field
//! before the file makes the file part's name capture span it. The file's bytes then go
//! to a [`Sink`] up to the first close delimiter `--boundary--`, keeping back as many
//! bytes as that delimiter may take, so memory stays bounded by the largest chunk fed in.

use super::transfer::Sink;
use regex::bytes::Regex;
use std::collections::BTreeMap;

/// The form fields pve-http-server takes, in the order it takes them.
const FIELDS: [&str; 3] = ["content", "checksum-algorithm", "checksum"];
/// Bytes held before the file part starts. pveproxy buffers without a bound until a
/// regex matches or the body ends; the simulator stops looking past this (a body whose
/// head is this long is answered `upload failed`, as PVE answers it unless the file's
/// own bytes happen to complete a match).
const MAX_HEAD: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Phase {
    /// Before the first delimiter (PVE's phase 0).
    Preamble,
    /// The form fields and the file part's head (phase 1).
    Head,
    /// The file's bytes (phase 2).
    File,
    /// The close delimiter seen (phase 100).
    Done,
    /// The head grew past [`MAX_HEAD`] without a file part: the rest is not read.
    Overlong,
}

/// The regexes of `file_upload_multipart` for one boundary (`\Q$boundary\E`).
struct Patterns {
    /// Phase 0: `s/^.*?($delim_re)/$1/s`.
    preamble: Regex,
    /// `$extract_form_disposition`, one per field of [`FIELDS`].
    fields: Vec<(&'static str, Regex)>,
    /// `$remove_until_data`: `s/^.*?${newline_re}{2}//s`.
    until_data: Regex,
    /// A field's value: `s/^(.*?)(${delim_re})/$2/s`.
    value: Regex,
    /// The file part's head: `^${delim_re}Content-Disposition: (.*?); name="(.*?)"; filename="([^"]+)"`.
    file_head: Regex,
    /// The file's end: `${newline_re}?+${close_delim_re}`.
    close: Regex,
}

impl Patterns {
    fn new(boundary: &str) -> Patterns {
        let b = regex::escape(boundary);
        let delim = format!(r"--{b}\r?\n");
        let re = |p: String| Regex::new(&format!("(?s-u){p}")).expect("pattern of file_upload_multipart");
        Patterns {
            preamble: re(format!("^.*?({delim})")),
            fields: FIELDS
                .iter()
                .map(|name| {
                    let name_re = regex::escape(name);
                    (
                        *name,
                        re(format!(
                            r#"^{delim}.*?Content-Disposition: (.*?); name="{name_re}"(.*?{delim})"#
                        )),
                    )
                })
                .collect(),
            until_data: re(r"^.*?(?:\r?\n){2}".to_string()),
            value: re(format!("^(.*?)({delim})")),
            file_head: re(format!(
                r#"^{delim}Content-Disposition: (.*?); name="(.*?)"; filename="([^"]+)""#
            )),
            close: re(format!(r"(?:\r?\n)?--{b}--")),
        }
    }
}

pub struct Multipart {
    patterns: Patterns,
    /// `boundlen`: what of the buffer's end is kept back while the file is written.
    keep_back: usize,
    buf: Vec<u8>,
    phase: Phase,
    pub params: BTreeMap<String, String>,
}

/// The boundary of a `multipart/form-data` content type (pve-http-server's
/// `parse_content_type`: split at `;` or `,`, `boundary=` without quotes removed);
/// `None` for any other type.
pub fn boundary(content_type: &str) -> Option<String> {
    let mut parts = content_type.split([';', ',']).map(str::trim);
    if parts.next()? != "multipart/form-data" {
        return None;
    }
    parts
        .find_map(|p| p.strip_prefix("boundary").map(str::trim_start)?.strip_prefix('='))
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty() && !b.contains(char::is_whitespace))
}

/// `assert_form_disposition`: the disposition a regex captured must be `form-data`.
fn assert_form_disposition(captured: &[u8]) -> Result<(), String> {
    if captured == b"form-data" {
        return Ok(());
    }
    Err(format!(
        "wrong Content-Disposition '{}' in multipart, expected 'form-data'\n",
        String::from_utf8_lossy(captured)
    ))
}

/// pve-common's `trim` (`s/^\s+//; s/\s+$//`, pve-http-server a66b77d) on pveproxy's
/// read buffer, which holds bytes, not decoded text: Perl's `\s` there is ASCII white
/// space (with vertical tab), so a UTF-8 no-break space at an end stays.
fn trim(bytes: &[u8]) -> String {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    let start = bytes.iter().position(|b| !space(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !space(b)).map_or(start, |i| i + 1);
    String::from_utf8_lossy(&bytes[start..end]).into_owned()
}

impl Multipart {
    pub fn new(boundary: &str) -> Multipart {
        Multipart {
            patterns: Patterns::new(boundary),
            keep_back: boundary.len() + 8,
            buf: Vec::new(),
            phase: Phase::Preamble,
            params: BTreeMap::new(),
        }
    }

    /// Whether the close delimiter has been seen.
    pub fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Take the next chunk of the body (one read of pveproxy's handle); file bytes go to
    /// `sink`. An error is pveproxy's `die` message, with its newline when PVE's has one.
    pub fn feed(&mut self, data: &[u8], sink: &mut Sink) -> Result<(), String> {
        if matches!(self.phase, Phase::Done | Phase::Overlong) {
            return Ok(());
        }
        self.buf.extend_from_slice(data);
        if self.phase == Phase::Preamble {
            self.skip_preamble();
        }
        if self.phase == Phase::Head {
            self.read_head()?;
        }
        if self.phase == Phase::File {
            self.write_file(sink);
        }
        if matches!(self.phase, Phase::Preamble | Phase::Head) && self.buf.len() > MAX_HEAD {
            self.phase = Phase::Overlong;
            self.buf = Vec::new();
        }
        Ok(())
    }

    /// Phase 0: everything before the first delimiter is dropped.
    fn skip_preamble(&mut self) {
        if let Some(at) = self.patterns.preamble.captures(&self.buf).and_then(|c| c.get(1)) {
            self.buf.drain(..at.start());
            self.phase = Phase::Head;
        }
    }

    /// Phase 1: each field's regex once, in PVE's order, then the file part's head.
    fn read_head(&mut self) -> Result<(), String> {
        for i in 0..self.patterns.fields.len() {
            self.extract_field(i)?;
        }
        let Some(c) = self.patterns.file_head.captures(&self.buf) else {
            return Ok(());
        };
        assert_form_disposition(&c[1])?;
        if &c[2] != b"filename" {
            return Err(format!(
                "wrong field name '{}' for file upload, expected 'filename'",
                String::from_utf8_lossy(&c[2])
            ));
        }
        let (filename, end) = (trim(&c[3]), c.get(0).map_or(0, |m| m.end()));
        self.params.insert("filename".into(), filename);
        self.buf.drain(..end);
        self.remove_until_data();
        self.phase = Phase::File;
        Ok(())
    }

    /// `$extract_form_disposition`: the field's part (anchored at the buffer's start)
    /// replaced by what follows its name, its headers skipped, its value taken up to
    /// the next delimiter.
    fn extract_field(&mut self, i: usize) -> Result<(), String> {
        let (name, re) = &self.patterns.fields[i];
        let Some(c) = re.captures(&self.buf) else {
            return Ok(());
        };
        let (disposition, rest) = (c[1].to_vec(), c.get(2).map_or(0, |m| m.start()));
        let name = name.to_string();
        self.buf.drain(..rest);
        assert_form_disposition(&disposition)?;
        self.remove_until_data();
        let value = self
            .patterns
            .value
            .captures(&self.buf)
            .map(|c| (trim(&c[1]), c.get(2).map_or(0, |m| m.start())));
        if let Some((value, next_part)) = value {
            self.buf.drain(..next_part);
            self.params.insert(name, value);
        }
        Ok(())
    }

    /// `$remove_until_data`: the rest of a part's headers, up to its empty line.
    fn remove_until_data(&mut self) {
        if let Some(m) = self.patterns.until_data.find(&self.buf) {
            self.buf.drain(..m.end());
        }
    }

    /// Phase 2: the file's bytes up to the first close delimiter (and the newline before
    /// it); without one, all but the last `boundlen` bytes.
    fn write_file(&mut self, sink: &mut Sink) {
        if let Some(m) = self.patterns.close.find(&self.buf) {
            sink.write(&self.buf[..m.start()]);
            self.buf = Vec::new();
            self.phase = Phase::Done;
            return;
        }
        let upto = self.buf.len().saturating_sub(self.keep_back);
        if upto > 0 {
            sink.write(&self.buf[..upto]);
            self.buf.drain(..upto);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: &str = "XyZ";

    fn part(name: &str, value: &str) -> String {
        format!("--{B}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
    }

    fn body(fields: &[(&str, &str)], file: &[u8]) -> Vec<u8> {
        let mut b = b"preamble\r\n".to_vec();
        for (k, v) in fields {
            b.extend_from_slice(part(k, v).as_bytes());
        }
        b.extend_from_slice(format!("--{B}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\" a.iso \"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
        b.extend_from_slice(file);
        b.extend_from_slice(format!("\r\n--{B}--\r\n").as_bytes());
        b
    }

    /// The body read as pveproxy reads it: the head (fields and the file part's head,
    /// a few hundred bytes) in its first read, the rest in reads of `chunk` bytes.
    fn parse(whole: &[u8], chunk: usize) -> (Result<(), String>, Multipart, Sink) {
        let head_end = memchr::memmem::find(whole, b"octet-stream\r\n\r\n").map_or(whole.len(), |at| at + 16);
        let mut m = Multipart::new(B);
        let mut sink = Sink::default();
        let (head, rest) = whole.split_at(head_end);
        for c in std::iter::once(head).chain(rest.chunks(chunk)) {
            if let Err(e) = m.feed(c, &mut sink) {
                return (Err(e), m, sink);
            }
        }
        (Ok(()), m, sink)
    }

    fn digest(bytes: &[u8]) -> BTreeMap<String, String> {
        let mut s = Sink::default();
        s.write(bytes);
        s.finish().checksums
    }

    #[test]
    fn fields_in_pves_order_and_the_file_in_any_chunking() {
        // A file with a plain delimiter inside: only the close delimiter ends it.
        let file: Vec<u8> = (0..5000u32)
            .map(|i| (i % 251) as u8)
            .chain(*b"\r\n--XyZ\r\nnot-a-part")
            .collect();
        let fields = [
            ("content", "iso"),
            ("checksum-algorithm", "sha256"),
            ("checksum", " ab12 "),
        ];
        let whole = body(&fields, &file);
        for chunk in [1, 2, 7, 64, 4096, whole.len()] {
            let (res, m, sink) = parse(&whole, chunk);
            res.unwrap();
            assert!(m.done(), "chunk {chunk}");
            let p = |k: &str| m.params.get(k).cloned();
            assert_eq!(p("content").as_deref(), Some("iso"));
            assert_eq!(p("checksum-algorithm").as_deref(), Some("sha256"));
            assert_eq!(p("checksum").as_deref(), Some("ab12"));
            assert_eq!(p("filename").as_deref(), Some("a.iso"));
            assert_eq!(sink.finish().checksums, digest(&file), "chunk {chunk}");
        }
    }

    #[test]
    fn values_are_trimmed_of_ascii_white_space_only() {
        let whole = body(&[("content", "iso"), ("checksum-algorithm", "\u{a0}sha256\x0b")], b"x");
        let (res, m, _) = parse(&whole, whole.len());
        res.unwrap();
        assert_eq!(
            m.params.get("checksum-algorithm").map(String::as_str),
            Some("\u{a0}sha256"),
            "Perl's \\s on bytes: a no-break space is no white space, a vertical tab is"
        );
    }

    #[test]
    fn checksum_before_its_algorithm_spans_two_parts() {
        let whole = body(
            &[
                ("content", "iso"),
                ("checksum", "ab12"),
                ("checksum-algorithm", "sha256"),
            ],
            b"x",
        );
        let (res, _, _) = parse(&whole, whole.len());
        assert_eq!(
            res.unwrap_err(),
            format!("wrong Content-Disposition 'form-data; name=\"checksum\"\r\n\r\nab12\r\n--{B}\r\nContent-Disposition: form-data' in multipart, expected 'form-data'\n")
        );
        // Read part by part, each regex finds its part first: PVE takes it too.
        let mut m = Multipart::new(B);
        let mut sink = Sink::default();
        for c in whole.chunks(1) {
            m.feed(c, &mut sink).unwrap();
        }
        assert_eq!(m.params["checksum-algorithm"], "sha256");
    }

    #[test]
    fn a_file_head_split_after_its_name_keeps_the_rest_of_its_headers_as_data() {
        let whole = body(&[("content", "iso")], b"x");
        let at = memchr::memmem::find(&whole, b"a.iso \"").unwrap() + 7;
        let mut m = Multipart::new(B);
        let mut sink = Sink::default();
        m.feed(&whole[..at], &mut sink).unwrap();
        m.feed(&whole[at..], &mut sink).unwrap();
        assert!(m.done());
        assert_eq!(
            sink.finish().checksums,
            digest(b"\r\nContent-Type: application/octet-stream\r\n\r\nx")
        );
    }

    #[test]
    fn another_field_before_the_file_becomes_the_file_parts_name() {
        let whole = body(&[("content", "iso"), ("node", "pve1")], b"x");
        let (res, _, _) = parse(&whole, whole.len());
        assert_eq!(
            res.unwrap_err(),
            format!("wrong field name 'node\"\r\n\r\npve1\r\n--{B}\r\nContent-Disposition: form-data; name=\"filename' for file upload, expected 'filename'")
        );
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
                b"--b\r\nContent-Disposition: attachment; name=\"content\"\r\n\r\niso\r\n--b\r\n",
                &mut Sink::default(),
            )
            .unwrap_err();
        assert_eq!(
            e,
            "wrong Content-Disposition 'attachment' in multipart, expected 'form-data'\n"
        );
        assert_eq!(boundary("multipart/form-data; boundary=abc"), Some("abc".into()));
        assert_eq!(boundary("multipart/form-data, boundary = abc "), Some("abc".into()));
        assert_eq!(boundary("application/x-www-form-urlencoded"), None);
    }

    #[test]
    fn a_head_without_a_file_part_is_not_held_without_bound() {
        let mut m = Multipart::new("b");
        let mut sink = Sink::default();
        m.feed(b"--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n", &mut sink)
            .unwrap();
        for _ in 0..40 {
            m.feed(&[b'a'; 64 << 10], &mut sink).unwrap();
        }
        assert!(!m.done());
        assert!(m.buf.is_empty());
    }
}
