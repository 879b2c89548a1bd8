import { describe, expect, it } from "vitest";
import recording from "../fixtures/recorded-alice.json";
import { hopDistances, layoutNeighbourhood, shortLabel } from "../../src/graph-layout";
import type { Neighbourhood } from "../../src/protocol";

const depth1 = recording.answers["graph.neighbourhood"].result as Neighbourhood;
const depth2 = recording.answers["graph.neighbourhood@2"].result as Neighbourhood;

describe("layoutNeighbourhood", () => {
  it("puts the note in the middle and its neighbours on a ring, inside the box", () => {
    const g = layoutNeighbourhood(depth1, { width: 600, height: 400 });
    const center = g.nodes.find((n) => n.center)!;
    expect([center.x, center.y]).toEqual([300, 200]);
    const others = g.nodes.filter((n) => !n.center);
    const radii = others.map((n) => Math.round(Math.hypot(n.x - 300, n.y - 200)));
    expect(new Set(radii).size).toBe(1);
    for (const n of g.nodes) {
      expect(n.x).toBeGreaterThanOrEqual(0);
      expect(n.x).toBeLessThanOrEqual(600);
      expect(n.y).toBeGreaterThanOrEqual(0);
      expect(n.y).toBeLessThanOrEqual(400);
    }
    expect(g.nodes[g.nodes.length - 1].center).toBe(true); // drawn last, on top
  });

  it("colours by category, unresolved in red, and builds a legend", () => {
    const g = layoutNeighbourhood(depth1);
    const byId = new Map(g.nodes.map((n) => [n.id, n]));
    expect(byId.get("people/bob-smith.md")!.colour).toBe("#3b82c4");
    expect(byId.get("projects/checkout-redesign.md")!.colour).toBe("#e07b39");
    expect(byId.get("daily/2026-03-22.md")!.categoryLabel).toBe("Daily"); // from the path
    expect(byId.get("unresolved:Bob Smiht")!).toMatchObject({ categoryLabel: "Unresolved", colour: "#d14343", resolved: false });
    expect(g.legend.map((l) => l.label)).toEqual(["People", "Projects", "Decisions", "Insights", "Research", "Daily", "Unresolved"]);
  });

  it("puts depth-2 nodes on an outer ring and keeps edges attached to nodes", () => {
    const g = layoutNeighbourhood(depth2, { width: 600, height: 600 });
    const r = (id: string) => {
      const n = g.nodes.find((x) => x.id === id)!;
      return Math.hypot(n.x - 300, n.y - 300);
    };
    expect(r("projects/payments-api.md")).toBeGreaterThan(r("projects/checkout-redesign.md") + 50);
    expect(g.nodes.find((n) => n.id === "people/carol-jones.md")!.depth).toBe(2);
    for (const e of g.edges) {
      const s = g.nodes.find((n) => n.id === e.source)!;
      expect([e.x1, e.y1]).toEqual([s.x, s.y]);
    }
    expect(g.edges.find((e) => e.count === 2)!.width).toBe(2);
  });

  it("is deterministic", () => {
    expect(layoutNeighbourhood(depth2)).toEqual(layoutNeighbourhood(structuredClone(depth2)));
  });

  it("copes with a lone note", () => {
    const g = layoutNeighbourhood({ center: "a.md", nodes: [], edges: [] });
    expect(g.nodes).toHaveLength(1);
    expect(g.nodes[0]).toMatchObject({ id: "a.md", center: true });
  });

  it("measures hops both ways and shortens labels", () => {
    expect(hopDistances(depth2).get("people/carol-jones.md")).toBe(2);
    expect(shortLabel("Decision: Drop legacy browser support", 12)).toBe("Decision: D…");
  });
});
