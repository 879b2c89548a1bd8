import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { SidecarClient, parseDiscovery, type SocketConstructor } from "../../src/client";
import { SidecarSession } from "../../src/session";
import { FakeSidecar, until } from "../helpers/fake-sidecar";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("SidecarSession", () => {
  it("follows connection, findings and progress for the status bar", async () => {
    const s = await new FakeSidecar().listen();
    s.on("status", () => ({ findings: { broken_link: 2, wiki_drift: 3 } }));
    const client = new SidecarClient({ WebSocket: WebSocket as unknown as SocketConstructor, locate: async () => parseDiscovery(s.discovery()) });
    const session = new SidecarSession(client);
    cleanups.push(() => s.close(), () => client.stop(), () => session.dispose());
    const changed: string[][] = [];
    session.onPathsChanged((p) => changed.push(p));
    expect(session.statusBar.tone).toBe("offline");

    client.start();
    await until(() => session.findingsTotal === 5, 3000, "status count");
    expect(session.statusBar.text).toBe("Palinode · 5 findings");

    s.notify("progress", { phase: "index", done: 3, total: 10 });
    await until(() => session.progress !== null);
    expect(session.statusBar.text).toBe("Palinode · 5 findings · indexing 3/10 (30%)");
    s.notify("progress", { phase: "index", done: 10, total: 10 });
    await until(() => session.progress === null);

    s.notify("findings.changed", { paths: ["people/a.md"], counts: { broken_link: 1 }, total: 1 });
    s.notify("wrote", { paths: ["people/b.md"], reason: "footer" });
    await until(() => changed.length === 2);
    expect(session.statusBar.text).toBe("Palinode · 1 finding");
    expect(changed).toEqual([["people/a.md"], ["people/b.md"]]);
  });
});
