/**
 * The categories of the vault (kind, folder, label, colour) for the plugin's views.
 *
 * `categories.json` is the one table; `palinode-vault init --obsidian` checks its colours against
 * the same file in its tests, and the kinds/folders/memory types mirror `palinode_vault/kinds.py`
 * (tests/test_plugin_cmds.py checks both).
 */
import table from "./categories.json";

export interface Category {
  kind: string;
  folder: string;
  label: string;
  colour: string;
  /** The memory type (schema) a memory of this kind is filed as; none for daily/ and inbox/. */
  type?: string;
}

export const CATEGORIES: readonly Category[] = table;

/** The categories a memory can be filed as (an inbox note approved "as" one), in the table's order. */
export const MEMORY_TYPES: readonly (Category & { type: string })[] = CATEGORIES.filter(
  (c): c is Category & { type: string } => typeof c.type === "string",
);

/** Colour for notes that belong to no category (structural files, unresolved targets). */
export const OTHER_COLOUR = "#9aa0a6";
export const UNRESOLVED_COLOUR = "#d14343";

const byName = new Map<string, Category>();
for (const c of CATEGORIES) {
  byName.set(c.kind, c);
  byName.set(c.folder, c);
}

/**
 * The category of a note: from the sidecar's `category` (a kind such as `person`, or a folder
 * such as `people`), else from the top folder of its vault-relative path.
 */
export function categoryOf(category: string | null | undefined, path?: string | null): Category | null {
  if (category) {
    const found = byName.get(category.toLowerCase());
    if (found) return found;
  }
  if (path) {
    const slash = path.indexOf("/");
    if (slash > 0) return byName.get(path.slice(0, slash).toLowerCase()) ?? null;
  }
  return null;
}

/** The category of a canonical entity ref (`person/alice-smith`). */
export function categoryOfRef(ref: string): Category | null {
  const slash = ref.indexOf("/");
  return slash > 0 ? byName.get(ref.slice(0, slash).toLowerCase()) ?? null : null;
}

/** Colour of a note in the views. */
export function colourOf(category: string | null | undefined, path?: string | null): string {
  return categoryOf(category, path)?.colour ?? OTHER_COLOUR;
}
