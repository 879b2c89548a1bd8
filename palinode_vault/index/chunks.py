"""Note text as the index sees it: preprocessed, then chunked by heading (pure, no I/O).

Two texts come out of every chunk:

- the *keyword* text (FTS5): the body without frontmatter and without the auto-footer, with
  wikilink decoration removed (`[[x|shown]]` -> `shown`, `[[x]]` -> `x`) and inline code
  unwrapped. Fenced and indented code stays: a person searching for a command or an
  identifier should find the note that holds it.
- the *embedding* text: the same, minus code blocks, prefixed with the chunk's context: the
  note's folder, its title and the chunk's heading path (`## Setup` > `### Windows`), so a
  chunk deep in a note is embedded with what the note and its section are about (the text
  shown and keyword-searched has no prefix). On the dev queries this raised vector MRR from
  0.757 to 0.779 and hybrid from 0.777 to 0.803; the folder did it (the help corpus's
  folders name the feature: "Obsidian Publish"), the heading path alone changed nothing.
  Code is dropped here because MiniLM reads it as noise and it would use up the 254-token
  window that the prose needs; keyword search still covers it.

The chunk's hash is the SHA-256 of its embedding text: the same text is embedded once, ever
(across edits of other sections, re-indexes and renames within a folder; a note moved to
another folder is embedded again, as its context changed).

Chunks that carry no words of their own are not embedded at all (their hash is empty):
an empty section, a list whose items are only links, a section that is only code. Their
vector would be the context prefix alone, which matches every query about the note's title
and crowds out the chunks that say something. A note with nothing else keeps one chunk
(title and context) so that related notes and dedup still see it.

A note Palinode wrote may say in its frontmatter what it is about: `summary` (one line about
the note) and `canonical_question` (the question the note answers). Both lead the note's first
chunk, in its keyword and embedding text, so a search in those words finds the note and its
snippet shows them.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from dataclasses import dataclass

from palinode_vault.core.note import Note
from palinode_vault.core.text import line_starts

#: Bump when preprocessing or chunking changes: every note is re-chunked (vectors of chunks
#: whose text did not change are still reused, by hash). 2: folder and heading path in the
#: embedding text. 3: chunks without words of their own are not embedded. 4: Palinode's
#: `summary` and `canonical_question` lead the first chunk.
CHUNKER_VERSION = 4
#: Frontmatter keys whose text leads the first chunk, and how much of each is read.
LEAD_KEYS = ("summary", "canonical_question")
LEAD_MAX_CHARS = 500
#: MiniLM reads 254 content tokens; English prose runs about 4 characters per token, and the
#: title and heading take a few. Longer notes are split at headings into chunks of this size.
MAX_CHARS = 900
#: A heading at this level or above starts a new section.
SPLIT_LEVEL = 3

_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]")
_MD_LINK_TEXT = re.compile(r"^!?\[(.*)\]\(", re.DOTALL)
_HEADING_MARK = re.compile(r"^ {0,3}#{1,6}[ \t]+", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_BLANKS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_NOT_NOTE = re.compile(r"\.(?!md$)[A-Za-z0-9]{1,5}$")  # an attachment: image.png, doc.pdf
_LIST_MARK = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])(?:[ \t]+\[[ xX]\])?[ \t]*", re.MULTILINE)
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class Chunk:
    """One piece of a note for the index."""

    ord: int  # position in the note
    heading: str  # the section heading it starts with ('' for the top of the note)
    text: str  # keyword text (FTS5, snippets)
    embed: str  # embedding input: folder, title, heading path, prose
    hash: str  # sha256 of `embed`; '' when the chunk is not embedded (no words of its own)


def link_text(note: Note, text: str, link) -> str:
    """What a reader sees for a link: its display text, else its target (without decoration)."""
    if link.kind in ("md", "md_embed"):
        m = _MD_LINK_TEXT.match(text[link.start : link.end])
        return m.group(1).strip() if m else ""
    if link.display is not None and link.display.strip():
        return link.display.strip()
    if link.kind == "embed" and _NOT_NOTE.search(link.target):
        return ""  # an embedded image or file says nothing in words
    name = link.target.rsplit("/", 1)[-1]
    name = name[:-3] if name.lower().endswith(".md") else name
    sub = link.subpath if link.subpath and not link.subpath.startswith("^") else ""
    return " ".join(p for p in (name, sub) if p) if name else sub


def _replacements(note: Note, text: str) -> list[tuple[int, int, str | None, str]]:
    """(start, end, keyword replacement or None to keep, embedding replacement), sorted."""
    out: list[tuple[int, int, str | None, str]] = []
    footer = note.footer
    if footer is not None:
        out.append((footer.start, footer.end, "", ""))
    for a, b in note.code:
        if footer is not None and footer.start <= a < footer.end:
            continue
        chunk = text[a:b]
        if "\n" in chunk.rstrip("\n"):  # a code block (fenced, indented, HTML block)
            out.append((a, b, None, "\n"))
        else:  # inline code: keep the words, drop the backticks
            inner = chunk.strip("`").strip()
            out.append((a, b, inner, inner))
    for link in note.links:
        if link.kind == "property" or link.in_footer:
            continue
        shown = link_text(note, text, link)
        out.append((link.start, link.end, shown, shown))
    out.sort(key=lambda r: (r[0], -r[1]))
    kept: list[tuple[int, int, str | None, str]] = []
    end = -1
    for item in out:
        if item[0] >= end:  # drop anything nested inside an earlier span (link inside code)
            kept.append(item)
            end = item[1]
    return kept


def _render(text: str, start: int, stop: int, spans: list, keyword: bool) -> str:
    parts: list[str] = []
    pos = start
    for a, b, kw, em in spans:
        if b <= start or a >= stop:
            continue
        a, b = max(a, start), min(b, stop)
        parts.append(text[pos:a])
        new = kw if keyword else em
        parts.append(text[a:b] if new is None else new)
        pos = b
    parts.append(text[pos:stop])
    out = "".join(parts)
    if not keyword:
        out = _HTML_COMMENT.sub(" ", out)
        out = _HEADING_MARK.sub("", out)
    return _BLANKS.sub("\n\n", out).strip()


def sections(note: Note, text: str) -> list[tuple[str, tuple[str, ...], list[tuple[str, str]]]]:
    """The note's body split at headings, each section split into paragraphs:
    (heading, heading path, [(keyword text, embedding text) per paragraph]). The heading path
    is the section's heading under the headings that contain it (`## Setup`, `### Windows`:
    ("Setup", "Windows"))."""
    starts = line_starts(text)
    spans = _replacements(note, text)
    cuts: list[tuple[int, str, tuple[str, ...]]] = [(note.body_start, "", ())]
    open_headings: list[tuple[int, str]] = []  # (level, text) of the headings above this line
    for level, heading, line in sorted(note.headings, key=lambda h: h[2]):
        while open_headings and open_headings[-1][0] >= level:
            open_headings.pop()
        open_headings.append((level, heading))
        if level > SPLIT_LEVEL or line - 1 >= len(starts):
            continue
        offset = starts[line - 1]
        if offset > note.body_start and _HEADING_LINE.match(text[offset : offset + 8]):
            cuts.append((offset, heading, tuple(h for _, h in open_headings)))
    cuts.sort()
    blocks = [(a, b) for a, b, kw, _ in spans if kw is None]  # code blocks: never cut inside
    # links and code blocks: a paragraph of these and headings alone has no words of its own
    link_spans = [(link.start, link.end) for link in note.links if link.kind != "property" and not link.in_footer]
    link_spans += blocks
    out = []
    for i, (offset, heading, path) in enumerate(cuts):
        stop = cuts[i + 1][0] if i + 1 < len(cuts) else len(text)
        paragraphs = []
        pos = offset
        for m in _PARAGRAPH_BREAK.finditer(text, offset, stop):
            if any(a <= m.start() < b for a, b in blocks):
                continue
            paragraphs.append((pos, m.end()))
            pos = m.end()
        paragraphs.append((pos, stop))
        rendered = []
        for a, b in paragraphs:
            kw = _render(text, a, b, spans, keyword=True)
            em = "" if _links_only(text, a, b, link_spans) else _render(text, a, b, spans, keyword=False)
            if kw or em:
                rendered.append((kw, em))
        if rendered:
            out.append((heading, path, rendered))
    return out


def _links_only(text: str, start: int, stop: int, links: list[tuple[int, int]]) -> bool:
    """True for a paragraph of links or code and nothing else besides headings (a list of
    `[[links]]`, a line of embeds, a code block under its heading): a reader learns names from
    it, which keyword search and the link graph have, and MiniLM reads code as noise."""
    inside = [(max(a, start), min(b, stop)) for a, b in links if a < stop and b > start]
    if not inside:
        return False
    rest, pos = [], start
    for a, b in sorted(inside):
        rest.append(text[pos:a])
        pos = max(pos, b)
    rest.append(text[pos:stop])
    lines = [line for line in "".join(rest).splitlines() if not _HEADING_LINE.match(line)]
    return not _WORD.search(_LIST_MARK.sub("", "\n".join(lines)))


def _split_words(text: str, limit: int) -> list[str]:
    units, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > limit:
            units.append(current)
            current = word[:limit]
        else:
            current = f"{current} {word}" if current else word[:limit]
    if current:
        units.append(current)
    return units


def _embed_input(folder: str, title: str, path: tuple[str, ...], body: str) -> str:
    """The chunk's context first: folder, note title and heading path (each unless the body
    already starts with it). A chunk deep in a note is then read with what the note and its
    section are about, not as a loose paragraph."""
    first = body.split("\n", 1)[0].strip()  # a section's own heading line, if it starts there
    parts = [folder.replace("/", " / ")] if folder else []
    if title and first != title:
        parts.append(title)
    parts += [h for h in path if h and h != title and h != first]
    head = ": ".join(parts)
    return f"{head}\n{body}".strip() if head else body


def chunk_note(note: Note, text: str, max_chars: int = MAX_CHARS, title: str | None = None) -> list[Chunk]:
    """The note's chunks: one for a short note, else consecutive sections packed up to
    `max_chars`; a longer section is cut at paragraph boundaries (a longer paragraph at
    words, for the embedding text)."""
    secs = sections(note, text)
    lead = _lead(note)
    if lead:
        secs.insert(0, ("", (), [(lead, lead)]))
    # (heading, heading path, keyword parts, embedding parts)
    groups: list[tuple[str, tuple[str, ...], list[str], list[str]]] = []
    total = sum(len(em) + 2 for _, _, paras in secs for _, em in paras)
    if total <= max_chars:
        groups.append(("", (), [k for _, _, ps in secs for k, _ in ps], [e for _, _, ps in secs for _, e in ps]))
    else:
        current: tuple[str, tuple[str, ...], list[str], list[str]] | None = None
        size = 0

        def flush() -> None:
            nonlocal current, size
            if current is not None and (current[2] or current[3]):
                groups.append(current)
            current, size = None, 0

        for heading, path, paras in secs:
            section_size = sum(len(em) + 2 for _, em in paras)
            if current is not None and size + section_size > max_chars:
                flush()
            if section_size <= max_chars:
                if current is None:
                    current = (heading, path, [], [])
                current[2].extend(k for k, _ in paras)
                current[3].extend(e for _, e in paras)
                size += section_size
                continue
            for kw, em in paras:  # a long section: pack its paragraphs
                if current is not None and size + len(em) + 2 > max_chars:
                    flush()
                if len(em) > max_chars:
                    pieces = _split_words(em, max_chars)
                    groups.append((heading, path, [kw], [pieces[0]]))
                    groups.extend((heading, path, [], [p]) for p in pieces[1:])
                    continue
                if current is None:
                    current = (heading, path, [], [])
                current[2].append(kw)
                current[3].append(em)
                size += len(em) + 2
            flush()
        flush()
    chunks: list[Chunk] = []
    folder = note.path.rpartition("/")[0]
    title = note.title if title is None else title
    headings = {h.strip() for _, h, _ in note.headings}
    for heading, path, kws, ems in groups:
        body = "\n\n".join(e for e in ems if e)
        embed = _embed_input(folder, title, path, body)
        kw = "\n\n".join(k for k in kws if k)
        worded = any(_WORD.search(e) and not _only_headings(e, headings) for e in ems)
        chunks.append(Chunk(len(chunks), heading, kw, embed, _sha(embed) if worded else ""))
    if not chunks:
        embed = _embed_input(folder, title, (), "")
        chunks.append(Chunk(0, "", "", embed, _sha(embed)))
    elif not any(c.hash for c in chunks):  # nothing but headings, links or code: keep the title
        first = chunks[0]
        embed = _embed_input(folder, title, (), "")
        chunks[0] = Chunk(0, first.heading, first.text, embed, _sha(embed))
    return chunks


def _lead(note: Note) -> str:
    """The note's own `summary` and `canonical_question` (plain strings only), one per line."""
    data = note.frontmatter or {}
    said = [
        " ".join(value.split())[:LEAD_MAX_CHARS] for key in LEAD_KEYS if isinstance(value := data.get(key), str) and value.strip()
    ]
    return "\n".join(said)


def _only_headings(paragraph: str, headings: set[str]) -> bool:
    """True for an embedding paragraph that is nothing but heading lines (an empty section)."""
    return all(line.strip() in headings for line in paragraph.splitlines() if line.strip())


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def clean_draft(text: str) -> str:
    """A draft (not a vault note) as embedding text: the same preprocessing, title first."""
    from palinode_vault.core.note import parse_note
    from palinode_vault.core.text import normalise

    norm, _ = normalise(text)
    note = parse_note("draft.md", norm)
    body = "\n\n".join(em for _, _, paras in sections(note, norm) for _, em in paras)
    title = note.title if note.title != "draft" else ""
    return f"{title}\n{body}".strip() if title and not body.startswith(f"# {title}") else body


def draft_chunks(text: str) -> list[Chunk]:
    """A draft (not a vault note) chunked exactly as a note is, without folder context and
    without the file name as a title (a draft has neither): a whole note passed back as a
    draft gives the note's own chunks, so dedup compares like with like."""
    from palinode_vault.core.note import parse_note
    from palinode_vault.core.text import normalise

    norm, _ = normalise(text)
    note = parse_note("draft.md", norm)
    return chunk_note(note, norm, title=note.title if note.title != "draft" else "")


def same_words(a: str, b: str) -> bool:
    """True when two keyword texts are the same text up to spacing and line breaks."""
    return " ".join(a.split()) == " ".join(b.split())


def line_at(text: str, offset: int) -> str:
    """The line of `text` that holds `offset` (for the context of a link)."""
    starts = line_starts(text)
    i = max(0, bisect_right(starts, offset) - 1)
    end = text.find("\n", starts[i])
    return text[starts[i] : end if end != -1 else len(text)]
