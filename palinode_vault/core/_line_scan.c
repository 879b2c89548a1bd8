/* The line scanner of core/line_scan.py in C, for the notes it is sure of.

   `scan(body)` returns what line_scan.scan returns -- (links, headings, code) -- or False when it
   is not sure, and then the Python scanner reads the note (which may in turn hand it to
   markdown-it). It follows line_scan.py statement by statement, each regular expression written
   out as the loop it amounts to (the comments name them), and gives up on everything else:
   carriage returns, form feeds and vertical tabs anywhere in the note, an HTML block inside a list
   or quote, an inline HTML comment with a '-' inside, and a tab past a line's indentation (HTML
   blocks at the top level it skips as the Python scanner does). tests/test_core_line_scan_c.py checks that whenever
   it answers, it answers as line_scan.py does (drawn notes and the help vault in every
   language), and the parse tests check both against markdown-it. Offsets are code points of the Python string, as in Python;
   character classes use the same Unicode tables as str.isdigit, str.isalpha, str.isspace and re.

   `links(...)` then turns the scanner's raw links into core/note.py's Link tuples, as
   note.body_links_in_python does (compared in the same test file), or returns None for a note
   whose markdown links need urllib's unquote.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t size;
} Text;

#define CH(t, k) PyUnicode_READ((t)->kind, (t)->data, (k))

typedef struct {
    PyObject *links, *headings, *code;
    PyObject *wiki, *embed, *md, *md_embed;
} Out;

/* Thrown as a return value: -1 a Python error, 1 not sure, 0 fine. */
#define NOT_SURE 1

static int is_space(Py_UCS4 c) { return Py_UNICODE_ISSPACE(c); }

/* markdown-it's MD_TRIM_CHARS (whitespace that str.strip(MD_TRIM_CHARS) removes around cells). */
static int is_trim(Py_UCS4 c)
{
    switch (c) {
    case '\t': case '\n': case 0x0b: case 0x0c: case '\r': case ' ': case 0xa0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
        return 1;
    default:
        return c >= 0x2000 && c <= 0x200a;
    }
}

static int is_ascii_punct(Py_UCS4 c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

/* `_SPECIAL` = `[\[`<\\]`: where the inline scan stops. */
static int is_special(Py_UCS4 c) { return c == '[' || c == '`' || c == '<' || c == '\\'; }

static int in_set(Py_UCS4 c, const char *set)
{
    if (c > 127 || c == 0)
        return 0;
    return strchr(set, (int)c) != NULL;
}

/* Leading spaces of [s, e). */
static Py_ssize_t lead_spaces(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t k = s;
    while (k < e && CH(t, k) == ' ')
        k++;
    return k - s;
}

static int blank(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    for (Py_ssize_t k = s; k < e; k++)
        if (!is_space(CH(t, k)))
            return 0;
    return 1; /* `not line or line.isspace()` */
}

static Py_ssize_t find(const Text *t, Py_UCS4 a, Py_UCS4 b, Py_ssize_t from, Py_ssize_t to)
{
    /* the first k in [from, to) where the text reads a (then b, when b is not 0) */
    for (Py_ssize_t k = from; k < to; k++)
        if (CH(t, k) == a && (b == 0 || (k + 1 < to && CH(t, k + 1) == b)))
            return k;
    return -1;
}

static Py_ssize_t rfind2(const Text *t, Py_UCS4 a, Py_UCS4 b, Py_ssize_t from, Py_ssize_t to)
{
    for (Py_ssize_t k = to - 2; k >= from; k--)
        if (CH(t, k) == a && CH(t, k + 1) == b)
            return k;
    return -1;
}

/* A list item's marker at k < e, `[-*+]|\d{1,max_digits}[.)]` (`\d+` when max_digits is 0):
   the index after it, or -1. */
static Py_ssize_t list_marker(const Text *t, Py_ssize_t k, Py_ssize_t e, Py_ssize_t max_digits)
{
    Py_UCS4 c = CH(t, k);
    if (c == '-' || c == '*' || c == '+')
        return k + 1;
    Py_ssize_t d = k;
    while (k < e && Py_UNICODE_ISDECIMAL(CH(t, k)))
        k++;
    if (k == d || (max_digits && k - d > max_digits) || k >= e || (CH(t, k) != '.' && CH(t, k) != ')'))
        return -1;
    return k + 1;
}

/* A marker of a list item or quote at k: `[-*+]|\d+[.)]` followed by [ \t]+, or `>[ \t]*`;
   the index after it (and its spaces), or -1. */
static Py_ssize_t container_marker(const Text *t, Py_ssize_t k, Py_ssize_t e)
{
    if (k >= e)
        return -1;
    if (CH(t, k) == '>') {
        k++;
        while (k < e && (CH(t, k) == ' ' || CH(t, k) == '\t'))
            k++;
        return k;
    }
    k = list_marker(t, k, e, 0);
    if (k < 0 || k >= e || (CH(t, k) != ' ' && CH(t, k) != '\t'))
        return -1;
    while (k < e && (CH(t, k) == ' ' || CH(t, k) == '\t'))
        k++;
    return k;
}

/* `_CONTAINER_RUN` = ` *(?:(?:[-*+]|\d+[.)])[ \t]+|>[ \t]*)+` at s: its end (-1: no match) and
   the number of markers (each can match only one way, so the run is the longest). */
static Py_ssize_t container_run(const Text *t, Py_ssize_t s, Py_ssize_t e, int *count)
{
    Py_ssize_t k = s + lead_spaces(t, s, e);
    int n = 0;
    for (;;) {
        Py_ssize_t next = container_marker(t, k, e);
        if (next < 0)
            break;
        k = next;
        n++;
    }
    *count = n;
    return n ? k : -1;
}

/* The tail of `_LINK_DEF` after its '[': `(?:[^\]\\]|\\.)*(?:\]:|\\?$)` from k. */
static int link_def_tail(const Text *t, Py_ssize_t k, Py_ssize_t e)
{
    while (k < e) {
        Py_UCS4 c = CH(t, k);
        if (c == ']')
            return k + 1 < e && CH(t, k + 1) == ':';
        if (c == '\\') {
            if (k + 1 >= e)
                return 1; /* a backslash ending the line: the label goes on below */
            k += 2;
            continue;
        }
        k++;
    }
    return 1;
}

/* `_LINK_DEF.match` = ` {0,3}\[(?:[^\]\\]|\\.)*(?:\]:|\\?$)` */
static int link_def(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t lead = lead_spaces(t, s, e);
    if (lead > 3 || s + lead >= e || CH(t, s + lead) != '[')
        return 0;
    return link_def_tail(t, s + lead + 1, e);
}

/* `_SETEXT.fullmatch` = ` {0,3}(?:=+|-+)[ \t]*` */
static int setext(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t k = s + lead_spaces(t, s, e);
    if (k - s > 3 || k >= e || (CH(t, k) != '=' && CH(t, k) != '-'))
        return 0;
    Py_UCS4 c = CH(t, k);
    while (k < e && CH(t, k) == c)
        k++;
    while (k < e && (CH(t, k) == ' ' || CH(t, k) == '\t'))
        k++;
    return k == e;
}

/* `_THEMATIC_BREAK.fullmatch` = ` {0,3}(?:(?:\*[ ]*){3,}|(?:-[ ]*){3,}|(?:_[ ]*){3,})` */
static int thematic_break(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t k = s + lead_spaces(t, s, e);
    if (k - s > 3 || k >= e)
        return 0;
    Py_UCS4 c = CH(t, k);
    if (c != '*' && c != '-' && c != '_')
        return 0;
    int n = 0;
    for (; k < e; k++) {
        Py_UCS4 d = CH(t, k);
        if (d == c)
            n++;
        else if (d != ' ')
            return 0;
    }
    return n >= 3;
}

/* `_DELIMITER_ROW.fullmatch` = `[ >]*(?!-[ \t])[|:-][|: \t-]*` */
static int delimiter_row(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t k = s;
    while (k < e && (CH(t, k) == ' ' || CH(t, k) == '>'))
        k++;
    if (k >= e)
        return 0;
    Py_UCS4 c = CH(t, k);
    if (c == '-' && k + 1 < e && (CH(t, k + 1) == ' ' || CH(t, k + 1) == '\t'))
        return 0;
    if (c != '|' && c != ':' && c != '-')
        return 0;
    for (k++; k < e; k++)
        if (!in_set(CH(t, k), "|: \t-"))
            return 0;
    return 1;
}

/* `_CONTAINER_START.match` = ` {0,3}(?:>|(?:[-*+]|\d{1,9}[.)])(?: |$))` at k. */
static int container_start(const Text *t, Py_ssize_t k, Py_ssize_t e)
{
    Py_ssize_t lead = lead_spaces(t, k, e);
    if (lead > 3)
        return 0;
    k += lead;
    if (k >= e)
        return 0;
    if (CH(t, k) == '>')
        return 1;
    k = list_marker(t, k, e, 9);
    return k >= 0 && (k == e || CH(t, k) == ' ');
}

/* `_content_indent`: the column where a list item's content starts, or -1 (None). */
static Py_ssize_t content_indent(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    /* `_LIST_ITEM` = ` {0,3}([-*+]|\d{1,9}[.)])( *)` */
    Py_ssize_t k = s + lead_spaces(t, s, e);
    if (k - s > 3 || k >= e)
        return -1;
    k = list_marker(t, k, e, 9);
    if (k < 0)
        return -1;
    Py_ssize_t spaces = lead_spaces(t, k, e);
    Py_ssize_t end = k + spaces;
    if ((end < e && CH(t, end) == '>') || container_start(t, end, e))
        return -1;
    if (end == e)
        return -1; /* an empty item */
    return spaces <= 4 ? end - s : -1;
}

/* `_ATX_OPEN.match` = `#{1,6}(?:[ \t]|$)` at k */
static int atx_open(const Text *t, Py_ssize_t k, Py_ssize_t e)
{
    Py_ssize_t h = k;
    while (k < e && CH(t, k) == '#')
        k++;
    if (k == h || k - h > 6)
        return 0;
    return k == e || CH(t, k) == ' ' || CH(t, k) == '\t';
}

/* A fence's run at k (` {0,3}` already skipped by the caller when it applies):
   `(`{3,}(?=[^`]*$)|~{3,})`; its length, or 0. */
static Py_ssize_t fence_run(const Text *t, Py_ssize_t k, Py_ssize_t e)
{
    if (k >= e)
        return 0;
    Py_UCS4 c = CH(t, k);
    if (c != '`' && c != '~')
        return 0;
    Py_ssize_t r = k;
    while (r < e && CH(t, r) == c)
        r++;
    if (r - k < 3)
        return 0;
    if (c == '`' && find(t, '`', 0, r, e) != -1)
        return 0;
    return r - k;
}

/* `_FENCE_OPEN.match` = `^ {0,3}(fence run)` from s: the run's start (its length in *len), or -1 */
static Py_ssize_t fence_open(const Text *t, Py_ssize_t s, Py_ssize_t e, Py_ssize_t *len)
{
    Py_ssize_t lead = lead_spaces(t, s, e);
    if (lead > 3)
        return -1;
    *len = fence_run(t, s + lead, e);
    return *len ? s + lead : -1;
}

/* Whether [s, e) holds only `c` and spaces/tabs after `rest.rstrip(" \t").strip(c)`: true when
   the line from s is the run of c and nothing else but trailing spaces or tabs. */
static int only_run(const Text *t, Py_ssize_t s, Py_ssize_t e, Py_UCS4 c)
{
    while (e > s && (CH(t, e - 1) == ' ' || CH(t, e - 1) == '\t'))
        e--;
    for (Py_ssize_t k = s; k < e; k++)
        if (CH(t, k) != c)
            return 0;
    return 1;
}

static int starts_with_run(const Text *t, Py_ssize_t s, Py_ssize_t e, Py_UCS4 c, Py_ssize_t n)
{
    if (e - s < n)
        return 0;
    for (Py_ssize_t k = s; k < s + n; k++)
        if (CH(t, k) != c)
            return 0;
    return 1;
}

static int append(PyObject *list, PyObject *item)
{
    if (item == NULL)
        return -1;
    int r = PyList_Append(list, item);
    Py_DECREF(item);
    return r;
}

static int add_code(Out *o, Py_ssize_t a, Py_ssize_t b)
{
    return append(o->code, Py_BuildValue("(nn)", a, b));
}

static PyObject *substring(PyObject *body, Py_ssize_t a, Py_ssize_t b)
{
    return PyUnicode_Substring(body, a, b);
}

/* `_LINK_TAIL.match` at k, the '(' after a link's text:
   `\( *(?:<([^<>\n\\]*)>|((?:[^()\s<>\\]|\([^()\s<>\\]*\))*))(?: +\"[^\"\\\n]*\")? *\)`
   Its end (or -1) and the destination's range. */
static Py_ssize_t link_tail(const Text *t, Py_ssize_t k, Py_ssize_t e, Py_ssize_t *ds, Py_ssize_t *de)
{
    if (k >= e || CH(t, k) != '(')
        return -1;
    k++;
    while (k < e && CH(t, k) == ' ')
        k++;
    if (k < e && CH(t, k) == '<') {
        Py_ssize_t a = k + 1, m = a;
        while (m < e && !in_set(CH(t, m), "<>\n\\"))
            m++;
        if (m < e && CH(t, m) == '>') {
            *ds = a;
            *de = m;
            k = m + 1;
            goto title;
        }
        return -1; /* the other branch matches nothing, and then '<' is neither title nor ')' */
    }
    *ds = k;
    for (;;) {
        if (k >= e)
            break;
        Py_UCS4 c = CH(t, k);
        if (c == '(') {
            Py_ssize_t m = k + 1;
            while (m < e && !in_set(CH(t, m), "()<>\\") && !is_space(CH(t, m)))
                m++;
            if (m < e && CH(t, m) == ')') {
                k = m + 1;
                continue;
            }
            break;
        }
        if (c == ')' || c == '<' || c == '>' || c == '\\' || is_space(c))
            break;
        k++;
    }
    *de = k;
title:
    {
        Py_ssize_t m = k;
        while (m < e && CH(t, m) == ' ')
            m++;
        if (m > k && m < e && CH(t, m) == '"') {
            Py_ssize_t q = m + 1;
            while (q < e && !in_set(CH(t, q), "\"\\\n"))
                q++;
            if (q < e && CH(t, q) == '"') {
                Py_ssize_t r = q + 1;
                while (r < e && CH(t, r) == ' ')
                    r++;
                if (r < e && CH(t, r) == ')')
                    return r + 1;
            }
        }
        while (k < e && CH(t, k) == ' ')
            k++;
        return k < e && CH(t, k) == ')' ? k + 1 : -1;
    }
}

/* `_SIMPLE_MD_LINK.match` at i: `\[([^\[\]`<\\\n]*)\]` then the tail. */
static Py_ssize_t simple_md_link(const Text *t, Py_ssize_t i, Py_ssize_t e, Py_ssize_t *ds, Py_ssize_t *de)
{
    Py_ssize_t k = i + 1;
    while (k < e && !in_set(CH(t, k), "[]`<\\\n"))
        k++;
    if (k >= e || CH(t, k) != ']')
        return -1;
    return link_tail(t, k + 1, e, ds, de);
}

/* `_code_span_end`: the end of the code span whose opening backticks start at i, or -1 when no run
   of as many closes it before e. */
static Py_ssize_t code_span_end(const Text *t, Py_ssize_t i, Py_ssize_t e)
{
    Py_ssize_t run = i;
    while (run < e && CH(t, run) == '`')
        run++;
    Py_ssize_t width = run - i, j = run;
    for (;;) {
        /* j = line.find("`" * width, j): the first run of at least `width` backticks
           (shorter runs skipped whole, so a hostile line costs one pass, not one per run) */
        Py_ssize_t f = -1;
        for (Py_ssize_t k = j; k < e;) {
            if (CH(t, k) != '`') {
                k++;
                continue;
            }
            Py_ssize_t r = k;
            while (r < e && CH(t, r) == '`')
                r++;
            if (r - k >= width) {
                f = k;
                break;
            }
            k = r;
        }
        if (f == -1)
            return -1;
        j = f;
        Py_ssize_t k = j + width;
        if ((k >= e || CH(t, k) != '`') && CH(t, j - 1) != '`')
            return k;
        while (j < e && CH(t, j) == '`')
            j++;
    }
}

/* `_link_with_code` at i: the end of a link whose text holds code spans between plain text (the
   spans' ranges in spans[], their number in *nspans, at most `max`), or -1. */
static Py_ssize_t link_with_code(const Text *t, Py_ssize_t i, Py_ssize_t e, Py_ssize_t *ds, Py_ssize_t *de,
                                 Py_ssize_t *spans, Py_ssize_t max, Py_ssize_t *nspans)
{
    Py_ssize_t k = i + 1, n = 0;
    while (k < e && CH(t, k) != ']') {
        Py_UCS4 c = CH(t, k);
        if (c == '`') {
            Py_ssize_t end = code_span_end(t, k, e);
            if (end < 0 || n == max)
                return -1; /* more spans than room: the Python scanner reads it */
            spans[2 * n] = k, spans[2 * n + 1] = end, n++;
            k = end;
        } else if (c == '[' || c == '<' || c == '\\')
            return -1;
        else
            k++;
    }
    if (!n || k >= e)
        return -1;
    *nspans = n;
    return link_tail(t, k + 1, e, ds, de);
}

static int ascii_alpha(Py_UCS4 c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

static int ascii_alnum(Py_UCS4 c) { return ascii_alpha(c) || (c >= '0' && c <= '9'); }

/* markdown-it's AUTOLINK_RE on [s, e) = `^([a-zA-Z][a-zA-Z0-9+.\-]{1,31}):([^<>\x00-\x20]*)$`,
   and not `_AUTOLINK_SCHEME_UNSAFE` (javascript:, vbscript:, file:, data:). */
static int autolink(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    if (s >= e || !ascii_alpha(CH(t, s)))
        return 0;
    Py_ssize_t k = s + 1;
    while (k < e && (ascii_alnum(CH(t, k)) || in_set(CH(t, k), "+.-")))
        k++;
    if (k - s < 2 || k - s > 32 || k >= e || CH(t, k) != ':')
        return 0;
    static const char *unsafe[] = {"javascript", "vbscript", "file", "data"};
    for (size_t u = 0; u < 4; u++) {
        Py_ssize_t len = (Py_ssize_t)strlen(unsafe[u]), m = 0;
        while (m < len && m < k - s && (CH(t, s + m) | 0x20) == (Py_UCS4)unsafe[u][m])
            m++;
        if (m == len && k - s == len)
            return 0;
    }
    for (Py_ssize_t m = k + 1; m < e; m++) {
        Py_UCS4 c = CH(t, m);
        if (c <= 0x20 || c == '<' || c == '>')
            return 0;
    }
    return 1;
}

/* markdown-it's EMAIL_RE on [s, e): a local part, '@', then labels of 1 to 63 letters, digits
   and hyphens (not first or last) separated by single dots, to the end. */
static int email(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t k = s;
    while (k < e && (ascii_alnum(CH(t, k)) || in_set(CH(t, k), ".!#$%&'*+/=?^_`{|}~-")))
        k++;
    if (k == s || k >= e || CH(t, k) != '@')
        return 0;
    for (k++;;) {
        Py_ssize_t a = k;
        while (k < e && (ascii_alnum(CH(t, k)) || CH(t, k) == '-'))
            k++;
        if (k == a || k - a > 63 || CH(t, a) == '-' || CH(t, k - 1) == '-')
            return 0;
        if (k == e)
            return 1;
        if (CH(t, k) != '.')
            return 0;
        k++;
    }
}

/* `HTML_TAG_RE.match(line, i)` (markdown-it's inline HTML) with the '<' at i: the end of the tag,
   or -1 for no tag and for the comments it leaves to the Python scanner (a '-' inside one). */
static Py_ssize_t html_tag(const Text *t, Py_ssize_t i, Py_ssize_t e)
{
    Py_ssize_t k = i + 1;
    Py_UCS4 c = k < e ? CH(t, k) : 0;
    if (ascii_alpha(c)) { /* an open tag: name, attributes (a value is optional), then `\s*\/?>` */
        for (k++; k < e && (ascii_alnum(CH(t, k)) || CH(t, k) == '-');)
            k++;
        for (;;) {
            Py_ssize_t w = k;
            while (w < e && is_space(CH(t, w)))
                w++;
            if (w == k || w >= e || !(ascii_alpha(CH(t, w)) || CH(t, w) == '_' || CH(t, w) == ':'))
                break; /* the spaces go to the closing `\s*` */
            for (k = w + 1; k < e && (ascii_alnum(CH(t, k)) || in_set(CH(t, k), ":._-"));)
                k++;
            Py_ssize_t v = k;
            while (v < e && is_space(CH(t, v)))
                v++;
            if (v >= e || CH(t, v) != '=')
                continue; /* no value */
            for (v++; v < e && is_space(CH(t, v));)
                v++;
            if (v >= e)
                continue;
            Py_UCS4 q = CH(t, v);
            if (q == '"' || q == '\'') {
                Py_ssize_t z = find(t, q, 0, v + 1, e);
                if (z != -1)
                    k = z + 1;
            } else {
                Py_ssize_t z = v;
                while (z < e && CH(t, z) > 0x20 && !in_set(CH(t, z), "\"'=<>`"))
                    z++;
                if (z > v)
                    k = z;
            }
        }
        while (k < e && is_space(CH(t, k)))
            k++;
        if (k < e && CH(t, k) == '/')
            k++;
        return k < e && CH(t, k) == '>' ? k + 1 : -1;
    }
    if (c == '/') { /* a closing tag: `<\/[A-Za-z][A-Za-z0-9\-]*\s*>` */
        if (++k >= e || !ascii_alpha(CH(t, k)))
            return -1;
        for (k++; k < e && (ascii_alnum(CH(t, k)) || CH(t, k) == '-');)
            k++;
        while (k < e && is_space(CH(t, k)))
            k++;
        return k < e && CH(t, k) == '>' ? k + 1 : -1;
    }
    if (c == '?') { /* a processing instruction, to the first "?>" */
        Py_ssize_t z = find(t, '?', '>', i + 2, e);
        return z == -1 ? -1 : z + 2;
    }
    if (c != '!' || k + 1 >= e)
        return -1;
    if (CH(t, k + 1) == '-') {
        if (k + 2 >= e || CH(t, k + 2) != '-')
            return -1;
        /* `<!---?>`, then `<!--(?:[^-]|-[^-]|--[^>])*-->` where no '-' comes before its "-->" */
        if (k + 3 < e && CH(t, k + 3) == '>')
            return k + 4;
        if (k + 4 < e && CH(t, k + 3) == '-' && CH(t, k + 4) == '>')
            return k + 5;
        Py_ssize_t dash = find(t, '-', 0, k + 3, e);
        if (dash == -1 || dash + 2 >= e || CH(t, dash + 1) != '-' || CH(t, dash + 2) != '>')
            return -1;
        return dash + 3;
    }
    if (ascii_alpha(CH(t, k + 1))) { /* a declaration, to the first '>' */
        Py_ssize_t z = find(t, '>', 0, k + 2, e);
        return z == -1 ? -1 : z + 1;
    }
    static const char cdata[] = "[CDATA[";
    for (Py_ssize_t m = 0; m < 7; m++)
        if (k + 1 + m >= e || CH(t, k + 1 + m) != (Py_UCS4)cdata[m])
            return -1;
    for (Py_ssize_t m = k + 8; m + 2 < e; m++)
        if (CH(t, m) == ']' && CH(t, m + 1) == ']' && CH(t, m + 2) == '>')
            return m + 3;
    return -1;
}

/* `_scan_line` over [s, e) of the text; offsets are absolute (the line's base is s). */
static int scan_line(PyObject *body, const Text *t, Py_ssize_t s, Py_ssize_t e, Out *o)
{
    Py_ssize_t pos = s, consumed = s, close = -1;
    Py_ssize_t shut_at = -1; /* the first ']' at or after the current '[' + 1 (e: none), reused while ahead */
    Py_ssize_t last_md_close = rfind2(t, ']', '(', s, e); /* -1 when none: below every pos */
    while (pos < e) {
        Py_ssize_t i = pos;
        while (i < e && !is_special(CH(t, i)))
            i++;
        if (i >= e) {
            if (last_md_close >= pos)
                return NOT_SURE; /* a "](" in text may close a link opened on an earlier line */
            return 0;
        }
        if (last_md_close >= pos && find(t, ']', '(', pos, i) != -1)
            return NOT_SURE; /* `line.find("](", pos, i)`: a "](" wholly before i */
        Py_UCS4 c = CH(t, i);
        if (c == '\\') {
            if (i + 1 < e && is_ascii_punct(CH(t, i + 1)))
                pos = consumed = i + 2;
            else
                pos = i + 1;
            continue;
        }
        if (c == '<') {
            Py_UCS4 f = i + 1 < e ? CH(t, i + 1) : 0;
            if (f == 0 || !(f == '/' || f == '!' || f == '?' || (f < 128 && Py_UNICODE_ISALPHA(f)))) {
                pos = i + 1;
                continue;
            }
            Py_ssize_t shut = find(t, '>', 0, i + 1, e);
            if (shut != -1 && find(t, '<', 0, i + 1, shut) == -1 && (autolink(t, i + 1, shut) || email(t, i + 1, shut))) {
                pos = consumed = shut + 1; /* an autolink: a web link, never a vault link */
                continue;
            }
            Py_ssize_t tag = html_tag(t, i, e);
            if (tag < 0)
                return NOT_SURE; /* inline HTML that goes on below, or a '<' markdown-it may read so */
            pos = consumed = tag; /* inline HTML: no link inside */
            continue;
        }
        if (c == '`') {
            Py_ssize_t end = code_span_end(t, i, e);
            if (end < 0)
                return NOT_SURE; /* may close on a later line, or be literal */
            if (add_code(o, i, end) < 0)
                return -1;
            pos = consumed = end;
            continue;
        }
        int embed = i > consumed && CH(t, i - 1) == '!';
        if (i + 1 < e && CH(t, i + 1) == '[') {
            if (close < i + 2) {
                close = find(t, ']', ']', i + 2, e);
                if (close == -1)
                    close = e;
            }
            if (close < e && find(t, '[', '[', i + 2, close) == -1 && !blank(t, i + 2, close)) {
                Py_ssize_t start = embed ? i - 1 : i;
                PyObject *inner = substring(body, i + 2, close);
                if (inner == NULL)
                    return -1;
                if (append(o->links, Py_BuildValue("(ONnn)", embed ? o->embed : o->wiki, inner, start, close + 2)) < 0)
                    return -1;
                pos = consumed = close + 2;
                continue;
            }
        } else {
            Py_ssize_t ds = 0, de = 0;
            Py_ssize_t end = simple_md_link(t, i, e, &ds, &de);
            if (end >= 0) {
                Py_ssize_t start = embed ? i - 1 : i;
                PyObject *dest = substring(body, ds, de);
                if (dest == NULL)
                    return -1;
                if (append(o->links, Py_BuildValue("(ONnn)", embed ? o->md_embed : o->md, dest, start, end)) < 0)
                    return -1;
                pos = consumed = end;
                continue;
            }
            Py_ssize_t spans[16], nspans = 0;
            end = embed ? -1 : link_with_code(t, i, e, &ds, &de, spans, 8, &nspans);
            if (end >= 0) {
                PyObject *dest = substring(body, ds, de);
                if (dest == NULL)
                    return -1;
                if (append(o->links, Py_BuildValue("(ONnn)", o->md, dest, i, end)) < 0)
                    return -1;
                for (Py_ssize_t m = 0; m < nspans; m++)
                    if (add_code(o, spans[2 * m], spans[2 * m + 1]) < 0)
                        return -1;
                pos = consumed = end;
                continue;
            }
            if (shut_at < i + 1) {
                shut_at = find(t, ']', 0, i + 1, e);
                if (shut_at == -1)
                    shut_at = e; /* none on the rest of the line (a line of 50,000 '[' is one pass) */
            }
            Py_ssize_t shut = shut_at < e ? shut_at : -1;
            if (shut != -1) {
                Py_UCS4 after = shut + 1 < e ? CH(t, shut + 1) : 0;
                int plain = 1;
                for (Py_ssize_t k = i + 1; k < shut; k++)
                    if (is_special(CH(t, k))) {
                        plain = 0;
                        break;
                    }
                if (after != '(' && after != '[' && plain) {
                    pos = shut + 1;
                    continue;
                }
            }
        }
        if (last_md_close >= i)
            return NOT_SURE;
        pos = i + 1;
    }
    if (last_md_close >= pos)
        return NOT_SURE;
    return 0;
}

/* The cells of a table row [s, e) as `_row_cells` finds them: up to `max` (start, end) pairs in
   cells[]; the number of cells (after the empty first and last are dropped). */
static Py_ssize_t row_cells(const Text *t, Py_ssize_t s, Py_ssize_t e, Py_ssize_t *cells, Py_ssize_t max)
{
    Py_ssize_t a = s + lead_spaces(t, s, e), b = e;
    while (a < b && is_trim(CH(t, a)))
        a++;
    while (b > a && is_trim(CH(t, b - 1)))
        b--;
    /* split [a, b) at each '|' not right after a backslash */
    Py_ssize_t n = 0, total = 0, first_empty = 0, last_empty = 0;
    Py_ssize_t cs = a;
    for (Py_ssize_t k = a; k <= b; k++) {
        if (k == b || (CH(t, k) == '|' && !(k > a && CH(t, k - 1) == '\\'))) {
            if (total == 0)
                first_empty = (k == cs);
            last_empty = (k == cs);
            if (n < max) {
                cells[2 * n] = cs;
                cells[2 * n + 1] = k;
            }
            n++;
            total++;
            cs = k + 1;
        }
    }
    Py_ssize_t drop_first = first_empty ? 1 : 0;
    Py_ssize_t count = total - drop_first;
    if (count > 0 && last_empty && !(total == 1 && drop_first))
        count--;
    if (drop_first) {
        Py_ssize_t kept = n < max ? n : max;
        for (Py_ssize_t k = 1; k < kept; k++) {
            cells[2 * (k - 1)] = cells[2 * k];
            cells[2 * (k - 1) + 1] = cells[2 * k + 1];
        }
    }
    return count;
}

/* `_table_columns(header, delimiter)` for header [hs, he) and delimiter [ds, de). */
static Py_ssize_t table_columns(const Text *t, Py_ssize_t hs, Py_ssize_t he, Py_ssize_t ds, Py_ssize_t de)
{
    Py_ssize_t d = ds + lead_spaces(t, ds, de);
    if (d - ds >= 4 || de - d < 2)
        return 0;
    Py_UCS4 d0 = CH(t, d), d1 = CH(t, d + 1);
    if (!in_set(d0, "|-:") || !in_set(d1, "|-: "))
        return 0;
    if (d0 == '-' && d1 == ' ')
        return 0;
    for (Py_ssize_t k = d; k < de; k++)
        if (!in_set(CH(t, k), "|-: "))
            return 0;
    /* the delimiter's columns: each non-empty one `:?-+:?` (empty: only the first and the last) */
    Py_ssize_t aligns = 0, cs = d, index = 0, ncols = 1;
    for (Py_ssize_t k = d; k < de; k++)
        if (CH(t, k) == '|')
            ncols++;
    for (Py_ssize_t k = d; k <= de; k++) {
        if (k < de && CH(t, k) != '|')
            continue;
        Py_ssize_t a = cs, b = k;
        while (a < b && is_trim(CH(t, a)))
            a++;
        while (b > a && is_trim(CH(t, b - 1)))
            b--;
        if (a == b) {
            if (!(index == 0 || index == ncols - 1))
                return 0;
        } else {
            Py_ssize_t m = a;
            if (CH(t, m) == ':')
                m++;
            Py_ssize_t dashes = m;
            while (m < b && CH(t, m) == '-')
                m++;
            if (m == dashes)
                return 0;
            if (m < b && CH(t, m) == ':')
                m++;
            if (m != b)
                return 0;
            aligns++;
        }
        index++;
        cs = k + 1;
    }
    /* the header's cells, split as escaped_split splits them */
    Py_ssize_t a = hs + lead_spaces(t, hs, he), b = he;
    while (a < b && is_trim(CH(t, a)))
        a++;
    while (b > a && is_trim(CH(t, b - 1)))
        b--;
    if (find(t, '|', 0, a, b) == -1)
        return 0;
    Py_ssize_t cells[2];
    Py_ssize_t columns = row_cells(t, a, b, cells, 0);
    return columns == aligns ? columns : 0;
}

#define MAX_AUTOCOMPLETED_CELLS 0x10000

typedef struct {
    Py_ssize_t start, end;
    int tab; /* the line holds a tab */
} Line;

/* A line's leading spaces and tabs as the columns markdown-it counts (tab stops of 4, what
   `_expand_tabs` makes of them); the offset of its first other character in *rest. */
static Py_ssize_t columns_before(const Text *t, Py_ssize_t s, Py_ssize_t e, Py_ssize_t *rest)
{
    Py_ssize_t column = 0, k = s;
    for (; k < e && (CH(t, k) == ' ' || CH(t, k) == '\t'); k++)
        column = CH(t, k) == '\t' ? column + 4 - column % 4 : column + 1;
    *rest = k;
    return column;
}

/* `_scan_table` from line index i; the index of the line after it in *next, the offset in *base. */
/* `_quote_content`: where a quote line's content starts, after its '>' and one space. */
static Py_ssize_t quote_content(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    return s + (s + 1 < e && CH(t, s + 1) == ' ' ? 2 : 1);
}

/* `_scan_table`; `quoted`: the table is in a quote at the top level, its rows what follows each '>'. */
static int scan_table(PyObject *body, const Text *t, const Line *lines, Py_ssize_t nlines, Py_ssize_t i,
                      Py_ssize_t columns, Out *o, Py_ssize_t *next, int quoted)
{
    Py_ssize_t autocompleted = 0, j = i;
    Py_ssize_t *cells = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(columns + 1));
    if (cells == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int result = 0;
    while (j < nlines) {
        Py_ssize_t rs = lines[j].start, re = lines[j].end;
        if (quoted) {
            if (rs >= re || CH(t, rs) != '>') {
                Py_ssize_t k = rs;
                while (k < re && (CH(t, k) == ' ' || CH(t, k) == '\t'))
                    k++;
                if (k < re)
                    result = NOT_SURE; /* a lazy line: the quote goes on without its '>' */
                break;                 /* else a blank line ends the table and the quote */
            }
            rs = quote_content(t, rs, re);
        }
        if (j >= i + 2) {
            Py_ssize_t lead = lead_spaces(t, rs, re), k = rs + lead;
            int empty = 1;
            for (Py_ssize_t m = k; m < re; m++)
                if (!is_trim(CH(t, m))) {
                    empty = 0;
                    break;
                }
            if (empty || lead >= 4)
                break;
            Py_UCS4 c = CH(t, k);
            if (lines[j].tab || in_set(c, "`~>*-+_<") || Py_UNICODE_ISDIGIT(c)) {
                result = NOT_SURE; /* a tab in a row, or a fence, quote, rule, list or HTML may end it */
                break;
            }
            if (c == '#' && atx_open(t, k, re))
                break;
        }
        if (j != i + 1) {
            Py_ssize_t n = row_cells(t, rs, re, cells, columns + 1);
            if (j >= i + 2) {
                autocompleted += columns - n;
                if (autocompleted > MAX_AUTOCOMPLETED_CELLS)
                    break;
            }
            Py_ssize_t kept = n < columns ? n : columns;
            for (Py_ssize_t c = 0; c < kept; c++) {
                Py_ssize_t a = cells[2 * c], b = cells[2 * c + 1];
                /* `cell.strip(MD_TRIM_CHARS) != cell.strip(" ")` */
                Py_ssize_t ta = a, tb = b, sa = a, sb = b;
                while (ta < tb && is_trim(CH(t, ta)))
                    ta++;
                while (tb > ta && is_trim(CH(t, tb - 1)))
                    tb--;
                while (sa < sb && CH(t, sa) == ' ')
                    sa++;
                while (sb > sa && CH(t, sb - 1) == ' ')
                    sb--;
                if (ta != sa || tb != sb) {
                    result = NOT_SURE;
                    goto done;
                }
                int special = 0;
                for (Py_ssize_t m = a; m < b; m++)
                    if (is_special(CH(t, m)) || (CH(t, m) == ']' && m + 1 < b && CH(t, m + 1) == '(')) {
                        special = 1;
                        break;
                    }
                if (special) {
                    int r = scan_line(body, t, sa, sb, o);
                    if (r) {
                        result = r;
                        goto done;
                    }
                }
            }
        }
        j++;
    }
done:
    PyMem_Free(cells);
    *next = j;
    return result;
}

/* markdown-it's HTML block start conditions (`HTML_SEQUENCES`), tried in order on a line's content
   [s, e) from its '<': the index of the first that matches, or -1. The tag names compare
   lower-cased in ASCII only (`(?a:...)` under re.IGNORECASE). */
static const char *const RAW_TAGS[] = {"script", "pre", "style", "textarea", NULL};
static const char *const BLOCK_TAGS[] = {
    "address", "article", "aside", "base", "basefont", "blockquote", "body", "caption", "center", "col", "colgroup", "dd",
    "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "frame",
    "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr", "html", "iframe", "legend", "li", "link",
    "main", "menu", "menuitem", "nav", "noframes", "ol", "optgroup", "option", "p", "param", "search", "section",
    "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "track", "ul", NULL};
#define HTML_TAG_ALONE 6 /* the one kind that does not interrupt a paragraph */

/* The length of `word` (lower-case ASCII) at k, compared in ASCII case only; 0 when it is not there. */
static Py_ssize_t word_at(const Text *t, Py_ssize_t k, Py_ssize_t e, const char *word)
{
    Py_ssize_t n = (Py_ssize_t)strlen(word);
    if (e - k < n)
        return 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        Py_UCS4 c = CH(t, k + j);
        if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (Py_UCS4)word[j])
            return 0;
    }
    return n;
}

/* Whether `text` is at k exactly. */
static int literal_at(const Text *t, Py_ssize_t k, Py_ssize_t e, const char *text)
{
    Py_ssize_t n = (Py_ssize_t)strlen(text);
    if (e - k < n)
        return 0;
    for (Py_ssize_t j = 0; j < n; j++)
        if (CH(t, k + j) != (Py_UCS4)text[j])
            return 0;
    return 1;
}

/* The end of the first name of `names` at k that `after` accepts at its end (a regex alternation
   with a lookahead after it tries every name), or -1. */
static Py_ssize_t tag_name(const Text *t, Py_ssize_t k, Py_ssize_t e, const char *const *names, int slash_ok)
{
    for (; *names; names++) {
        Py_ssize_t n = word_at(t, k, e, *names);
        if (!n)
            continue;
        Py_ssize_t a = k + n;
        if (a == e || is_space(CH(t, a)) || CH(t, a) == '>' || (slash_ok && CH(t, a) == '/' && a + 1 < e && CH(t, a + 1) == '>'))
            return a;
    }
    return -1;
}

static int html_block_kind(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    Py_ssize_t k = s + 1;
    if (tag_name(t, k, e, RAW_TAGS, 0) != -1)
        return 0; /* `<(script|pre|style|textarea)(?=(\s|>|$))` */
    if (literal_at(t, k, e, "!--"))
        return 1;
    if (k < e && CH(t, k) == '?')
        return 2;
    if (k + 1 < e && CH(t, k) == '!' && ascii_alpha(CH(t, k + 1)))
        return 3;
    if (literal_at(t, k, e, "![CDATA["))
        return 4;
    if (tag_name(t, k < e && CH(t, k) == '/' ? k + 1 : k, e, BLOCK_TAGS, 1) != -1)
        return 5; /* `</?(block tags)(?=(\s|/?>|$))` */
    if (k < e && (ascii_alpha(CH(t, k)) || CH(t, k) == '/')) {
        Py_ssize_t end = html_tag(t, s, e); /* an open or closing tag, then `\s*$` */
        if (end != -1) {
            while (end < e && is_space(CH(t, end)))
                end++;
            if (end == e)
                return HTML_TAG_ALONE;
        }
    }
    return -1;
}

/* Whether the HTML block of `kind` ends on the line whose content (without leading spaces and
   tabs) is [s, e): its end condition searched anywhere in it; a blank line for kinds 5 and 6. */
static int html_block_ends(const Text *t, int kind, Py_ssize_t s, Py_ssize_t e)
{
    switch (kind) {
    case 0: /* `<\/(script|pre|style|textarea)>` */
        for (Py_ssize_t k = find(t, '<', '/', s, e); k != -1; k = find(t, '<', '/', k + 1, e))
            for (const char *const *name = RAW_TAGS; *name; name++) {
                Py_ssize_t n = word_at(t, k + 2, e, *name);
                if (n && k + 2 + n < e && CH(t, k + 2 + n) == '>')
                    return 1;
            }
        return 0;
    case 1:
        for (Py_ssize_t k = find(t, '-', '-', s, e); k != -1; k = find(t, '-', '-', k + 1, e))
            if (k + 2 < e && CH(t, k + 2) == '>')
                return 1;
        return 0;
    case 2:
        return find(t, '?', '>', s, e) != -1;
    case 3:
        return find(t, '>', 0, s, e) != -1;
    case 4:
        for (Py_ssize_t k = find(t, ']', ']', s, e); k != -1; k = find(t, ']', ']', k + 1, e))
            if (k + 2 < e && CH(t, k + 2) == '>')
                return 1;
        return 0;
    default:
        return s == e;
    }
}

/* `_ONE_LINE_COMMENT.match` at s: "<!--", then a "-->" before any "[[" on the line. */
static int one_line_comment(const Text *t, Py_ssize_t s, Py_ssize_t e)
{
    if (!(e - s >= 4 && CH(t, s) == '<' && CH(t, s + 1) == '!' && CH(t, s + 2) == '-' && CH(t, s + 3) == '-'))
        return 0;
    for (Py_ssize_t k = s + 4; k + 1 < e; k++) {
        if (CH(t, k) == '[' && CH(t, k + 1) == '[')
            return 0;
        if (k + 2 < e && CH(t, k) == '-' && CH(t, k + 1) == '-' && CH(t, k + 2) == '>')
            return 1;
    }
    return 0;
}

typedef struct {
    Py_UCS4 ch;
    Py_ssize_t length, start, item; /* item: the content column of a list item's fence */
} Fence;

static int scan_lines(PyObject *body, const Text *t, const Line *lines, Py_ssize_t nlines, Out *o)
{
    Py_ssize_t size = t->size;
    Fence fence = {0}, quote_fence = {0}, item_fence = {0};
    Py_ssize_t indented_start = -1, indented_end = -1;
    Py_ssize_t prev_s = 0, prev_e = 0; /* the previous line ("" at first) */
    int in_paragraph = 0, in_container = 0;
    Py_ssize_t item_indent = -1; /* None */
    Py_ssize_t after_table = 0;
    int html = -1;                /* the kind of an open HTML block (-1: none) */
    int top_quote = 0;            /* the line is in a quote at the top level, read from its first line */
    Py_ssize_t html_start = 0;
    int r;

    for (Py_ssize_t i = 0; i < nlines; i++) {
        Py_ssize_t ls = lines[i].start, le = lines[i].end, n = le - ls;
        Py_ssize_t base = ls, step_end = le + 1 < size ? le + 1 : size; /* min(base + step, size) */
        if (i < after_table)
            continue;
        if (quote_fence.ch) {
            int has_text = 0;
            for (Py_ssize_t k = ls; k < le; k++)
                if (CH(t, k) != ' ' && CH(t, k) != '\t') {
                    has_text = 1;
                    break;
                }
            if (has_text) {
                Py_ssize_t lead = lead_spaces(t, ls, le);
                if (lead >= 4 || CH(t, ls + lead) != '>')
                    return NOT_SURE; /* the quote may end here */
                /* `_closes_quote_fence` */
                Py_ssize_t content = ls + lead + 1;
                Py_ssize_t st = content;
                while (st < le && (CH(t, st) == ' ' || CH(t, st) == '\t'))
                    st++;
                if (starts_with_run(t, st, le, quote_fence.ch, quote_fence.length)) {
                    if (find(t, '\t', 0, content, st) != -1)
                        return NOT_SURE; /* tabs after '>': columns only markdown-it counts */
                    if (lead_spaces(t, quote_content(t, ls + lead, le), le) < 4 && only_run(t, st, le, quote_fence.ch)) {
                        if (add_code(o, quote_fence.start, step_end) < 0)
                            return -1;
                        quote_fence.ch = 0;
                    }
                }
                prev_s = ls, prev_e = le;
                continue;
            }
            if (add_code(o, quote_fence.start, base) < 0)
                return -1;
            quote_fence.ch = 0;
        }
        if (html >= 0) {
            /* markdown-it tests the end condition on the line without its leading whitespace */
            Py_ssize_t content = ls;
            while (content < le && (CH(t, content) == ' ' || CH(t, content) == '\t'))
                content++;
            if (!html_block_ends(t, html, content, le)) {
                prev_s = ls, prev_e = le;
                continue;
            }
            if (content < le) { /* the closing line belongs to the block */
                if (add_code(o, html_start, step_end) < 0)
                    return -1;
                html = -1;
                prev_s = ls, prev_e = le;
                continue;
            }
            if (add_code(o, html_start, base) < 0) /* a blank line ends it and is read as usual */
                return -1;
            html = -1;
        }
        if (item_fence.ch) {
            /* `_closes_item_fence` */
            Py_ssize_t rest = ls, lead = columns_before(t, ls, le, &rest);
            if (rest < le) {
                if (lead < item_fence.item)
                    return NOT_SURE;
                if (lead - item_fence.item < 4 && starts_with_run(t, rest, le, item_fence.ch, item_fence.length) &&
                    only_run(t, rest, le, item_fence.ch)) {
                    if (add_code(o, item_fence.start, step_end) < 0)
                        return -1;
                    item_fence.ch = 0;
                }
            }
            prev_s = ls, prev_e = le;
            continue;
        }
        if (fence.ch) {
            if (n && in_set(CH(t, ls), " `~")) {
                Py_ssize_t lead = lead_spaces(t, ls, le);
                if (lead < 4 && starts_with_run(t, ls + lead, le, fence.ch, fence.length) && only_run(t, ls + lead, le, fence.ch)) {
                    if (add_code(o, fence.start, step_end) < 0)
                        return -1;
                    fence.ch = 0;
                }
            }
            prev_s = ls, prev_e = le;
            continue;
        }
        /* Leading tabs count as the columns they stand for; the line after them is the same (the
           Python scanner expands them, `_expand_tabs`). A tab further in: `tab_inside`. */
        Py_ssize_t st = ls; /* `stripped` starts here */
        Py_ssize_t indent = lines[i].tab ? columns_before(t, ls, le, &st) : lead_spaces(t, ls, le);
        if (!lines[i].tab)
            st = ls + indent;
        int tab_inside = lines[i].tab && find(t, '\t', 0, st, le) != -1;
        if (st == le) { /* blank */
            in_paragraph = 0;
            prev_s = ls, prev_e = le;
            continue;
        }
        Py_UCS4 s0 = CH(t, st);
        if (indented_start >= 0) {
            if (indent >= 4) {
                indented_end = step_end;
                prev_s = ls, prev_e = le;
                continue;
            }
            if (add_code(o, indented_start, indented_end) < 0)
                return -1;
            indented_start = -1;
        }
        if (indent >= 4 && in_container) {
            /* `_deep_item_fence` */
            if (!tab_inside && item_indent >= 0 && (s0 == '`' || s0 == '~') && indent - item_indent >= 0 &&
                indent - item_indent < 4) {
                Py_ssize_t len = fence_run(t, st, le), at = st; /* fewer than 4 columns past the item's content */
                if (len) {
                    item_fence.ch = CH(t, at), item_fence.length = len, item_fence.start = base, item_fence.item = item_indent;
                    in_paragraph = 0;
                    prev_s = ls, prev_e = le;
                    continue;
                }
            }
            /* `_unsure_in_container` */
            int unsure;
            if (item_indent < 0)
                unsure = 1;
            else if (indent < item_indent)
                unsure = !(in_paragraph && (Py_UNICODE_ISALPHA(s0) || Py_UNICODE_ISDECIMAL(s0) || Py_UNICODE_ISDIGIT(s0) ||
                                            Py_UNICODE_ISNUMERIC(s0)));
            else if (indent - item_indent >= 4)
                unsure = !in_paragraph;
            else {
                /* `_may_open_block(line, stripped)` */
                if (in_set(s0, "#`~<|>=_:"))
                    unsure = 1;
                else if (s0 == '[')
                    unsure = !(st + 1 < le && CH(t, st + 1) == '^') && link_def(t, st, le);
                else if (in_set(s0, "-*+") || Py_UNICODE_ISDIGIT(s0)) {
                    int count = 0;
                    Py_ssize_t run = container_run(t, st, le, &count);
                    unsure = (run >= 0 && run < le && (CH(t, run) == '#' || CH(t, run) == '<')) || thematic_break(t, st, le) ||
                             delimiter_row(t, st, le) || setext(t, st, le) ||
                             (container_start(t, st, le) && content_indent(t, st, le) < 0);
                } else
                    unsure = 0;
            }
            if (unsure)
                return NOT_SURE;
        } else if (indent >= 4 && !in_paragraph) {
            indented_start = base, indented_end = step_end;
            prev_s = ls, prev_e = le;
            continue;
        }
        if (tab_inside)
            return NOT_SURE;
        /* From here a line indented by less than 4 columns has no tab at all. */
        if (indent == 0 && blank(t, prev_s, prev_e)) {
            /* `not _opens_container(line)` */
            int opens = (in_set(s0, "->*+") || Py_UNICODE_ISDIGIT(s0)) && container_start(t, ls, le);
            if (!opens)
                in_container = 0;
        }
        /* a quote at the top level, followed from its first line (after a blank line, or the note's) */
        int quote_opens = CH(t, ls) == '>' && blank(t, prev_s, prev_e);
        top_quote = quote_opens || (CH(t, ls) == '>' && top_quote && prev_e > prev_s && CH(t, prev_s) == '>');
        if (indent < 4 && i + 1 < nlines && find(t, '|', 0, ls, le) != -1) {
            Py_ssize_t ds = lines[i + 1].start, de = lines[i + 1].end;
            Py_ssize_t dl = ds + lead_spaces(t, ds, de);
            int after_blank = 1; /* `not previous[1:].strip(" \t")` */
            for (Py_ssize_t k = prev_s + 1; k < prev_e; k++)
                if (CH(t, k) != ' ' && CH(t, k) != '\t') {
                    after_blank = 0;
                    break;
                }
            Py_ssize_t columns = 0;
            int quoted = top_quote && (quote_opens || after_blank) && ds < de && CH(t, ds) == '>';
            if (quoted) {
                /* `_quoted_table_columns`: a table opening a quote or after a blank line in it */
                Py_ssize_t hc = quote_content(t, ls, le);
                if (!lines[i].tab && !lines[i + 1].tab && !(hc < le && (CH(t, hc) == ' ' || CH(t, hc) == '>')))
                    columns = table_columns(t, hc, le, quote_content(t, ds, de), de);
            } else if (lines[i + 1].tab) {
                /* a table with tabs in its first rows: markdown-it decides */
                Py_ssize_t k = ds;
                while (k < de && (CH(t, k) == ' ' || CH(t, k) == '\t'))
                    k++;
                int shape = de - k >= 2 && in_set(CH(t, k), "|-:");
                for (Py_ssize_t m = k; shape && m < de; m++)
                    shape = in_set(CH(t, m), "|-: \t");
                if (shape)
                    return NOT_SURE;
            } else if (dl < de && in_set(CH(t, dl), "|-:")) {
                columns = table_columns(t, ls, le, ds, de);
                if (columns && in_container)
                    return NOT_SURE; /* a table inside a list item or quote */
            }
            if (columns) {
                Py_ssize_t next = 0;
                r = scan_table(body, t, lines, nlines, i, columns, o, &next, quoted);
                if (r)
                    return r;
                after_table = next;
                in_paragraph = 0;
                prev_s = lines[next - 1].start, prev_e = lines[next - 1].end;
                continue;
            }
        }
        int was_paragraph = in_paragraph;
        in_paragraph = 1;
        Py_UCS4 first = CH(t, ls);
        Py_UCS4 c1 = n > 1 ? CH(t, ls + 1) : 0, c2 = n > 2 ? CH(t, ls + 2) : 0, c3 = n > 3 ? CH(t, ls + 3) : 0;
        int plain_item = 0;
        if (in_set(first, "-*+") && c1 == ' ') {
            if (c2 && Py_UNICODE_ISALPHA(c2))
                plain_item = 1;
            else if (c2 == '[' && c3 == '[' && find(t, ']', 0, ls, le) != -1 && find(t, ']', ':', ls, le) == -1 &&
                     find(t, '\\', 0, ls, le) == -1)
                plain_item = 1;
        }
        if (plain_item) {
            in_container = 1;
            item_indent = 2;
        } else if (indent < 4 && (in_set(first, " `~<#|[=-*+>_:") || Py_UNICODE_ISDIGIT(first))) {
            if (s0 == '<') {
                int kind = html_block_kind(t, st, le);
                if (kind >= 0 && !in_container && !(indent == 0 && one_line_comment(t, ls, le)) &&
                    (kind != HTML_TAG_ALONE || !was_paragraph)) {
                    /* an HTML block at the top level: skipped like code up to its end condition */
                    if (html_block_ends(t, kind, st, le)) {
                        if (add_code(o, base, step_end) < 0) /* it ends on its own line */
                            return -1;
                    } else
                        html = kind, html_start = base;
                    in_paragraph = 0;
                    prev_s = ls, prev_e = le;
                    continue;
                }
                if (kind >= 0 && !one_line_comment(t, st, le))
                    return NOT_SURE; /* an HTML block inside a list or quote, or a tag alone in a paragraph */
            }
            /* `_line_needs_markdown_it(line, indent, previous)` */
            if (s0 == '|')
                return NOT_SURE;
            if (s0 == '[' && !(st + 1 < le && CH(t, st + 1) == '^') && link_def(t, ls, le))
                return NOT_SURE;
            if ((s0 == '=' || s0 == '-') && !blank(t, prev_s, prev_e) && setext(t, ls, le))
                return NOT_SURE;
            if (in_set(s0, "-*+>") || Py_UNICODE_ISDIGIT(s0)) {
                int count = 0;
                Py_ssize_t run = container_run(t, ls, le, &count);
                if (run >= 0) {
                    Py_UCS4 after = run < le ? CH(t, run) : 0;
                    if (after == '<' && html_block_kind(t, run, le) >= 0)
                        return NOT_SURE; /* an HTML block inside the container */
                    if (after == '#' && atx_open(t, run, le))
                        return NOT_SURE; /* a heading inside the container */
                    if (count >= 5)
                        return NOT_SURE; /* nested past markdown-it's limit */
                    if (after == '[' && !(run + 1 < le && CH(t, run + 1) == '^') && link_def_tail(t, run + 1, le))
                        return NOT_SURE;
                }
            }
            if (in_set(s0, "|:->") && !blank(t, prev_s, prev_e) && delimiter_row(t, ls, le))
                return NOT_SURE;
            if (first == '>') {
                /* `_QUOTE_FENCE_OPEN` = `>[ ]?[ ]?(fence run)` */
                Py_ssize_t k = ls + 1, sp = lead_spaces(t, k, le);
                if (sp <= 2) {
                    Py_ssize_t len = fence_run(t, k + sp, le);
                    if (len) {
                        quote_fence.ch = CH(t, k + sp), quote_fence.length = len, quote_fence.start = base;
                        in_container = 1, item_indent = -1, in_paragraph = 0;
                        prev_s = ls, prev_e = le;
                        continue;
                    }
                }
            }
            Py_ssize_t flen = 0, fat = (s0 == '`' || s0 == '~') ? fence_open(t, ls, le, &flen) : -1;
            int heading_here = 0;
            if (s0 == '#') {
                /* `_ATX.match` */
                Py_ssize_t k = st;
                while (k < le && CH(t, k) == '#')
                    k++;
                heading_here = indent <= 3 && k - st <= 6 && (k == le || CH(t, k) == ' ' || CH(t, k) == '\t');
            }
            int comment = s0 == '<' && literal_at(t, st, le, "<!--"); /* a one-line HTML comment here */
            if (in_container && (fat >= 0 || (in_set(s0, "*-_") && thematic_break(t, ls, le)) || comment || heading_here)) {
                if (indent && fat >= 0 && item_indent >= 0 && item_indent <= indent) {
                    item_fence.ch = CH(t, fat), item_fence.length = flen, item_fence.start = base, item_fence.item = item_indent;
                    in_paragraph = 0;
                    prev_s = ls, prev_e = le;
                    continue;
                }
                if (indent)
                    return NOT_SURE; /* a block inside a list item, or closing it */
                in_container = 0;
            }
            if (fat >= 0) {
                fence.ch = CH(t, fat), fence.length = flen, fence.start = base;
                in_paragraph = 0;
                prev_s = ls, prev_e = le;
                continue;
            }
            if (comment) {
                if (add_code(o, base, step_end) < 0) /* a one-line HTML comment block */
                    return -1;
                in_paragraph = 0;
                prev_s = ls, prev_e = le;
                continue;
            }
            if (s0 == '#') {
                if (heading_here) {
                    Py_ssize_t h = st;
                    while (CH(t, h) == '#')
                        h++;
                    Py_ssize_t level = h - st;
                    /* group 2: after [ \t]+, to the last character that is not a space or tab */
                    Py_ssize_t a = h;
                    while (a < le && (CH(t, a) == ' ' || CH(t, a) == '\t'))
                        a++;
                    Py_ssize_t b = le;
                    while (b > a && (CH(t, b - 1) == ' ' || CH(t, b - 1) == '\t'))
                        b--;
                    /* `_atx_content`: a closing run of '#' after a space is dropped */
                    Py_ssize_t c = b;
                    while (c > a && CH(t, c - 1) == '#')
                        c--;
                    if (c != b && (c == a || CH(t, c - 1) == ' ' || CH(t, c - 1) == '\t'))
                        b = c;
                    while (a < b && is_space(CH(t, a)))
                        a++;
                    while (b > a && is_space(CH(t, b - 1)))
                        b--;
                    PyObject *text = substring(body, a, b);
                    if (text == NULL)
                        return -1;
                    if (append(o->headings, Py_BuildValue("(nNn)", level, text, i + 1)) < 0)
                        return -1;
                    in_paragraph = 0;
                }
            } else if (in_set(s0, "*-_") && thematic_break(t, ls, le)) {
                in_paragraph = 0;
            } else if (container_start(t, ls, le)) {
                if (was_paragraph && !in_container && Py_UNICODE_ISDIGIT(s0) &&
                    !(s0 == '1' && st + 1 < le && (CH(t, st + 1) == '.' || CH(t, st + 1) == ')')))
                    return NOT_SURE; /* only a list starting at 1 may interrupt a paragraph */
                in_container = 1;
                item_indent = content_indent(t, ls, le);
            }
        }
        for (Py_ssize_t k = ls; k < le; k++) {
            Py_UCS4 c = CH(t, k);
            if (is_special(c) || (c == ']' && k + 1 < le && CH(t, k + 1) == '(')) {
                r = scan_line(body, t, ls, le, o);
                if (r)
                    return r;
                break;
            }
        }
        prev_s = ls, prev_e = le;
    }
    if (indented_start >= 0 && add_code(o, indented_start, indented_end) < 0)
        return -1;
    /* An unclosed fence runs to the end of the note, where markdown-it does not count a last
       line of only spaces without a newline. */
    Py_ssize_t tail = nlines ? lines[nlines - 1].start : 0, end = size;
    if (tail < size) {
        int spaces = 1;
        for (Py_ssize_t k = tail; k < size; k++)
            if (CH(t, k) != ' ' && CH(t, k) != '\t') {
                spaces = 0;
                break;
            }
        if (spaces)
            end = tail;
    }
    if (html >= 0 && add_code(o, html_start, end) < 0)
        return -1;
    if (quote_fence.ch && add_code(o, quote_fence.start, end) < 0)
        return -1;
    if (fence.ch && add_code(o, fence.start, end) < 0)
        return -1;
    if (item_fence.ch && add_code(o, item_fence.start, end) < 0)
        return -1;
    return 0;
}

static PyObject *KIND_WIKI, *KIND_EMBED, *KIND_MD, *KIND_MD_EMBED;

static PyObject *py_scan(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "scan() takes a str");
        return NULL;
    }
    if (PyUnicode_READY(arg) < 0)
        return NULL;
    Text t = {PyUnicode_KIND(arg), PyUnicode_DATA(arg), PyUnicode_GET_LENGTH(arg)};
    Py_ssize_t nlines = 1;
    for (Py_ssize_t k = 0; k < t.size; k++) {
        Py_UCS4 c = CH(&t, k);
        if (c == '\r' || c == 0x0b || c == 0x0c)
            Py_RETURN_FALSE; /* line ends and spaces only the Python scanner follows */
        if (c == '\n')
            nlines++;
    }
    Line *lines = PyMem_Malloc(sizeof(Line) * (size_t)nlines);
    if (lines == NULL)
        return PyErr_NoMemory();
    Py_ssize_t j = 0, s = 0;
    int tab = 0;
    for (Py_ssize_t k = 0; k < t.size; k++) {
        Py_UCS4 c = CH(&t, k);
        if (c == '\t')
            tab = 1;
        else if (c == '\n') {
            lines[j].start = s, lines[j].end = k, lines[j].tab = tab;
            j++;
            s = k + 1;
            tab = 0;
        }
    }
    lines[j].start = s, lines[j].end = t.size, lines[j].tab = tab;

    Out o = {PyList_New(0), PyList_New(0), PyList_New(0), KIND_WIKI, KIND_EMBED, KIND_MD, KIND_MD_EMBED};
    PyObject *result = NULL;
    if (o.links && o.headings && o.code) {
        int r = scan_lines(arg, &t, lines, nlines, &o);
        if (r == 0)
            result = PyTuple_Pack(3, o.links, o.headings, o.code);
        else if (r == NOT_SURE)
            result = Py_NewRef(Py_False);
    }
    PyMem_Free(lines);
    Py_XDECREF(o.links);
    Py_XDECREF(o.headings);
    Py_XDECREF(o.code);
    return result;
}

/* --- parse_note's links (core/note.py `body_links`) ------------------------------------------ */

/* The range [*a, *b) of s with Python's str.strip() whitespace taken off both ends. */
static void strip_range(const Text *t, Py_ssize_t *a, Py_ssize_t *b)
{
    while (*a < *b && is_space(CH(t, *a)))
        (*a)++;
    while (*b > *a && is_space(CH(t, *b - 1)))
        (*b)--;
}

static PyObject *stripped(PyObject *s, const Text *t, Py_ssize_t a, Py_ssize_t b)
{
    strip_range(t, &a, &b);
    return PyUnicode_Substring(s, a, b);
}

/* `_EXTERNAL.match(href)`: `^[A-Za-z][A-Za-z0-9+.-]*:` (a web or app link, not a vault link). */
static int external(const Text *t, Py_ssize_t a, Py_ssize_t b)
{
    if (a >= b || !ascii_alpha(CH(t, a)))
        return 0;
    for (Py_ssize_t k = a + 1; k < b; k++) {
        Py_UCS4 c = CH(t, k);
        if (c == ':')
            return 1;
        if (!(ascii_alnum(c) || c == '+' || c == '.' || c == '-'))
            return 0;
    }
    return 0;
}

/* (target, subpath, display) of a link's inner text, as note.py splits it: a wikilink's
   `target#sub|shown` (split_inner: a table's `\|` counts as the pipe; target and sub stripped,
   shown as written), a markdown link's stripped `href#sub` (target and sub as written). 1 when
   the link is no vault link (an empty or external href), 2 when Python must read it (a '%' to
   unquote), -1 on error. */
static int split_link(PyObject *inner, int markdown, PyObject **target, PyObject **sub, PyObject **shown)
{
    if (PyUnicode_READY(inner) < 0)
        return -1;
    Text t = {PyUnicode_KIND(inner), PyUnicode_DATA(inner), PyUnicode_GET_LENGTH(inner)};
    Py_ssize_t a = 0, b = t.size;
    *target = *sub = *shown = NULL;
    if (markdown) {
        strip_range(&t, &a, &b);
        if (a == b || external(&t, a, b))
            return 1;
        if (find(&t, '%', 0, a, b) >= 0)
            return 2; /* percent-escapes: urllib's unquote, in Python */
        Py_ssize_t hash = find(&t, '#', 0, a, b);
        Py_ssize_t stop = hash < 0 ? b : hash;
        *target = PyUnicode_Substring(inner, a, stop);
        *sub = hash < 0 ? PyUnicode_New(0, 0) : PyUnicode_Substring(inner, hash + 1, b);
        *shown = Py_NewRef(Py_None);
        return (*target && *sub) ? 0 : -1;
    }
    Py_ssize_t bar = find(&t, '|', 0, 0, t.size), hash = find(&t, '#', 0, 0, t.size);
    if (bar < 0 && hash < 0) { /* most links: the path alone */
        *target = stripped(inner, &t, 0, t.size);
        *sub = PyUnicode_New(0, 0);
        *shown = Py_NewRef(Py_None);
        return (*target && *sub) ? 0 : -1;
    }
    PyObject *plain = inner;
    if (find(&t, '\\', '|', 0, t.size) >= 0) { /* a table's `\|`, before or after the pipe */
        PyObject *escaped = PyUnicode_FromString("\\|"), *pipe = PyUnicode_FromString("|");
        plain = (escaped && pipe) ? PyUnicode_Replace(inner, escaped, pipe, -1) : NULL;
        Py_XDECREF(escaped);
        Py_XDECREF(pipe);
        if (plain == NULL || PyUnicode_READY(plain) < 0) {
            Py_XDECREF(plain);
            return -1;
        }
        t.kind = PyUnicode_KIND(plain), t.data = PyUnicode_DATA(plain), t.size = PyUnicode_GET_LENGTH(plain);
        bar = find(&t, '|', 0, 0, t.size);
    } else
        Py_INCREF(plain);
    Py_ssize_t left = bar < 0 ? t.size : bar;
    hash = find(&t, '#', 0, 0, left);
    *target = stripped(plain, &t, 0, hash < 0 ? left : hash);
    *sub = hash < 0 ? PyUnicode_New(0, 0) : stripped(plain, &t, hash + 1, left);
    *shown = bar < 0 ? Py_NewRef(Py_None) : PyUnicode_Substring(plain, bar + 1, t.size);
    Py_DECREF(plain);
    return (*target && *sub && *shown) ? 0 : -1;
}

/* links(text, body_start, raw, footer_start, footer_end, cls): note.py's `body_links` -- the
   scanner's raw (kind, inner, start, end) links of the body made Link tuples (`cls`) with their
   place in the whole text -- or None when a link needs Python (a markdown link to unquote). */
static PyObject *py_links(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *text, *raw, *cls;
    Py_ssize_t body_start, footer_start, footer_end;
    if (!PyArg_ParseTuple(args, "UnO!nnO!", &text, &body_start, &PyList_Type, &raw, &footer_start, &footer_end,
                          &PyType_Type, &cls))
        return NULL;
    PyTypeObject *type = (PyTypeObject *)cls;
    if (!PyType_IsSubtype(type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "links() needs a tuple type");
        return NULL;
    }
    if (PyUnicode_READY(text) < 0)
        return NULL;
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)};
    PyObject *out = PyList_New(0);
    Py_ssize_t pos = 0, line = 1, line_start = 0; /* note.py's _LineOf, counting forward */
    for (Py_ssize_t i = 0; out != NULL && i < PyList_GET_SIZE(raw); i++) {
        PyObject *item = PyList_GET_ITEM(raw, i);
        PyObject *kind, *inner;
        Py_ssize_t s, e;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "UUnn", &kind, &inner, &s, &e)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "links() takes (kind, inner, start, end) tuples");
            Py_CLEAR(out);
            break;
        }
        s += body_start, e += body_start;
        if (s < 0 || s > t.size) {
            PyErr_SetString(PyExc_ValueError, "a link starts outside the text");
            Py_CLEAR(out);
            break;
        }
        int markdown = kind == KIND_MD || kind == KIND_MD_EMBED ||
                       PyUnicode_CompareWithASCIIString(kind, "md") == 0 ||
                       PyUnicode_CompareWithASCIIString(kind, "md_embed") == 0;
        PyObject *target, *sub, *shown;
        int r = split_link(inner, markdown, &target, &sub, &shown);
        if (r != 0) {
            Py_XDECREF(target), Py_XDECREF(sub), Py_XDECREF(shown);
            if (r == 1)
                continue;
            if (r == 2) {
                Py_DECREF(out);
                Py_RETURN_NONE;
            }
            Py_CLEAR(out);
            break;
        }
        if (s < pos)
            pos = 0, line = 1, line_start = 0;
        for (; pos < s; pos++)
            if (CH(&t, pos) == '\n')
                line++, line_start = pos + 1;
        PyObject *link = type->tp_alloc(type, 10); /* as tuple.__new__(cls, ...) builds it */
        PyObject *values[10] = {Py_NewRef(kind), target, sub, shown, PyLong_FromSsize_t(s), PyLong_FromSsize_t(e),
                                PyLong_FromSsize_t(line), PyLong_FromSsize_t(s - line_start + 1),
                                Py_NewRef(footer_start <= s && s < footer_end ? Py_True : Py_False), Py_NewRef(Py_None)};
        int ok = link != NULL;
        for (int k = 0; k < 10; k++) {
            if (values[k] == NULL)
                ok = 0;
            if (link != NULL)
                PyTuple_SET_ITEM(link, k, values[k]);
            else
                Py_XDECREF(values[k]);
        }
        if (!ok) {
            Py_XDECREF(link);
            Py_CLEAR(out);
        } else if (append(out, link) < 0) /* append releases the link */
            Py_CLEAR(out);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"scan", py_scan, METH_O,
     "scan(body) -> (links, headings, code), as core.line_scan.scan finds them, or False when not sure."},
    {"links", py_links, METH_VARARGS,
     "links(text, body_start, raw, footer_start, footer_end, cls) -> note.body_links' Links, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_line_scan", "The line scanner in C (core/line_scan.py).", -1, methods};

PyMODINIT_FUNC PyInit__line_scan(void)
{
    KIND_WIKI = PyUnicode_InternFromString("wiki");
    KIND_EMBED = PyUnicode_InternFromString("embed");
    KIND_MD = PyUnicode_InternFromString("md");
    KIND_MD_EMBED = PyUnicode_InternFromString("md_embed");
    if (!KIND_WIKI || !KIND_EMBED || !KIND_MD || !KIND_MD_EMBED)
        return NULL;
    return PyModule_Create(&module);
}
