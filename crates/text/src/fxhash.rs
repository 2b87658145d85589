//! FxHash (rustc's hasher): a rotate, xor and multiply per 8-byte word. Fast and not
//! resistant to chosen collisions: for in-memory maps and telling duplicates apart,
//! never persisted.

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// The hash after feeding it one word.
#[inline]
pub fn step(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(5) ^ word).wrapping_mul(K)
}

/// A 64-bit hash of a byte stream, 8 bytes at a time and the length mixed in at the end,
/// fed in chunks: chunks of any size give the same hash as the whole.
#[derive(Default)]
pub struct ResultHasher {
    hash: u64,
    len: u64,
    /// Bytes of an unfinished word.
    tail: [u8; 8],
    tail_len: usize,
}

impl ResultHasher {
    fn word(&mut self, w: u64) {
        self.hash = step(self.hash, w);
    }

    /// Feeds the next bytes.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.tail_len > 0 {
            let take = (8 - self.tail_len).min(bytes.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&bytes[..take]);
            self.tail_len += take;
            bytes = &bytes[take..];
            if self.tail_len < 8 {
                return;
            }
            self.word(u64::from_le_bytes(self.tail));
            self.tail_len = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.word(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        }
        let rest = words.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail_len = rest.len();
    }

    /// The hash of everything fed.
    pub fn finish(mut self) -> u64 {
        if self.tail_len > 0 {
            let mut last = [0u8; 8];
            last[..self.tail_len].copy_from_slice(&self.tail[..self.tail_len]);
            self.word(u64::from_le_bytes(last));
        }
        let len = self.len;
        self.word(len);
        self.hash
    }
}
