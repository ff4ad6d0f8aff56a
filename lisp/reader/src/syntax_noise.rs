//! The dotted-pair syntax of a list's text, for tools that re-lay out source.
//!
//! A re-layout keeps atoms, prefixes and comments as written but prints list structure
//! itself, so it must know which bytes between two items are structure (parentheses, the
//! dot of a tail) rather than data. Only the lexer can tell, which is why this lives here.

use logos::Logos;

use crate::lexer::Token;

/// The byte ranges of the dotted-pair syntax in the text between two items of a list:
/// the dot before a tail, and the `. (` ... `)` of a list written as a tail, which the
/// reader splices (`(a . (b c))` is `(a b c)`). Dropping them keeps the meaning; the
/// printer writes the dot of a real tail itself. Comments are skipped by the lexer, and
/// `#+`/`#-` with their feature expression and (possibly skipped) form are kept whole.
pub fn syntax_noise(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut noise = Vec::new();
    let mut lexer = Token::lexer(text);
    // Datums still to be consumed by `#+`/`#-` (a feature expression and a form each),
    // and the list nesting inside them.
    let mut pending = 0usize;
    let mut depth = 0usize;
    while let Some(token) = lexer.next() {
        let range = lexer.span();
        if pending == 0 {
            match token {
                Ok(Token::Open | Token::Close) => noise.push(range),
                Ok(Token::Atom(_)) if &text[range.clone()] == "." => noise.push(range),
                Ok(Token::HashPlus | Token::HashMinus) => pending = 2,
                _ => {}
            }
            continue;
        }
        let completes_datum = match token {
            Ok(Token::Open | Token::HashParen) => {
                depth += 1;
                false
            }
            Ok(Token::Close) => {
                depth = depth.saturating_sub(1);
                depth == 0
            }
            Ok(Token::HashPlus | Token::HashMinus) => {
                // A conditional as the awaited datum: it fills that slot and awaits a
                // feature expression and a form of its own.
                if depth == 0 {
                    pending += 1;
                }
                false
            }
            Ok(
                Token::Quote
                | Token::HashQuote
                | Token::Backquote
                | Token::Comma
                | Token::CommaAt
                | Token::CommaDot,
            ) => false,
            _ => depth == 0,
        };
        if completes_datum {
            pending -= 1;
        }
    }
    noise
}

