//! SQL `LIKE` / `ILIKE` matching: `%` matches any run of characters, `_` exactly one, and
//! `\` makes the next character literal (Spark's default escape). `ILIKE` compares the
//! lower-cased value with the lower-cased pattern. Nulls stay null. Written here rather
//! than taken from arrow's regex-based kernels: the regex engine and its Unicode tables
//! are a large share of a wasm build (the edge worker's and the explorer's).

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray};
use arrow_schema::DataType;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Char(char),
    One,
    Many,
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub(crate) struct LikePattern {
    toks: Vec<Tok>,
    case_insensitive: bool,
}

impl LikePattern {
    /// Compile `pattern`; with `case_insensitive` (`ILIKE`) it matches lower-cased values.
    pub(crate) fn new(pattern: &str, case_insensitive: bool) -> Self {
        let pattern = if case_insensitive {
            pattern.to_lowercase()
        } else {
            pattern.to_string()
        };
        let mut toks = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            toks.push(match c {
                '%' => {
                    if toks.last() == Some(&Tok::Many) {
                        continue;
                    }
                    Tok::Many
                }
                '_' => Tok::One,
                '\\' => Tok::Char(chars.next().unwrap_or('\\')),
                c => Tok::Char(c),
            });
        }
        LikePattern {
            toks,
            case_insensitive,
        }
    }

    /// Whether `value` matches.
    pub(crate) fn matches(&self, value: &str) -> bool {
        if self.case_insensitive {
            let lower = value.to_lowercase();
            self.match_chars(&lower.chars().collect::<Vec<_>>())
        } else {
            self.match_chars(&value.chars().collect::<Vec<_>>())
        }
    }

    /// Wildcard matching with backtracking to the last `%` (linear for most patterns).
    fn match_chars(&self, s: &[char]) -> bool {
        let p = &self.toks;
        let (mut i, mut j) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while i < s.len() {
            match p.get(j) {
                Some(Tok::Char(c)) if *c == s[i] => {
                    i += 1;
                    j += 1;
                }
                Some(Tok::One) => {
                    i += 1;
                    j += 1;
                }
                Some(Tok::Many) => {
                    star = Some((j, i));
                    j += 1;
                }
                _ => match star {
                    Some((sj, si)) => {
                        star = Some((sj, si + 1));
                        i = si + 1;
                        j = sj + 1;
                    }
                    None => return false,
                },
            }
        }
        p[j..].iter().all(|t| *t == Tok::Many)
    }
}

/// `array LIKE pattern` for a string column (`Utf8`, `LargeUtf8`, `Utf8View`); `None` for
/// other types.
pub(crate) fn like(array: &dyn Array, pattern: &LikePattern) -> Option<BooleanArray> {
    let eval = |v: Option<&str>| v.map(|s| pattern.matches(s));
    Some(match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().map(eval).collect(),
        DataType::LargeUtf8 => array.as_string::<i64>().iter().map(eval).collect(),
        DataType::Utf8View => array.as_string_view().iter().map(eval).collect(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Scalar, StringArray};
    use wasm_bindgen_test::wasm_bindgen_test;

    const VALUES: &[&str] = &[
        "",
        "a",
        "ab",
        "abc",
        "nars",
        "NARS",
        "na%rs",
        "n_rs",
        "x\\y",
        "Émile",
        "émile",
        "aaa",
        "abab",
        "mississippi",
        "%",
        "_",
        "a.b",
        "(a)",
        "[ab]",
        "a*b",
        "\n",
        "straße",
    ];
    const PATTERNS: &[&str] = &[
        "", "%", "_", "a", "a%", "%a", "%a%", "a_c", "na%", "%rs", "n_rs", "na\\%rs", "n\\_rs",
        "x\\\\y", "%ss%pp%", "m%i%i", "a%b%", "%%", "_%_", "ab%ab", "É%", "é%", "a.b", "(a)",
        "[ab]", "a*b", "%\n%", "STRASSE", "straße", "%ß%", "%\\%", "\\_",
    ];

    /// Same answers as arrow's regex-based kernels, over every value and pattern above.
    #[wasm_bindgen_test(unsupported = test)]
    fn agrees_with_arrow() {
        let values = StringArray::from(VALUES.to_vec());
        let mut checked = 0;
        for p in PATTERNS {
            let scalar = Scalar::new(StringArray::from(vec![*p]));
            for ci in [false, true] {
                let want = if ci {
                    arrow_string::like::ilike(&values, &scalar)
                } else {
                    arrow_string::like::like(&values, &scalar)
                }
                .unwrap();
                let got = like(&values, &LikePattern::new(p, ci)).unwrap();
                for (k, v) in VALUES.iter().enumerate() {
                    assert_eq!(
                        got.value(k),
                        want.value(k),
                        "{v:?} {} {p:?}",
                        if ci { "ILIKE" } else { "LIKE" }
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, VALUES.len() * PATTERNS.len() * 2);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn nulls_and_types() {
        let values = StringArray::from(vec![Some("nars"), None]);
        let r = like(&values, &LikePattern::new("n%", false)).unwrap();
        assert!(r.value(0) && r.is_null(1));
        let ints = arrow_array::Int32Array::from(vec![1]);
        assert!(like(&ints, &LikePattern::new("1", false)).is_none());
    }
}
