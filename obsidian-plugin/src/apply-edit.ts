/**
 * Applying the sidecar's `apply_edit` requests safely: only when the note's current text still
 * hashes to `old_hash`, and through `vault.process` so Obsidian's editor sees the change.
 */
import type { ApplyEditParams, ApplyEditResult } from "./protocol";

/** Hex SHA-256 of text encoded as UTF-8 (Web Crypto: in Obsidian, browsers and Node 20). */
export async function sha256Hex(text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const digest = await window.crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What `applyEdit` needs from the vault (Obsidian: `vault.read` and `vault.process` on a TFile). */
export interface EditableVault {
  /** The note's text, or null when there is no such file. */
  read(path: string): Promise<string | null>;
  /** Obsidian's `vault.process`: `fn` gets the current text and returns the new text. */
  process(path: string, fn: (data: string) => string): Promise<string>;
}

/** Checks that params look like `{path, old_hash, new_text}`. */
export function isApplyEditParams(p: unknown): p is ApplyEditParams {
  const o = p as Record<string, unknown> | null;
  return (
    !!o &&
    typeof o === "object" &&
    typeof o.path === "string" &&
    typeof o.old_hash === "string" &&
    typeof o.new_text === "string"
  );
}

/**
 * Applies one edit if the file's text still hashes to `old_hash`; otherwise refuses with the
 * reason. The text is compared again inside `process`, so a keystroke between the hash check and
 * the write also refuses the edit instead of losing the keystroke.
 */
export async function applyEdit(params: unknown, vault: EditableVault): Promise<ApplyEditResult> {
  if (!isApplyEditParams(params)) return { applied: false, reason: "invalid params: need path, old_hash, new_text" };
  const current = await vault.read(params.path);
  if (current === null) return { applied: false, reason: "not found" };
  if ((await sha256Hex(current)) !== params.old_hash.toLowerCase()) return { applied: false, reason: "hash mismatch" };
  let applied = false;
  await vault.process(params.path, (data) => {
    if (data !== current) return data; // changed since we hashed it
    applied = true;
    return params.new_text;
  });
  return applied ? { applied: true } : { applied: false, reason: "hash mismatch" };
}
