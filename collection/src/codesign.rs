//! The embedded code signature of a Mach-O executable, checked page by page.
//!
//! macOS on Apple silicon runs only signed code, and an ad-hoc signature is a list of
//! SHA-256 hashes of the file's pages: any tool that edits the file after the linker
//! signed it (a strip, for one) must write those hashes again, or the kernel kills the
//! program at its first page fault ("Killed: 9"). No Mac runs here, so the build checks
//! what the kernel checks: every page of the file up to the signature against its hash.
//!
//! Layout (Apple's `cs_blobs.h`; every field big-endian): `LC_CODE_SIGNATURE` points at
//! a SuperBlob (magic, length, count, then `{type, offset}` per blob); the blob of type 0
//! is the CodeDirectory, whose `nCodeSlots` hashes of `hashSize` bytes start at
//! `hashOffset` and cover the file in pages of `1 << pageSize` bytes up to `codeLimit`.

use ring::digest;

const SUPERBLOB_MAGIC: u32 = 0xfade_0cc0;
const CODE_DIRECTORY_MAGIC: u32 = 0xfade_0c02;
const CODE_DIRECTORY_SLOT: u32 = 0;
const HASH_SHA256: u8 = 2;

/// Checks the signature at `offset`, `size` bytes long (from `LC_CODE_SIGNATURE`);
/// `Err` says what is wrong, in the words of the build table.
pub(crate) fn check(data: &[u8], offset: usize, size: usize) -> Result<SignatureFacts, String> {
    let blob = data
        .get(offset..offset.saturating_add(size))
        .ok_or("signed, but its signature lies outside the file")?;
    if be32(blob, 0)? != SUPERBLOB_MAGIC {
        return Err("signed with an unreadable signature (no embedded-signature SuperBlob)".into());
    }
    let count = be32(blob, 8)? as usize;
    let mut directory = None;
    for index in 0..count {
        if be32(blob, 12 + 8 * index)? == CODE_DIRECTORY_SLOT {
            directory = Some(be32(blob, 16 + 8 * index)? as usize);
            break;
        }
    }
    let directory = directory.ok_or("signed without a CodeDirectory")?;
    let cd = blob
        .get(directory..)
        .ok_or("signed with a CodeDirectory outside the signature")?;
    if be32(cd, 0)? != CODE_DIRECTORY_MAGIC {
        return Err("signed with an unreadable CodeDirectory".into());
    }
    let hash_offset = be32(cd, 16)? as usize;
    let slots = be32(cd, 28)? as usize;
    let code_limit = be32(cd, 32)? as usize;
    let (hash_size, hash_type, page_shift) = (byte(cd, 36)?, byte(cd, 37)?, byte(cd, 39)?);
    if hash_type != HASH_SHA256 || hash_size != 32 {
        return Err(format!(
            "signed with hash type {hash_type} of {hash_size} bytes, not SHA-256"
        ));
    }
    if code_limit != offset {
        return Err(format!(
            "signed over {code_limit} bytes, but its code ends at {offset}: the file changed after it was signed"
        ));
    }
    let page = 1usize
        .checked_shl(page_shift.into())
        .filter(|p| *p > 1)
        .ok_or("signed with an unusable page size")?;
    if slots != code_limit.div_ceil(page) {
        return Err(format!(
            "signed with {slots} page hashes for {} pages",
            code_limit.div_ceil(page)
        ));
    }
    for (index, chunk) in data[..code_limit].chunks(page).enumerate() {
        let at = hash_offset + index * 32;
        let expected = cd
            .get(at..at + 32)
            .ok_or("signed with page hashes outside the CodeDirectory")?;
        if digest::digest(&digest::SHA256, chunk).as_ref() != expected {
            return Err(format!(
                "signed, but page {index} (bytes {}..) does not match its hash: the file changed after it was signed, and macOS would kill it",
                index * page
            ));
        }
    }
    Ok(SignatureFacts { pages: slots })
}

/// What a valid signature covers, for the build table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SignatureFacts {
    pub pages: usize,
}

fn be32(data: &[u8], at: usize) -> Result<u32, String> {
    data.get(at..at + 4)
        .map(|b| u32::from_be_bytes(b.try_into().expect("four bytes")))
        .ok_or_else(|| "signed with a truncated signature".to_string())
}

fn byte(data: &[u8], at: usize) -> Result<u8, String> {
    data.get(at)
        .copied()
        .ok_or_else(|| "signed with a truncated CodeDirectory".to_string())
}
