"""Split Common Lisp source text into top-level forms without reading them.

The ANSI test files use reader syntax that some implementations do not
support (`#c(...)`, `#p"..."`, `#.`, feature expressions...).  Reading a
whole file with one implementation's reader would let one unsupported form
hide every later test in the file, so the driver cuts the text into
top-level chunks here and the Lisp harness reads each chunk on its own
(`read-from-string` inside `handler-case`).

The scanner only has to find where each datum ends; it understands the
lexical syntax that can hide a parenthesis: strings, `|...|` escapes,
`\\` single escapes, `#\\x` characters, `;` and `#| |#` comments, and the
dispatching macros that are followed by a datum.
"""

import re

WS = set(" \t\n\r\f\v")
TERMINATING = set("()\";'`,")


class ScanError(Exception):
    pass


def _skip_ws_and_comments(s, i):
    n = len(s)
    while i < n:
        c = s[i]
        if c in WS:
            i += 1
        elif c == ";":
            j = s.find("\n", i)
            i = n if j < 0 else j + 1
        elif s.startswith("#|", i):
            i = _skip_block_comment(s, i)
        else:
            break
    return i


def _skip_block_comment(s, i):
    depth = 0
    n = len(s)
    while i < n:
        if s.startswith("#|", i):
            depth += 1
            i += 2
        elif s.startswith("|#", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    raise ScanError("unterminated #| comment")


def _scan_token(s, i):
    """A symbol or number token, with | | and \\ escapes."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
        elif c == "|":
            j = i + 1
            while j < n and s[j] != "|":
                j += 2 if s[j] == "\\" else 1
            i = j + 1
        elif c in WS or c in TERMINATING:
            break
        else:
            i += 1
    return min(i, n)


def _scan_string(s, i):
    # s[i] == '"'
    n = len(s)
    i += 1
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1
    raise ScanError("unterminated string")


def scan_datum(s, i):
    """Return the index just past the datum starting at or after i."""
    i = _skip_ws_and_comments(s, i)
    n = len(s)
    if i >= n:
        raise ScanError("end of text inside a form")
    c = s[i]
    if c == "(":
        i += 1
        while True:
            i = _skip_ws_and_comments(s, i)
            if i >= n:
                raise ScanError("unbalanced parenthesis")
            if s[i] == ")":
                return i + 1
            i = scan_datum(s, i)
    if c == ")":
        raise ScanError("unexpected )")
    if c == '"':
        return _scan_string(s, i)
    if c in "'`":
        return scan_datum(s, i + 1)
    if c == ",":
        return scan_datum(s, i + 2 if s.startswith(",@", i) or s.startswith(",.", i) else i + 1)
    if c == "#":
        j = i + 1
        while j < n and s[j].isdigit():
            j += 1
        if j >= n:
            raise ScanError("end of text after #")
        d = s[j]
        if d == "\\":
            # the character after #\ is taken literally, then a token may follow
            return _scan_token(s, j + 2)
        if d in "+-":
            k = scan_datum(s, j + 1)  # feature expression
            return scan_datum(s, k)   # the guarded form
        if d in "'.(":
            return scan_datum(s, j + 1 if d != "(" else j)
        if d == "|":
            return _skip_block_comment(s, i)
        if d in "=":
            return scan_datum(s, j + 1)
        if d == "#":
            return j + 1
        if d in "cCaAsSpP":
            return scan_datum(s, j + 1)
        # #:sym #x1F #b101 #o7 #*0101 #r
        return _scan_token(s, j + 1)
    return _scan_token(s, i)


def split_forms(text):
    """Yield (start_line, chunk_text) for every top-level form in text."""
    i = 0
    n = len(text)
    while True:
        i = _skip_ws_and_comments(text, i)
        if i >= n:
            return
        j = scan_datum(text, i)
        yield text.count("\n", 0, i) + 1, text[i:j]
        i = j


_DEFTEST = re.compile(r"\(\s*deftest\s+([^\s()]+)", re.I)


def deftest_name(chunk):
    """The test name of a literal (deftest NAME ...) chunk, upcased, or None."""
    m = _DEFTEST.match(chunk)
    if not m:
        return None
    name = m.group(1)
    if name.startswith("|") and name.endswith("|"):
        return name[1:-1]
    return name.upper()


def lisp_string(text):
    """Text as a Common Lisp string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
