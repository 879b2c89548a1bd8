"""Extraction: a conversation in, verified items out (pipeline, secrets, the statement judge, transcripts)."""
