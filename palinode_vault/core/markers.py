"""Markers of the machine-owned surfaces, in one place."""

FOOTER_START = "<!-- palinode:see-also -->"
FOOTER_END = "<!-- /palinode:see-also -->"
FOOTER_HEADING = "## See also"
# Palinode's older footer: a single marker line followed by a `## See also` section.
LEGACY_FOOTER_MARKER = "<!-- palinode-auto-footer -->"
