//! Characters as SBCL names and cases them: the names `char-name` gives and
//! `name-char` reads (the ASCII control abbreviations, `Rubout`, Unicode names
//! of the printing ASCII characters, `U+XXXX`), graphic characters, and case
//! mapping, which applies only when a character maps to exactly one character.
//! The printer, FORMAT, the reader functions and the character builtins use it.

/// SBCL's names of the characters below 33 and of Rubout.
const CONTROL_NAMES: [&str; 33] = [
    "Nul", "Soh", "Stx", "Etx", "Eot", "Enq", "Ack", "Bel", "Backspace", "Tab", "Newline", "Vt", "Page", "Return", "So",
    "Si", "Dle", "Dc1", "Dc2", "Dc3", "Dc4", "Nak", "Syn", "Etb", "Can", "Em", "Sub", "Esc", "Fs", "Gs", "Rs", "Us",
    "Space",
];

/// The name `char-name` gives a character, if any.
pub(crate) fn char_name_of(c: char) -> Option<String> {
    let code = c as u32;
    if code < 33 {
        return Some(CONTROL_NAMES[code as usize].to_string());
    }
    if code == 127 {
        return Some("Rubout".to_string());
    }
    if (128..160).contains(&code) {
        return Some(format!("U+{code:04X}"));
    }
    ascii_graphic_name(c)
}

/// The Unicode names SBCL gives the printing ASCII characters.
pub(crate) fn ascii_graphic_name(c: char) -> Option<String> {
    const DIGITS: [&str; 10] = ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"];
    Some(match c {
        'A'..='Z' => format!("LATIN_CAPITAL_LETTER_{c}"),
        'a'..='z' => format!("LATIN_SMALL_LETTER_{}", c.to_ascii_uppercase()),
        '0'..='9' => format!("DIGIT_{}", DIGITS[(c as u8 - b'0') as usize]),
        _ => {
            const PUNCT: &[(char, &str)] = &[
                ('!', "EXCLAMATION_MARK"), ('"', "QUOTATION_MARK"), ('#', "NUMBER_SIGN"), ('$', "DOLLAR_SIGN"),
                ('%', "PERCENT_SIGN"), ('&', "AMPERSAND"), ('\'', "APOSTROPHE"), ('(', "LEFT_PARENTHESIS"),
                (')', "RIGHT_PARENTHESIS"), ('*', "ASTERISK"), ('+', "PLUS_SIGN"), (',', "COMMA"),
                ('-', "HYPHEN-MINUS"), ('.', "FULL_STOP"), ('/', "SOLIDUS"), (':', "COLON"), (';', "SEMICOLON"),
                ('<', "LESS-THAN_SIGN"), ('=', "EQUALS_SIGN"), ('>', "GREATER-THAN_SIGN"), ('?', "QUESTION_MARK"),
                ('@', "COMMERCIAL_AT"), ('[', "LEFT_SQUARE_BRACKET"), ('\\', "REVERSE_SOLIDUS"),
                (']', "RIGHT_SQUARE_BRACKET"), ('^', "CIRCUMFLEX_ACCENT"), ('_', "LOW_LINE"), ('`', "GRAVE_ACCENT"),
                ('{', "LEFT_CURLY_BRACKET"), ('|', "VERTICAL_LINE"), ('}', "RIGHT_CURLY_BRACKET"), ('~', "TILDE"),
            ];
            return PUNCT.iter().find(|(p, _)| *p == c).map(|(_, n)| n.to_string());
        }
    })
}

/// The character a name designates (case-insensitive), as `name-char`.
pub(crate) fn name_char_of(name: &str) -> Option<char> {
    let upper = name.to_ascii_uppercase();
    if let Some(i) = CONTROL_NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)) {
        return char::from_u32(i as u32);
    }
    match upper.as_str() {
        "RUBOUT" | "DELETE" | "DEL" => return Some('\u{7f}'),
        "LINEFEED" | "LF" => return Some('\n'),
        "NULL" => return Some('\0'),
        "ESCAPE" => return Some('\u{1b}'),
        _ => {}
    }
    for code in 33u8..127 {
        if ascii_graphic_name(code as char).is_some_and(|n| n == upper) {
            return Some(code as char);
        }
    }
    if let Some(hex) = upper.strip_prefix("U+") {
        return u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
    }
    let mut it = name.chars();
    match (it.next(), it.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}

pub(crate) fn graphic_char_p(c: char) -> bool {
    let code = c as u32;
    (32..127).contains(&code) || code > 159
}

pub(crate) fn char_upcase(c: char) -> char {
    let mut up = c.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) if u.to_lowercase().eq(std::iter::once(c)) => u,
        _ => c,
    }
}

pub(crate) fn char_downcase(c: char) -> char {
    let mut down = c.to_lowercase();
    match (down.next(), down.next()) {
        (Some(d), None) if d.to_uppercase().eq(std::iter::once(c)) => d,
        _ => c,
    }
}

pub(crate) fn upper_case_p(c: char) -> bool {
    char_downcase(c) != c
}

pub(crate) fn lower_case_p(c: char) -> bool {
    char_upcase(c) != c
}

/// The code case-insensitive comparisons use (SBCL folds to lower case,
/// so `(char-lessp #\a #\_)` is false).
pub(crate) fn fold(c: char) -> u32 {
    char_downcase(c) as u32
}
