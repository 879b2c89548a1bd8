/** The search command's SuggestModal against a fake sidecar's answers: debounced, previews, keyboard open. */
import { describe, expect, it } from "vitest";
import { App, FakeEl } from "../__mocks__/obsidian";
import { SearchModal } from "../../src/obsidian/modals";

const answer = {
  mode: "keyword",
  note: "vectors are still being built (3/10 notes)",
  results: [{ path: "people/alice-smith.md", score: 1, title: "Alice Smith", snippet: "Alice  leads\\nthe checkout" }],
};

describe("SearchModal", () => {
  it("asks once for the last of quick keystrokes and shows title, path and preview", async () => {
    const calls: string[] = [];
    const rpc: any = async (_m: string, p: { query: string }) => {
      calls.push(p.query);
      return answer;
    };
    const opened: [string, boolean][] = [];
    const modal = new SearchModal(new App() as any, rpc, (p, newTab) => void opened.push([p, newTab]), 30);
    expect((modal as any).instructions.map((i: { command: string }) => i.command)).toContain("↵");
    const first = modal.getSuggestions("al");
    const second = modal.getSuggestions("alice");
    const [a, b] = await Promise.all([first, second]);
    expect(calls).toEqual(["alice"]);
    expect(b).toHaveLength(1);
    expect(a).toEqual([]); // the stale keystroke shows what was there before
    const item = new FakeEl();
    modal.renderSuggestion(b[0], item as any);
    expect(item.children.map((c) => c.text)).toEqual(["Alice Smith", "people/alice-smith.md", "Alice leads\\nthe checkout"]);
    modal.onChooseSuggestion(b[0], { ctrlKey: true, metaKey: false } as any);
    expect(opened).toEqual([["people/alice-smith.md", true]]);
    expect(await modal.getSuggestions("nothing at all")).toHaveLength(1);
  });

  it("says why when search fails or finds nothing", async () => {
    const modal = new SearchModal(new App() as any, (async () => ({ mode: "keyword", results: [] })) as any, () => undefined, 0);
    expect(await modal.getSuggestions("zzz")).toEqual([]);
    expect(modal.emptyStateText).toBe("No matches (keyword search).");
    const failing = new SearchModal(new App() as any, (async () => Promise.reject(new Error("index locked"))) as any, () => undefined, 0);
    expect(await failing.getSuggestions("zzz")).toEqual([]);
    expect(failing.emptyStateText).toBe("Palinode: search failed: index locked");
  });
});
