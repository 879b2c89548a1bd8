"""The memory manager (PROGRAM.md): the model proposes, the code verifies.

Cut along its seams, each a package that does one part of the work:

- `extraction/`: a conversation in, verified items out. The person's numbered statements
  (`numbered.py`), the model's selection among them under a grammar (`selection.py`), the pass
  (`extract.py`), secrets (`secrets.py`), the statement judge (`judge.py`), cue words as data
  (`cue_words/`), transcripts and sessions.
- `update/`: the update logic every proposer goes through (`logic.py`: NOOP, UPDATE, ADD,
  SUPERSEDE, ARCHIVE, names that never collide), statements of existing notes, the workspace every
  write goes through, and planning a pass off the vault lock (`planned.py`).
- `weekly/`: the weekly pass (`consolidate.py`) and its steps, which see it through
  `weekly_pass.WeeklyPass`: patterns, self-review (`improve.py`), corrections, the access and
  operation logs, the core set.
- `review.py`: the person's review of `inbox/` (approve, reject).
"""
