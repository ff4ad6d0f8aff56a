//! The few JSON writers the HTML report's embedded data needs, appending to a `String`.
//!
//! The data is written by hand rather than built as `serde_json::Value`s because its
//! large parts are per-node number arrays: a `Value` per number would cost tens of bytes
//! of memory each on a million-node tree, text costs a few. Strings go through
//! `serde_json` for escaping, and then every `<`, `>` and `&` becomes a `\u00XX` escape,
//! so no text of the profile (a function named `</script>`) can end the `<script>`
//! element the data sits in. Tests: below.

use std::fmt::Write as _;

/// Appends `s` as a JSON string safe inside an HTML `<script>` element.
pub fn string(out: &mut String, s: &str) {
    let quoted = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
    for c in quoted.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
}

/// Appends `[a,b,...]`.
pub fn numbers(out: &mut String, values: impl IntoIterator<Item = u64>) {
    out.push('[');
    for (i, v) in values.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{v}");
    }
    out.push(']');
}

/// Appends `["a","b",...]`.
pub fn strings<'a>(out: &mut String, values: impl IntoIterator<Item = &'a str>) {
    out.push('[');
    for (i, v) in values.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, v);
    }
    out.push(']');
}

/// Appends `"key":` (after a comma unless `first`).
pub fn key(out: &mut String, name: &str, first: bool) {
    if !first {
        out.push(',');
    }
    string(out, name);
    out.push(':');
}

/// Appends an optional string (`null` when absent).
pub fn opt_string(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.push_str("null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_cannot_close_the_script_element() {
        let mut out = String::new();
        strings(&mut out, ["</script><!--", "a\"b\n&"]);
        assert_eq!(out, r#"["\u003c/script\u003e\u003c!--","a\"b\n\u0026"]"#);
        let back: Vec<String> = serde_json::from_str(&out).unwrap();
        assert_eq!(back, ["</script><!--", "a\"b\n&"]);
    }

    #[test]
    fn numbers_and_keys() {
        let mut out = String::from("{");
        key(&mut out, "n", true);
        numbers(&mut out, [1, 20, u64::MAX]);
        key(&mut out, "s", false);
        opt_string(&mut out, None);
        out.push('}');
        assert_eq!(out, r#"{"n":[1,20,18446744073709551615],"s":null}"#);
    }
}
