"""The weekly pass: consolidation, patterns, self-review, corrections, access log, operation log, core set."""
