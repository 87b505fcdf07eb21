//! The words `state`, `content` and `checksum_algorithm` take, each an enum whose
//! `Choice` table is the declaration's `choices`. Below both the declaration
//! ([`crate::options`]), which lists the words, and the typed task ([`crate::task`]), which
//! reads the declaration: neither imports the other back.

use ferrox_ansible::options::read::Choice;

/// `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Present,
    Absent,
}

impl Choice for State {
    const ALL: &'static [(&'static str, State)] = &[("present", State::Present), ("absent", State::Absent)];
}

/// PVE's content types for files a storage holds (`content` of upload/download-url).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Content {
    Vztmpl,
    Iso,
    Import,
}

impl Choice for Content {
    const ALL: &'static [(&'static str, Content)] = &[
        ("vztmpl", Content::Vztmpl),
        ("iso", Content::Iso),
        ("import", Content::Import),
    ];
}

/// `checksum-algorithm` as PVE spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Algorithm {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

impl Choice for Algorithm {
    const ALL: &'static [(&'static str, Algorithm)] = &[
        ("md5", Algorithm::Md5),
        ("sha1", Algorithm::Sha1),
        ("sha224", Algorithm::Sha224),
        ("sha256", Algorithm::Sha256),
        ("sha384", Algorithm::Sha384),
        ("sha512", Algorithm::Sha512),
    ];
}
