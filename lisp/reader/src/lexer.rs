//! The logos lexer: splits source text into the tokens of the standard CL readtable.
//!
//! Its one job is to find where each token starts and ends; it never allocates and never
//! interprets a token. Like the CL reader, it lexes one *token* (constituents plus `\` and
//! `|...|` escapes) and leaves the number/symbol/package-marker decision to `token.rs`,
//! because separate number and symbol patterns would fight over inputs such as `1+`.
//!
//! Invariants:
//! - every callback bumps only to UTF-8 boundaries (it stops at ASCII bytes or at the end);
//! - every way the input can end in the middle of a token is a distinct `LexError`
//!   variant, so the parser can report it as Incomplete and the REPL keeps reading;
//! - whitespace is exactly the CL standard whitespace[2]: space, tab, newline, return,
//!   page (form feed). Other control characters are constituents, rejected later as
//!   invalid characters in a token.
//!
//! Tests: the `tests` module below (token boundaries, lexer errors); `src/parser.rs` and
//! `tests/` exercise it through the public API.

use logos::{Lexer, Logos, Skip};

/// How a lexer callback failed. The parser turns these into `ReadError`s with positions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LexError {
    /// No pattern matched; cannot happen with the current patterns, kept for logos.
    #[default]
    Unexpected,
    /// `"` without its closing `"`.
    UnterminatedString,
    /// `#|` without its closing `|#` (nesting counted).
    UnterminatedComment,
    /// `|` inside a token without its closing `|`.
    UnterminatedMultipleEscape,
    /// `\` as the last character of the input, inside a token.
    EscapeAtEnd,
    /// `#` as the last character of the input.
    HashAtEnd,
    /// `#\` as the last characters of the input.
    CharAtEnd,
    /// `#` followed by a dispatch character this reader does not implement.
    UnknownDispatch,
}

/// Facts about a token's text that the classifier needs without rescanning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TokenText {
    /// Byte offset (relative to the lexeme start) where the token text begins,
    /// i.e. after a prefix such as `#:` or `#x` or `#16r`.
    pub(crate) body_start: u32,
    /// True when the text contains `\` or `|`: it is then never a number and its escaped
    /// characters keep their case.
    pub(crate) escaped: bool,
}

/// A radix prefix `#x` `#b` `#o` `#NNr`. `radix` is 0 when NN is not a number in 2..=36.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RadixToken {
    pub(crate) radix: u32,
    pub(crate) text: TokenText,
}

#[derive(Logos, Clone, Copy, Debug, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\n\r\x0C]+")]
#[logos(skip(r";[^\n]*", allow_greedy = true))]
pub(crate) enum Token {
    #[token("(")]
    Open,
    #[token(")")]
    Close,
    #[token("'")]
    Quote,
    #[token("`")]
    Backquote,
    #[token(",")]
    Comma,
    #[token(",@")]
    CommaAt,
    /// `,.` is CL's destructive splice; it reads like `,@`.
    #[token(",.")]
    CommaDot,
    #[token("#'")]
    HashQuote,
    #[token("#(")]
    HashParen,
    #[token("#+")]
    HashPlus,
    #[token("#-")]
    HashMinus,
    /// `#*` or `#n*` and the token after it (its bits, checked by the parser).
    #[regex(r"#[0-9]*\*", bit_vector)]
    BitVector,
    /// `#nA`: the next datum is the contents of an array of rank n.
    #[regex("#[0-9]+[aA]")]
    HashArray,
    /// `#C` / `#c`: the next datum is a list of a complex number's two parts.
    #[regex("#[cC]")]
    HashC,
    #[token("#|", block_comment)]
    BlockComment,
    /// `#` followed by anything not covered above: always an error from the callback.
    #[token("#", unknown_dispatch)]
    HashUnknown,
    /// A string literal, quotes included. The flag says whether it contains `\`.
    #[token("\"", string)]
    Str(bool),
    /// `#\` and the character or character name after it.
    #[token("#\\", character)]
    Char,
    /// `#:` and the token after it (possibly empty).
    #[token("#:", |lex| token_after_prefix(lex, 2))]
    Uninterned(TokenText),
    #[regex("#[xXbBoO]", radix_letter)]
    #[regex("#[0-9]+[rR]", radix_number)]
    Radix(RadixToken),
    /// A token: a symbol, a number, or the dot of a dotted list. The first pattern is the
    /// fast path for tokens without escapes; the callback extends it over escapes.
    #[regex(r#"[^ \t\n\r\x0C()'"`,;#|\\][^ \t\n\r\x0C()'"`,;|\\]*"#, atom)]
    #[regex(r"[|\\]", atom)]
    Atom(TokenText),
}

/// True for bytes that end a token: whitespace and the terminating macro characters.
#[inline]
pub(crate) fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | 0x0C | b'(' | b')' | b'\'' | b'"' | b'`' | b',' | b';'
    )
}

/// Scans token text starting at `bytes[0]` up to the next delimiter, stepping over `\x`
/// and `|...|` escapes. Returns the length and whether an escape was seen.
fn scan_token(bytes: &[u8]) -> Result<(usize, bool), LexError> {
    let mut i = 0;
    let mut escaped = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                escaped = true;
                i = skip_escaped_char(bytes, i + 1)?;
            }
            b'|' => {
                escaped = true;
                i = scan_multiple_escape(bytes, i + 1)?;
            }
            b if is_delimiter(b) => break,
            _ => i += 1,
        }
    }
    Ok((i, escaped))
}

/// `bytes[at]` is the character after a `\`; returns the index after that character.
fn skip_escaped_char(bytes: &[u8], at: usize) -> Result<usize, LexError> {
    match bytes.get(at) {
        None => Err(LexError::EscapeAtEnd),
        Some(&b) => Ok(at + utf8_len(b)),
    }
}

/// `bytes[at..]` is inside `|...|`; returns the index after the closing `|`.
fn scan_multiple_escape(bytes: &[u8], mut at: usize) -> Result<usize, LexError> {
    while at < bytes.len() {
        match bytes[at] {
            b'|' => return Ok(at + 1),
            b'\\' => {
                at = skip_escaped_char(bytes, at + 1)
                    .map_err(|_| LexError::UnterminatedMultipleEscape)?
            }
            _ => at += 1,
        }
    }
    Err(LexError::UnterminatedMultipleEscape)
}

/// Length of the UTF-8 sequence that starts with `b`; continuation bytes count as 1 so a
/// caller can never land inside a character by using it on a lead byte.
#[inline]
fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

fn atom(lex: &mut Lexer<Token>) -> Result<TokenText, LexError> {
    let matched = lex.slice().as_bytes();
    let rem = lex.remainder().as_bytes();
    let mut escaped = false;
    let mut extra = 0;
    // The single-character pattern matched an escape character: finish that escape first.
    match matched {
        b"|" => {
            escaped = true;
            extra = scan_multiple_escape(rem, 0)?;
        }
        b"\\" => {
            escaped = true;
            extra = skip_escaped_char(rem, 0)?;
        }
        _ => {}
    }
    let (more, more_escaped) = scan_token(&rem[extra..])?;
    lex.bump(extra + more);
    Ok(TokenText {
        body_start: 0,
        escaped: escaped || more_escaped,
    })
}

fn token_after_prefix(lex: &mut Lexer<Token>, prefix_len: u32) -> Result<TokenText, LexError> {
    let (len, escaped) = scan_token(lex.remainder().as_bytes())?;
    lex.bump(len);
    Ok(TokenText {
        body_start: prefix_len,
        escaped,
    })
}

fn radix_letter(lex: &mut Lexer<Token>) -> Result<RadixToken, LexError> {
    let radix = match lex.slice().as_bytes()[1] {
        b'x' | b'X' => 16,
        b'b' | b'B' => 2,
        _ => 8,
    };
    let text = token_after_prefix(lex, 2)?;
    Ok(RadixToken { radix, text })
}

fn radix_number(lex: &mut Lexer<Token>) -> Result<RadixToken, LexError> {
    let slice = lex.slice();
    let digits = &slice[1..slice.len() - 1];
    let radix = match digits.parse::<u32>() {
        Ok(r) if (2..=36).contains(&r) => r,
        _ => 0,
    };
    let text = token_after_prefix(lex, slice.len() as u32)?;
    Ok(RadixToken { radix, text })
}

fn string(lex: &mut Lexer<Token>) -> Result<bool, LexError> {
    let bytes = lex.remainder().as_bytes();
    let mut escaped = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                lex.bump(i + 1);
                return Ok(escaped);
            }
            b'\\' => {
                escaped = true;
                i = skip_escaped_char(bytes, i + 1).map_err(|_| LexError::UnterminatedString)?;
            }
            _ => i += 1,
        }
    }
    Err(LexError::UnterminatedString)
}

/// `#\` then one character (any, even whitespace or a parenthesis), then any constituent
/// characters that follow, which together form a character name such as `Space`.
fn character(lex: &mut Lexer<Token>) -> Result<(), LexError> {
    let bytes = lex.remainder().as_bytes();
    let Some(&first) = bytes.first() else {
        return Err(LexError::CharAtEnd);
    };
    let mut i = utf8_len(first).min(bytes.len());
    while i < bytes.len() && !is_delimiter(bytes[i]) {
        i += 1;
    }
    lex.bump(i);
    Ok(())
}

/// Covers the bits after `#*` up to the next delimiter (the parser checks them).
fn bit_vector(lex: &mut Lexer<Token>) {
    let bytes = lex.remainder().as_bytes();
    let mut i = 0;
    while i < bytes.len() && !is_delimiter(bytes[i]) {
        i += 1;
    }
    lex.bump(i);
}

fn block_comment(lex: &mut Lexer<Token>) -> Result<Skip, LexError> {
    let bytes = lex.remainder().as_bytes();
    let mut depth = 1usize;
    let mut i = 0;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'|', b'#') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    lex.bump(i);
                    return Ok(Skip);
                }
            }
            (b'#', b'|') => {
                depth += 1;
                i += 2;
            }
            _ => i += 1,
        }
    }
    Err(LexError::UnterminatedComment)
}

/// Covers the dispatch character (and a numeric argument before it) in the error span so
/// the message can name it, e.g. `#S` or `#2A`.
fn unknown_dispatch(lex: &mut Lexer<Token>) -> Result<Skip, LexError> {
    let bytes = lex.remainder().as_bytes();
    let mut i = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    match bytes.get(i) {
        // `#` or `#12` at the end: more input could complete the dispatch.
        None => {
            lex.bump(i);
            Err(LexError::HashAtEnd)
        }
        Some(&b) => {
            // Do not swallow a delimiter: `#)` must leave the `)` for the next token
            // when the error is ignored under `#+`/`#-` suppression.
            let len = if is_delimiter(b) { 0 } else { utf8_len(b) };
            lex.bump((i + len).min(bytes.len()));
            Err(LexError::UnknownDispatch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(src: &str) -> Vec<(Result<Token, LexError>, &str)> {
        let mut lexer = Token::lexer(src);
        let mut out = Vec::new();
        while let Some(tok) = lexer.next() {
            out.push((tok, lexer.slice()));
            if tok.is_err() {
                break;
            }
        }
        out
    }

    fn check(src: &str, expected: &str) {
        let actual = lex(src)
            .iter()
            .map(|(tok, text)| match tok {
                Ok(Token::Atom(t)) if t.escaped => format!("Atom*[{text}]"),
                Ok(Token::Atom(_)) => format!("Atom[{text}]"),
                Ok(t) => format!("{t:?}[{text}]"),
                Err(e) => format!("ERR {e:?}[{text}]"),
            })
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(actual, expected, "lexing {src:?}");
    }

    #[test]
    fn tokens() {
        check("(a . b)", "Open[(] Atom[a] Atom[.] Atom[b] Close[)]");
        check("1+ -5 a#b", "Atom[1+] Atom[-5] Atom[a#b]");
        check("foo|Bar Baz|qux x", "Atom*[foo|Bar Baz|qux] Atom[x]");
        check(r"a\ b|c\|d| e", r"Atom*[a\ b|c\|d|] Atom[e]");
        check(r"\(x", r"Atom*[\(x]");
        // `#` is a non-terminating macro character: inside a token it is a constituent.
        check(
            "'a`b,c,@d,.e #'f e#'f",
            "Quote['] Atom[a] Backquote[`] Atom[b] Comma[,] Atom[c] CommaAt[,@] Atom[d] CommaDot[,.] Atom[e] HashQuote[#'] Atom[f] Atom[e#] Quote['] Atom[f]",
        );
        check(
            "#(1) #+x #-y",
            "HashParen[#(] Atom[1] Close[)] HashPlus[#+] Atom[x] HashMinus[#-] Atom[y]",
        );
        check(
            "#\\( #\\Space) #\\λx #\\ ",
            "Char[#\\(] Char[#\\Space] Close[)] Char[#\\λx] Char[#\\ ]",
        );
        check(
            "#:foo #: x",
            "Uninterned(TokenText { body_start: 2, escaped: false })[#:foo] Uninterned(TokenText { body_start: 2, escaped: false })[#:] Atom[x]",
        );
        check(
            "\"a\\\"b\" \"c\"",
            "Str(true)[\"a\\\"b\"] Str(false)[\"c\"]",
        );
        check(
            "a ; comment\n b #| x #| y |# z |# c",
            "Atom[a] Atom[b] Atom[c]",
        );
    }

    #[test]
    fn radix_tokens() {
        check(
            "#xFF #b-101 #36rZZ #1r0",
            "Radix(RadixToken { radix: 16, text: TokenText { body_start: 2, escaped: false } })[#xFF] Radix(RadixToken { radix: 2, text: TokenText { body_start: 2, escaped: false } })[#b-101] Radix(RadixToken { radix: 36, text: TokenText { body_start: 4, escaped: false } })[#36rZZ] Radix(RadixToken { radix: 0, text: TokenText { body_start: 3, escaped: false } })[#1r0]",
        );
    }

    #[test]
    fn errors() {
        check("\"abc", "ERR UnterminatedString[\"]");
        check("#| a #| b |#", "ERR UnterminatedComment[#|]");
        check("a|bc", "ERR UnterminatedMultipleEscape[a]");
        check("ab\\", "ERR EscapeAtEnd[ab]");
        check("#", "ERR HashAtEnd[#]");
        check("#\\", "ERR CharAtEnd[#\\]");
        check("#S(a)", "ERR UnknownDispatch[#S]");
        check("#2Q", "ERR UnknownDispatch[#2Q]");
        check("#)", "ERR UnknownDispatch[#]");
    }
}
