//! The tokens of packetdrill's script language. Whitespace and newlines separate tokens and carry no
//! meaning (the grammar is free-form: a system call may span lines); `//` and `/* */` are comments; a
//! backquoted shell command and a `%{ ... }%` code block are single tokens. Every token knows its line
//! and column, so that every error names `file:line:column`.

use std::fmt;

/// A position in the script, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A decimal, hexadecimal or fractional number, as written (`0`, `.01`, `0x70403`, `1.5`).
    Num(String),
    /// A word: letters, digits, `_`, and `-` inside (option names such as `sack-permitted` never
    /// appear; `-` is kept out so that `-1` lexes as a sign and a number).
    Ident(String),
    /// A double-quoted string, escapes undone.
    Str(String),
    /// A backquoted shell command, its text.
    Shell(String),
    /// A `%{ ... }%` code block, its text.
    Code(String),
    /// A header option `--name` or `--name=value`.
    HeaderOption(String, Option<String>),
    /// Punctuation: `...` is one token, every other is one character.
    Punct(&'static str),
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Num(s) | Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Str(s) => write!(f, "string {s:?}"),
            Tok::Shell(_) => f.write_str("a backquoted command"),
            Tok::Code(_) => f.write_str("a %{ }% block"),
            Tok::HeaderOption(n, _) => write!(f, "option --{n}"),
            Tok::Punct(p) => write!(f, "`{p}`"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub loc: Loc,
    /// Byte offset of the token's start and end, to tell adjacent tokens (`S.`) from separated ones.
    pub start: usize,
    pub end: usize,
}

/// A lexical error with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct LexError {
    pub loc: Loc,
    pub msg: String,
}

const PUNCT: &[&str] = &[
    "...", "<", ">", ":", "(", ")", "[", "]", "{", "}", ",", "=", ".", "+", "-", "~", "*", "|", "&", ";", "!", "/",
    "%", "@", "^", "?",
];

/// Splits a script into tokens. Never panics; the first malformed construct is an error.
pub fn lex(src: &str) -> Result<Vec<Token>, LexError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    let loc_at = |i: usize, line: u32, line_start: usize| Loc { line, col: (i - line_start) as u32 + 1 };
    // Newlines inside a multi-line token move the line counter on.
    fn count_lines(s: &[u8], from: usize, to: usize, line: &mut u32, line_start: &mut usize) {
        for (k, &c) in s[from..to].iter().enumerate() {
            if c == b'\n' {
                *line += 1;
                *line_start = from + k + 1;
            }
        }
    }
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
            line_start = i;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let loc = loc_at(i, line, line_start);
        let start = i;
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let Some(end) = find(b, i + 2, b"*/") else {
                return Err(LexError { loc, msg: "unterminated /* comment".into() });
            };
            count_lines(b, i, end, &mut line, &mut line_start);
            i = end + 2;
            continue;
        }
        if c == b'`' {
            let Some(end) = b[i + 1..].iter().position(|&x| x == b'`').map(|p| p + i + 1) else {
                return Err(LexError { loc, msg: "unterminated backquoted command".into() });
            };
            let text = String::from_utf8_lossy(&b[i + 1..end]).into_owned();
            count_lines(b, i, end, &mut line, &mut line_start);
            i = end + 1;
            out.push(Token { tok: Tok::Shell(text), loc, start, end: i });
            continue;
        }
        if c == b'%' && b.get(i + 1) == Some(&b'{') {
            let Some(end) = find(b, i + 2, b"}%") else {
                return Err(LexError { loc, msg: "unterminated %{ code block (no closing }%)".into() });
            };
            let text = String::from_utf8_lossy(&b[i + 2..end]).into_owned();
            count_lines(b, i, end, &mut line, &mut line_start);
            i = end + 2;
            out.push(Token { tok: Tok::Code(text), loc, start, end: i });
            continue;
        }
        if c == b'"' {
            let mut s = String::new();
            let mut j = i + 1;
            loop {
                match b.get(j) {
                    None | Some(b'\n') => return Err(LexError { loc, msg: "unterminated string".into() }),
                    Some(b'"') => break,
                    Some(b'\\') => {
                        match b.get(j + 1) {
                            Some(b'n') => s.push('\n'),
                            Some(b't') => s.push('\t'),
                            Some(b'0') => s.push('\0'),
                            Some(&x) => s.push(x as char),
                            None => return Err(LexError { loc, msg: "unterminated string".into() }),
                        }
                        j += 2;
                    }
                    Some(&x) => {
                        s.push(x as char);
                        j += 1;
                    }
                }
            }
            i = j + 1;
            out.push(Token { tok: Tok::Str(s), loc, start, end: i });
            continue;
        }
        // A header option at the start of a line: `--name=value`.
        if c == b'-' && b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_some_and(|x| x.is_ascii_alphabetic()) {
            let mut j = i + 2;
            while j < b.len() && !b[j].is_ascii_whitespace() {
                j += 1;
            }
            let text = String::from_utf8_lossy(&b[i + 2..j]).into_owned();
            let (name, value) = match text.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (text, None),
            };
            i = j;
            out.push(Token { tok: Tok::HeaderOption(name, value), loc, start, end: i });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(|x| x.is_ascii_digit())) {
            let mut j = i;
            if c == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X')) {
                j += 2;
                while j < b.len() && b[j].is_ascii_hexdigit() {
                    j += 1;
                }
            } else {
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                // A fraction: `.` then a digit (so that `0...0.2` is 0, `...`, 0.2).
                if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(|x| x.is_ascii_digit()) {
                    j += 1;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                }
            }
            // A word that starts with digits (`01234567aabbccdd` in a fast open cookie) stays one word.
            if j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                let text = String::from_utf8_lossy(&b[i..j]).into_owned();
                i = j;
                out.push(Token { tok: Tok::Ident(text), loc, start, end: i });
                continue;
            }
            let text = String::from_utf8_lossy(&b[i..j]).into_owned();
            i = j;
            out.push(Token { tok: Tok::Num(text), loc, start, end: i });
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'$') {
                j += 1;
            }
            let text = String::from_utf8_lossy(&b[i..j]).into_owned();
            i = j;
            out.push(Token { tok: Tok::Ident(text), loc, start, end: i });
            continue;
        }
        if let Some(p) = PUNCT.iter().find(|p| b[i..].starts_with(p.as_bytes())) {
            i += p.len();
            out.push(Token { tok: Tok::Punct(p), loc, start, end: i });
            continue;
        }
        let ch = src[i..].chars().next().unwrap_or('?');
        return Err(LexError { loc, msg: format!("unexpected character {ch:?}") });
    }
    Ok(out)
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..].windows(pat.len()).position(|w| w == pat).map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn times_and_ranges() {
        assert_eq!(
            toks("+0...0.2 +.21~+.215"),
            vec![
                Tok::Punct("+"),
                Tok::Num("0".into()),
                Tok::Punct("..."),
                Tok::Num("0.2".into()),
                Tok::Punct("+"),
                Tok::Num(".21".into()),
                Tok::Punct("~"),
                Tok::Punct("+"),
                Tok::Num(".215".into()),
            ]
        );
    }

    #[test]
    fn blocks_keep_their_lines() {
        let t = lex("%{\nassert 1\n}%\n`a\nb`\n  x").unwrap();
        assert_eq!(t[0].tok, Tok::Code("\nassert 1\n".into()));
        assert_eq!(t[1].loc, Loc { line: 4, col: 1 });
        assert_eq!(t[2].loc, Loc { line: 6, col: 3 });
    }

    #[test]
    fn errors_have_positions() {
        let e = lex("0 `ls").unwrap_err();
        assert_eq!(e.loc, Loc { line: 1, col: 3 });
        assert!(lex("\n  \u{7f}").unwrap_err().loc == Loc { line: 2, col: 3 });
    }
}
