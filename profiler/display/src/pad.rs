//! Padding text to a column width, for every table of the display.
//!
//! `format!("{s:>w$}")` panics when `w` exceeds 65,535 ("Formatting argument out of
//! range"), and widths here come from the data: a function named with 70,000
//! characters widens its column that much. These helpers pad by hand, so no name,
//! however long, can make a report panic. Widths count characters, as `format!` does.

/// Appends `s` right-aligned in `w` columns.
pub fn right(out: &mut String, s: &str, w: usize) {
    out.extend(std::iter::repeat_n(' ', w.saturating_sub(s.chars().count())));
    out.push_str(s);
}

/// Appends `s` left-aligned in `w` columns.
pub fn left(out: &mut String, s: &str, w: usize) {
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', w.saturating_sub(s.chars().count())));
}

#[cfg(test)]
mod tests {
    #[test]
    fn pads_like_format_and_takes_any_width() {
        let mut s = String::new();
        super::right(&mut s, "ab", 4);
        super::left(&mut s, "é", 3);
        assert_eq!(s, format!("{:>4}{:<3}", "ab", "é"));
        let mut wide = String::new();
        super::left(&mut wide, "f", 70_000);
        assert_eq!(wide.len(), 70_000);
        let mut long = String::new();
        super::right(&mut long, &"x".repeat(70_000), 3);
        assert_eq!(long.len(), 70_000, "text longer than the width is kept whole");
    }
}
