//! Scripts written without spaces between words (Chinese, Japanese, Thai, ...): which
//! characters they are ([`is_unspaced_script`]), each a token of its own, and, for Chinese
//! and Japanese, the pairs of them that stand together ([`UnspacedRun`]), which the index
//! and queries hold too.

/// Characters of scripts written without spaces between words: Chinese and Japanese
/// (`is_paired_script`), Thai, Lao, Myanmar and Khmer.
pub fn is_unspaced_script(c: char) -> bool {
    is_paired_script(c)
        || matches!(c as u32,
            0x0E00..=0x0EFF     // Thai, Lao
            | 0x1000..=0x109F   // Myanmar
            | 0x1780..=0x17FF   // Khmer
        )
}

/// Characters of Chinese and Japanese (Han, kana): those paired by [`UnspacedRun`]. A
/// character of Thai, Lao, Khmer or Myanmar is a code point, not a letter (a vowel sign, a
/// tone mark), and its pairs are not measured: those scripts keep their characters alone.
pub(crate) fn is_paired_script(c: char) -> bool {
    matches!(c as u32,
        0x3005..=0x3007     // 々 〆 〇
        | 0x3040..=0x30FF   // Hiragana, Katakana
        | 0x31F0..=0x31FF   // Katakana extensions
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0xFF66..=0xFF9F   // halfwidth Katakana
        | 0x20000..=0x3134F // CJK extensions B–G
    )
}

/// A run of Chinese and Japanese characters, read one character at a time (each is a word
/// of its own): after each character but the run's first, the pair it ends is a term
/// too. So characters that stand together in a text match a query's pair
/// only there, not wherever both occur (overlapping bigrams, as Lucene's CJK analyzer and
/// the CJK indexing studies it follows: Kwok, "Comparing representations in Chinese
/// information retrieval", SIGIR 1997). The single characters stay terms as well, so a
/// query of one character still finds it.
#[derive(Default)]
pub(crate) struct UnspacedRun {
    /// The last character of the run (lowercased), and the byte offset where it ends in
    /// the text; empty when no run is open.
    last: String,
    end: usize,
}

impl UnspacedRun {
    /// Reads the character `c` (lowercased), `len` bytes long in the text where it is found
    /// at byte `start`: gives `f` the pair it ends, when it continues the run. A character
    /// of another script ends the run.
    pub(crate) fn next(&mut self, start: usize, len: usize, c: &str, f: &mut impl FnMut(&str)) {
        if !c.chars().next().is_some_and(is_paired_script) {
            self.last.clear();
            return;
        }
        let continues = !self.last.is_empty() && start == self.end;
        let last_len = self.last.len();
        if continues {
            self.last.push_str(c);
            f(&self.last);
            self.last.drain(..last_len);
        } else {
            self.last.clear();
            self.last.push_str(c);
        }
        self.end = start + len;
    }
}
