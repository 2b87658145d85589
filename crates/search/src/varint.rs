//! LEB128 varints, the integers of postings and segments: seven bits a byte, low bits
//! first, the high bit set on every byte but the last.

/// Appends `n`.
pub(crate) fn push(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The varint at the start of `bytes` and the bytes after it; `None` when `bytes` ends
/// inside it or it runs past ten bytes (64 bits).
#[inline]
pub(crate) fn split(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut n = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        n |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((n, &bytes[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_reads_back_and_a_cut_one_is_none() {
        for n in [0, 1, 0x7f, 0x80, 0x3fff, 0x4000, u64::from(u32::MAX), u64::MAX] {
            let mut bytes = Vec::new();
            push(&mut bytes, n);
            bytes.push(0xaa);
            let (read, rest) = split(&bytes).unwrap();
            assert_eq!((read, rest), (n, &[0xaa][..]));
            assert_eq!(split(&bytes[..bytes.len() - 2]), None, "{n} cut");
        }
        assert_eq!(split(&[0xff; 11]), None, "past ten bytes");
    }
}
