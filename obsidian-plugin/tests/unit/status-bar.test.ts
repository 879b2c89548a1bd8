import { describe, expect, it } from "vitest";
import { progressText, statusBarModel, totalOf } from "../../src/status-bar";

describe("statusBarModel", () => {
  it("shows the findings count when connected", () => {
    expect(statusBarModel({ state: "connected", message: "m", findingsTotal: 3, progress: null })).toEqual({
      text: "Palinode · 3 findings",
      title: "m",
      tone: "connected",
    });
    expect(statusBarModel({ state: "connected", message: "m", findingsTotal: 1, progress: null }).text).toBe("Palinode · 1 finding");
  });
  it("shows progress of long work", () => {
    const m = statusBarModel({ state: "connected", message: "m", findingsTotal: 0, progress: { phase: "embed", done: 40, total: 120 } });
    expect(m.text).toBe("Palinode · 0 findings · embedding 40/120 (33%)");
    expect(m.tone).toBe("working");
  });
  it("says offline with the how-to-start message as the tooltip", () => {
    const m = statusBarModel({ state: "not-running", message: "Palinode sidecar not running — start it with …", findingsTotal: 3, progress: null });
    expect(m).toEqual({ text: "Palinode: offline", title: "Palinode sidecar not running — start it with …", tone: "offline" });
  });
  it("words phases", () => {
    expect(progressText({ phase: "index", done: 0, total: 0 })).toBe("indexing…");
    expect(progressText({ phase: "custom", done: 5, total: 10 })).toBe("custom 5/10 (50%)");
  });
  it("sums counts", () => {
    expect(totalOf({ a: 2, b: 3 })).toBe(5);
    expect(totalOf(null)).toBe(0);
  });
});
