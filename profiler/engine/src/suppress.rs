//! Leak suppressions: function-name patterns whose lost blocks are counted apart, as
//! valgrind's and LeakSanitizer's suppressions are. A pattern is a name with `*`
//! wildcards; a lost block is suppressed when any function on its calling context
//! matches one. libmprof's leak gate applies them inside the process (to names from
//! the symbol tables), `mprof` when it symbolizes a profile (to the full names).

/// Functions whose never-freed blocks are the C library's own, kept until exit.
/// (glibc's internal `__GI_` aliases are how its DWARF names some of them.) The
/// thread-local storage vectors of ended threads stay in pthread's stack cache, which
/// is not scanned.
pub const DEFAULT_SUPPRESSIONS: &[&str] = &[
    "_IO_file_doallocate",
    "__GI__IO_file_doallocate",
    "_nl_*",
    "__gconv_*",
    "__libc_setlocale",
    "setlocale",
    "__nss_*",
    "_dl_*",
    "__GI__dl_*",
    "allocate_dtv",
    "__res_*",
];

/// Whether `name` matches `pattern` (`*` matches any run of characters).
pub fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(at) => rest = &rest[at + mid.len()..],
            None => return false,
        }
    }
    true
}

/// The patterns in force: the defaults, plus `setting` (comma-separated, as
/// `MPROF_SUPPRESS`; a leading `-` replaces the defaults instead of extending them).
pub fn patterns(setting: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = DEFAULT_SUPPRESSIONS.iter().map(|s| s.to_string()).collect();
    if let Some(s) = setting {
        let s = match s.strip_prefix('-') {
            Some(rest) => {
                out.clear();
                rest
            }
            None => s,
        };
        out.extend(s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(String::from));
    }
    out
}

/// Whether any of `patterns` matches `name`.
pub fn any_matches(patterns: &[String], name: &str) -> bool {
    patterns.iter().any(|p| matches(p, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_globs() {
        assert!(matches("_nl_*", "_nl_load_locale"));
        assert!(matches("*alloc*", "xmalloc_failed"));
        assert!(matches("main", "main"));
        assert!(!matches("main", "domain"));
        assert!(!matches("_nl_*", "nl_x"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXcYYb"));
    }

    #[test]
    fn settings_extend_or_replace_the_defaults() {
        assert_eq!(patterns(None).len(), DEFAULT_SUPPRESSIONS.len());
        let extended = patterns(Some("my_cache_*, other"));
        assert_eq!(extended.len(), DEFAULT_SUPPRESSIONS.len() + 2);
        assert_eq!(patterns(Some("-only_this")), ["only_this"]);
    }
}
