import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EditorStateReporter } from "../../src/editor-state";
import type { EditorStateParams } from "../../src/protocol";

describe("EditorStateReporter", () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it("sends the first change at once and at most once per interval after that", () => {
    const sent: EditorStateParams[] = [];
    const r = new EditorStateReporter((s) => sent.push(s), { intervalMs: 500, now: () => Date.now() });
    r.setOpen("a.md", ["b.md", "a.md", "a.md"]);
    expect(sent).toEqual([{ active: "a.md", open: ["a.md", "b.md"], last_keystroke: null }]);
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(20);
      r.keystroke();
    }
    expect(sent.length).toBe(1); // 400 ms of typing: still inside the interval
    vi.advanceTimersByTime(100);
    expect(sent.length).toBe(2);
    expect(sent[1].last_keystroke).toBe(1_000_400); // the newest keystroke, coalesced
    vi.advanceTimersByTime(2000);
    expect(sent.length).toBe(2);
  });

  it("does not resend an unchanged state, but flush does", () => {
    const sent: EditorStateParams[] = [];
    const r = new EditorStateReporter((s) => sent.push(s), { now: () => Date.now() });
    r.setOpen("a.md", ["a.md"]);
    vi.advanceTimersByTime(1000);
    r.setOpen("a.md", ["a.md"]);
    expect(sent.length).toBe(1);
    r.flush();
    expect(sent.length).toBe(2);
  });

  it("swallows a failing send (not connected) and keeps working", () => {
    let n = 0;
    const r = new EditorStateReporter(() => {
      n++;
      return Promise.reject(new Error("not connected"));
    }, { now: () => Date.now() });
    r.setOpen(null, []);
    vi.advanceTimersByTime(600);
    r.keystroke();
    expect(n).toBe(2);
    r.dispose();
  });
});
