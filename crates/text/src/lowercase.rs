//! Lowercasing with full case mapping: exactly what `str::to_lowercase` gives, for every
//! text, from two tables of this module (1.5 KB and 1.9 KB of wasm data) instead of
//! std's (an 11.5 KB table of pairs, plus the code and tables of its `Final_Sigma` rule):
//! the tokeniser and `hashQuery` lowercase every text, so every wasm module carried them.
//!
//! The tables are generated from std itself (`tests::tables_are_std_s` prints them again
//! when a Rust release moves to a new Unicode version), and a test compares this
//! lowercasing with `str::to_lowercase` for every character, alone and on either side of
//! a `Σ`.

/// `s` lowercased, as `str::to_lowercase` does it: each character by its lowercase
/// mapping (`İ` gives two, `i` and U+0307), and `Σ` by the `Final_Sigma` rule.
pub fn to_lowercase(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        match c {
            'Σ' => out.push(if is_final_sigma(s, i) { 'ς' } else { 'σ' }),
            'İ' => out.push_str("i\u{307}"),
            _ => out.push(lower(c)),
        }
    }
    out
}

/// The one-character lowercase mapping of `c` (every character but `İ` has one).
fn lower(c: char) -> char {
    let u = c as u32;
    let i = LOWER.partition_point(|&(run, _)| run & 0x1F_FFFF <= u);
    let Some(&(run, delta)) = i.checked_sub(1).and_then(|i| LOWER.get(i)) else { return c };
    let (start, count, stride) = (run & 0x1F_FFFF, (run >> 21 & 0x7F) + 1, (run >> 28) + 1);
    let offset = u - start;
    if offset % stride == 0 && offset / stride < count {
        char::from_u32(u.wrapping_add_signed(delta)).unwrap_or(c)
    } else {
        c
    }
}

/// Whether the `Σ` at byte `i` of `s` ends a word (Unicode's `Final_Sigma`, as std reads
/// it): a cased letter before it and none after it, case-ignorable characters skipped.
fn is_final_sigma(s: &str, i: usize) -> bool {
    cased_first(s[..i].chars().rev()) && !cased_first(s[i + 'Σ'.len_utf8()..].chars())
}

/// Whether the first character of `chars` that is not case-ignorable is cased.
fn cased_first(mut chars: impl Iterator<Item = char>) -> bool {
    chars.find(|&c| !is_case_ignorable(c)).is_some_and(is_cased)
}

/// Unicode's `Cased`: lowercase, uppercase, or one of the titlecase letters.
fn is_cased(c: char) -> bool {
    c.is_lowercase()
        || c.is_uppercase()
        || matches!(c as u32, 0x01C5 | 0x01C8 | 0x01CB | 0x01F2 | 0x1F88..=0x1F8F | 0x1F98..=0x1F9F | 0x1FA8..=0x1FAF | 0x1FBC | 0x1FCC | 0x1FFC)
}

/// Unicode's `Case_Ignorable`.
fn is_case_ignorable(c: char) -> bool {
    let u = c as u32;
    let i = CASE_IGNORABLE.partition_point(|&range| range & 0x1F_FFFF <= u);
    i.checked_sub(1).and_then(|i| CASE_IGNORABLE.get(i)).is_some_and(|&range| u - (range & 0x1F_FFFF) <= range >> 21)
}

/// The characters whose lowercase mapping is one other character, in runs: the first
/// character (bits 0-20), how many (bits 21-27, less one), every character or every
/// second one (bit 28), and what each one's code point adds to give its lowercase.
#[rustfmt::skip]
const LOWER: [(u32, i32); 185] = [
    (0x03200041, 32), (0x02c000c0, 32), (0x00c000d8, 32), (0x12e00100, 1), (0x10400132, 1), (0x10e00139, 1),
    (0x12c0014a, 1), (0x00000178, -121), (0x10400179, 1), (0x00000181, 210), (0x10200182, 1), (0x00000186, 206),
    (0x00000187, 1), (0x00200189, 205), (0x0000018b, 1), (0x0000018e, 79), (0x0000018f, 202), (0x00000190, 203),
    (0x00000191, 1), (0x00000193, 205), (0x00000194, 207), (0x00000196, 211), (0x00000197, 209), (0x00000198, 1),
    (0x0000019c, 211), (0x0000019d, 213), (0x0000019f, 214), (0x104001a0, 1), (0x000001a6, 218), (0x000001a7, 1),
    (0x000001a9, 218), (0x000001ac, 1), (0x000001ae, 218), (0x000001af, 1), (0x002001b1, 217), (0x102001b3, 1),
    (0x000001b7, 219), (0x000001b8, 1), (0x000001bc, 1), (0x000001c4, 2), (0x000001c5, 1), (0x000001c7, 2),
    (0x000001c8, 1), (0x000001ca, 2), (0x110001cb, 1), (0x110001de, 1), (0x000001f1, 2), (0x102001f2, 1),
    (0x000001f6, -97), (0x000001f7, -56), (0x126001f8, 1), (0x00000220, -130), (0x11000222, 1), (0x0000023a, 10795),
    (0x0000023b, 1), (0x0000023d, -163), (0x0000023e, 10792), (0x00000241, 1), (0x00000243, -195), (0x00000244, 69),
    (0x00000245, 71), (0x10800246, 1), (0x10200370, 1), (0x00000376, 1), (0x0000037f, 116), (0x00000386, 38),
    (0x00400388, 37), (0x0000038c, 64), (0x0020038e, 63), (0x02000391, 32), (0x010003a3, 32), (0x000003cf, 8),
    (0x116003d8, 1), (0x000003f4, -60), (0x000003f7, 1), (0x000003f9, -7), (0x000003fa, 1), (0x004003fd, -130),
    (0x01e00400, 80), (0x03e00410, 32), (0x12000460, 1), (0x1340048a, 1), (0x000004c0, 15), (0x10c004c1, 1),
    (0x15e004d0, 1), (0x04a00531, 48), (0x04a010a0, 7264), (0x000010c7, 7264), (0x000010cd, 7264), (0x09e013a0, 38864),
    (0x00a013f0, 8), (0x00001c89, 1), (0x05401c90, -3008), (0x00401cbd, -3008), (0x19401e00, 1), (0x00001e9e, -7615),
    (0x15e01ea0, 1), (0x00e01f08, -8), (0x00a01f18, -8), (0x00e01f28, -8), (0x00e01f38, -8), (0x00a01f48, -8),
    (0x10601f59, -8), (0x00e01f68, -8), (0x00e01f88, -8), (0x00e01f98, -8), (0x00e01fa8, -8), (0x00201fb8, -8),
    (0x00201fba, -74), (0x00001fbc, -9), (0x00601fc8, -86), (0x00001fcc, -9), (0x00201fd8, -8), (0x00201fda, -100),
    (0x00201fe8, -8), (0x00201fea, -112), (0x00001fec, -7), (0x00201ff8, -128), (0x00201ffa, -126), (0x00001ffc, -9),
    (0x00002126, -7517), (0x0000212a, -8383), (0x0000212b, -8262), (0x00002132, 28), (0x01e02160, 16), (0x00002183, 1),
    (0x032024b6, 26), (0x05e02c00, 48), (0x00002c60, 1), (0x00002c62, -10743), (0x00002c63, -3814), (0x00002c64, -10727),
    (0x10402c67, 1), (0x00002c6d, -10780), (0x00002c6e, -10749), (0x00002c6f, -10783), (0x00002c70, -10782), (0x00002c72, 1),
    (0x00002c75, 1), (0x00202c7e, -10815), (0x16202c80, 1), (0x10202ceb, 1), (0x00002cf2, 1), (0x12c0a640, 1),
    (0x11a0a680, 1), (0x10c0a722, 1), (0x13c0a732, 1), (0x1020a779, 1), (0x0000a77d, -35332), (0x1080a77e, 1),
    (0x0000a78b, 1), (0x0000a78d, -42280), (0x1020a790, 1), (0x1120a796, 1), (0x0000a7aa, -42308), (0x0000a7ab, -42319),
    (0x0000a7ac, -42315), (0x0000a7ad, -42305), (0x0000a7ae, -42308), (0x0000a7b0, -42258), (0x0000a7b1, -42282), (0x0000a7b2, -42261),
    (0x0000a7b3, 928), (0x10e0a7b4, 1), (0x0000a7c4, -48), (0x0000a7c5, -42307), (0x0000a7c6, -35384), (0x1020a7c7, 1),
    (0x0000a7cb, -42343), (0x10e0a7cc, 1), (0x0000a7dc, -42561), (0x0000a7f5, 1), (0x0320ff21, 32), (0x04e10400, 40),
    (0x046104b0, 40), (0x01410570, 39), (0x01c1057c, 39), (0x00c1058c, 39), (0x00210594, 39), (0x06410c80, 64),
    (0x02a10d50, 32), (0x03e118a0, 32), (0x03e16e40, 32), (0x03016ea0, 27), (0x0421e900, 34),
];

/// The case-ignorable characters, in ranges: the first (bits 0-20) and how many more
/// (bits 21-28).
#[rustfmt::skip]
const CASE_IGNORABLE: [u32; 464] = [
    0x00000027, 0x0000002e, 0x0000003a, 0x0000005e, 0x00000060, 0x000000a8, 0x000000ad, 0x000000af,
    0x000000b4, 0x002000b7, 0x17e002b0, 0x00200374, 0x0000037a, 0x00200384, 0x00000387, 0x00c00483,
    0x00000559, 0x0000055f, 0x05800591, 0x000005bf, 0x002005c1, 0x002005c4, 0x000005c7, 0x000005f4,
    0x00a00600, 0x01400610, 0x0000061c, 0x00000640, 0x0280064b, 0x00000670, 0x00e006d6, 0x012006df,
    0x006006ea, 0x0000070f, 0x00000711, 0x03400730, 0x014007a6, 0x014007eb, 0x000007fa, 0x000007fd,
    0x02e00816, 0x00400859, 0x00000888, 0x00200890, 0x01000897, 0x072008c9, 0x0000093a, 0x0000093c,
    0x00e00941, 0x0000094d, 0x00c00951, 0x00200962, 0x00000971, 0x00000981, 0x000009bc, 0x006009c1,
    0x000009cd, 0x002009e2, 0x000009fe, 0x00200a01, 0x00000a3c, 0x00200a41, 0x00200a47, 0x00400a4b,
    0x00000a51, 0x00200a70, 0x00000a75, 0x00200a81, 0x00000abc, 0x00800ac1, 0x00200ac7, 0x00000acd,
    0x00200ae2, 0x00a00afa, 0x00000b01, 0x00000b3c, 0x00000b3f, 0x00600b41, 0x00000b4d, 0x00200b55,
    0x00200b62, 0x00000b82, 0x00000bc0, 0x00000bcd, 0x00000c00, 0x00000c04, 0x00000c3c, 0x00400c3e,
    0x00400c46, 0x00600c4a, 0x00200c55, 0x00200c62, 0x00000c81, 0x00000cbc, 0x00000cbf, 0x00000cc6,
    0x00200ccc, 0x00200ce2, 0x00200d00, 0x00200d3b, 0x00600d41, 0x00000d4d, 0x00200d62, 0x00000d81,
    0x00000dca, 0x00400dd2, 0x00000dd6, 0x00000e31, 0x00c00e34, 0x01000e46, 0x00000eb1, 0x01000eb4,
    0x00000ec6, 0x00c00ec8, 0x00200f18, 0x00000f35, 0x00000f37, 0x00000f39, 0x01a00f71, 0x00800f80,
    0x00200f86, 0x01400f8d, 0x04600f99, 0x00000fc6, 0x0060102d, 0x00a01032, 0x00201039, 0x0020103d,
    0x00201058, 0x0040105e, 0x00601071, 0x00001082, 0x00201085, 0x0000108d, 0x0000109d, 0x000010fc,
    0x0040135d, 0x00401712, 0x00201732, 0x00201752, 0x00201772, 0x002017b4, 0x00c017b7, 0x000017c6,
    0x014017c9, 0x000017d7, 0x000017dd, 0x0080180b, 0x00001843, 0x00201885, 0x000018a9, 0x00401920,
    0x00201927, 0x00001932, 0x00401939, 0x00201a17, 0x00001a1b, 0x00001a56, 0x00c01a58, 0x00001a60,
    0x00001a62, 0x00e01a65, 0x01201a73, 0x00001a7f, 0x00001aa7, 0x05a01ab0, 0x01601ae0, 0x00601b00,
    0x00001b34, 0x00801b36, 0x00001b3c, 0x00001b42, 0x01001b6b, 0x00201b80, 0x00601ba2, 0x00201ba8,
    0x00401bab, 0x00001be6, 0x00201be8, 0x00001bed, 0x00401bef, 0x00e01c2c, 0x00201c36, 0x00a01c78,
    0x00401cd0, 0x01801cd4, 0x00c01ce2, 0x00001ced, 0x00001cf4, 0x00201cf8, 0x07c01d2c, 0x00001d78,
    0x0c801d9b, 0x00001fbd, 0x00401fbf, 0x00401fcd, 0x00401fdd, 0x00401fed, 0x00201ffd, 0x0080200b,
    0x00202018, 0x00002024, 0x00002027, 0x0080202a, 0x00802060, 0x01202066, 0x00002071, 0x0000207f,
    0x01802090, 0x040020d0, 0x00202c7c, 0x00402cef, 0x00002d6f, 0x00002d7f, 0x03e02de0, 0x00002e2f,
    0x00003005, 0x0060302a, 0x00803031, 0x0000303b, 0x00a03099, 0x004030fc, 0x0000a015, 0x00a0a4f8,
    0x0000a60c, 0x0060a66f, 0x0120a674, 0x0000a67f, 0x0060a69c, 0x0020a6f0, 0x0420a700, 0x0000a770,
    0x0040a788, 0x0060a7f1, 0x0020a7f8, 0x0000a802, 0x0000a806, 0x0000a80b, 0x0020a825, 0x0000a82c,
    0x0020a8c4, 0x0220a8e0, 0x0000a8ff, 0x00e0a926, 0x0140a947, 0x0040a980, 0x0000a9b3, 0x0060a9b6,
    0x0020a9bc, 0x0000a9cf, 0x0020a9e5, 0x00a0aa29, 0x0020aa31, 0x0020aa35, 0x0000aa43, 0x0000aa4c,
    0x0000aa70, 0x0000aa7c, 0x0000aab0, 0x0040aab2, 0x0020aab7, 0x0020aabe, 0x0000aac1, 0x0000aadd,
    0x0020aaec, 0x0020aaf3, 0x0000aaf6, 0x0080ab5b, 0x0040ab69, 0x0000abe5, 0x0000abe8, 0x0000abed,
    0x0000fb1e, 0x0200fbb2, 0x01e0fe00, 0x0000fe13, 0x01e0fe20, 0x0000fe52, 0x0000fe55, 0x0000feff,
    0x0000ff07, 0x0000ff0e, 0x0000ff1a, 0x0000ff3e, 0x0000ff40, 0x0000ff70, 0x0020ff9e, 0x0000ffe3,
    0x0040fff9, 0x000101fd, 0x000102e0, 0x00810376, 0x00a10780, 0x05210787, 0x010107b2, 0x00410a01,
    0x00210a05, 0x00610a0c, 0x00410a38, 0x00010a3f, 0x00210ae5, 0x00610d24, 0x00010d4e, 0x00810d69,
    0x00010d6f, 0x00210eab, 0x00010ec5, 0x00a10efa, 0x01410f46, 0x00610f82, 0x00011001, 0x01c11038,
    0x00011070, 0x00211073, 0x0041107f, 0x006110b3, 0x002110b9, 0x000110bd, 0x000110c2, 0x000110cd,
    0x00411100, 0x00811127, 0x00e1112d, 0x00011173, 0x00211180, 0x010111b6, 0x006111c9, 0x000111cf,
    0x0041122f, 0x00011234, 0x00211236, 0x0001123e, 0x00011241, 0x000112df, 0x00e112e3, 0x00211300,
    0x0021133b, 0x00011340, 0x00c11366, 0x00811370, 0x00a113bb, 0x000113ce, 0x000113d0, 0x000113d2,
    0x002113e1, 0x00e11438, 0x00411442, 0x00011446, 0x0001145e, 0x00a114b3, 0x000114ba, 0x002114bf,
    0x002114c2, 0x006115b2, 0x002115bc, 0x002115bf, 0x002115dc, 0x00e11633, 0x0001163d, 0x0021163f,
    0x000116ab, 0x000116ad, 0x00a116b0, 0x000116b7, 0x0001171d, 0x0001171f, 0x00611722, 0x00811727,
    0x0101182f, 0x00211839, 0x0021193b, 0x0001193e, 0x00011943, 0x006119d4, 0x002119da, 0x000119e0,
    0x01211a01, 0x00a11a33, 0x00611a3b, 0x00011a47, 0x00a11a51, 0x00411a59, 0x01811a8a, 0x00211a98,
    0x00011b60, 0x00411b62, 0x00011b66, 0x00c11c30, 0x00a11c38, 0x00011c3f, 0x02a11c92, 0x00c11caa,
    0x00211cb2, 0x00211cb5, 0x00a11d31, 0x00011d3a, 0x00211d3c, 0x00c11d3f, 0x00011d47, 0x00211d90,
    0x00011d95, 0x00011d97, 0x00011dd9, 0x00211ef3, 0x00211f00, 0x00811f36, 0x00011f40, 0x00011f42,
    0x00011f5a, 0x02013430, 0x01c13447, 0x0161611e, 0x0041612d, 0x00816af0, 0x00c16b30, 0x00616b40,
    0x00416d40, 0x00216d6b, 0x00016f4f, 0x02016f8f, 0x00216fe0, 0x00216fe3, 0x00216ff2, 0x0061aff0,
    0x00c1aff5, 0x0021affd, 0x0021bc9d, 0x0061bca0, 0x05a1cf00, 0x02c1cf30, 0x0041d167, 0x01e1d173,
    0x00c1d185, 0x0061d1aa, 0x0041d242, 0x06c1da00, 0x0621da3b, 0x0001da75, 0x0001da84, 0x0081da9b,
    0x01c1daa1, 0x00c1e000, 0x0201e008, 0x00c1e01b, 0x0021e023, 0x0081e026, 0x07a1e030, 0x0001e08f,
    0x01a1e130, 0x0001e2ae, 0x0061e2ec, 0x0081e4eb, 0x0021e5ee, 0x0001e6e3, 0x0001e6e6, 0x0021e6ee,
    0x0001e6f5, 0x0001e6ff, 0x00c1e8d0, 0x00e1e944, 0x0081f3fb, 0x000e0001, 0x0bee0020, 0x1dee0100,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn chars() -> impl Iterator<Item = char> {
        (0..=0x10_FFFF).filter_map(char::from_u32)
    }

    /// Whether the `Σ` in `s` lowercases to `ς` in std.
    fn std_final(s: &[char]) -> bool {
        s.iter().collect::<String>().to_lowercase().contains('ς')
    }

    /// The tables, from std: the single-character mappings in runs, and the characters std
    /// skips before a `Σ` (case-ignorable: `aXΣ` ends a word, `XΣ` does not). On a
    /// mismatch the message holds the new tables, to paste over the old ones.
    #[test]
    fn tables_are_std_s() {
        let mut diffs = Vec::new();
        for c in chars() {
            let mut lower = c.to_lowercase();
            if let (Some(l), None) = (lower.next(), lower.next()) {
                if l != c {
                    diffs.push((c as u32, l as i32 - c as i32));
                }
            }
        }
        let mut runs: Vec<(u32, i32)> = Vec::new();
        let mut i = 0;
        while i < diffs.len() {
            let (start, delta) = diffs[i];
            let mut j = i + 1;
            let mut stride = 1;
            if diffs.get(j).is_some_and(|&(c, d)| d == delta && (c - start == 1 || c - start == 2)) {
                stride = diffs[j].0 - start;
                while diffs.get(j).is_some_and(|&(c, d)| d == delta && c == diffs[j - 1].0 + stride) {
                    j += 1;
                }
            }
            runs.push((start | ((j - i) as u32 - 1) << 21 | (stride - 1) << 28, delta));
            i = j;
        }
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for c in chars().filter(|&c| std_final(&['a', c, 'Σ']) && !std_final(&[c, 'Σ'])) {
            match ranges.last_mut() {
                Some(range) if range.1 + 1 == c as u32 => range.1 += 1,
                _ => ranges.push((c as u32, c as u32)),
            }
        }
        let ranges: Vec<u32> = ranges.iter().map(|&(first, last)| first | (last - first) << 21).collect();
        let print = |items: Vec<String>, per_line: usize| {
            items.chunks(per_line).map(|line| format!("    {}\n", line.join(" "))).collect::<String>()
        };
        assert!(
            runs == LOWER && ranges == CASE_IGNORABLE,
            "the tables differ from std's; new ones:\nconst LOWER: [(u32, i32); {}] = [\n{}];\nconst CASE_IGNORABLE: [u32; {}] = [\n{}];",
            runs.len(),
            print(runs.iter().map(|(run, delta)| format!("({run:#010x}, {delta}),")).collect(), 6),
            ranges.len(),
            print(ranges.iter().map(|range| format!("{range:#010x},")).collect(), 8),
        );
    }

    #[test]
    fn every_character_lowercases_as_std_alone_and_around_a_sigma() {
        let mut wrong = Vec::new();
        for c in chars() {
            for s in [vec![c], vec![c, 'Σ'], vec!['a', c, 'Σ'], vec!['a', 'Σ', c], vec!['a', 'Σ', c, 'a'], vec!['Σ', c]]
            {
                let s: String = s.into_iter().collect();
                if to_lowercase(&s) != s.to_lowercase() {
                    wrong.push(s);
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{} texts lowercase unlike std, first {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(8)]
        );
    }

    #[test]
    fn mixed_texts_lowercase_as_std() {
        for s in [
            "ΣΑΣ ΟΔΟΣ.",
            "ὈΔΥΣΣΕΎΣ",
            "AΣ'Σ",
            "İSTANBUL ΣΣ",
            "ǅΣ",
            "a\u{345}Σ\u{345}",
            "Σ",
            "ΣΣ",
            "HTTPServer ΚΑΛΗΣΠΈΡΑ",
        ] {
            assert_eq!(to_lowercase(s), s.to_lowercase(), "{s}");
        }
    }
}
