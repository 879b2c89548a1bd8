/** Long work as jobs: the plugin side (runJob, the extract command's job flow) against a fake sidecar. */
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { extractMemories, type PalinodeUI } from "../../src/actions";
import { SidecarClient, type SocketConstructor } from "../../src/client";
import { JobCancelled, jobProgressText, runJob, type JobProgress } from "../../src/jobs";
import { FakeSidecar } from "../helpers/fake-sidecar";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function connected() {
  const sidecar = await new FakeSidecar().listen();
  const client = new SidecarClient({
    WebSocket: WebSocket as unknown as SocketConstructor,
    locate: async () => ({ ok: true, info: { port: sidecar.port, token: sidecar.token } }),
    timeoutMs: 2000,
  });
  cleanups.push(() => sidecar.close(), () => client.stop());
  client.start();
  await client.waitConnected(3000);
  return { sidecar, client };
}

const job = (id: string, kind = "extract") => ({ id, kind, state: "running", done: 0, total: 3, message: "", cancellable: true, seconds: 0 });

describe("jobs", () => {
  it("resolves with the result pushed in job.done, showing each progress step", async () => {
    const { sidecar, client } = await connected();
    sidecar.on("extract.start", () => {
      setTimeout(() => sidecar.notify("job.progress", { id: "extract-1", kind: "extract", done: 1, total: 3, message: "filing" }), 20);
      setTimeout(() => sidecar.notify("job.done", { id: "extract-1", kind: "extract", state: "done", result: { items: [] } }), 60);
      return job("extract-1");
    });
    const seen: JobProgress[] = [];
    let closed = false;
    const result = await runJob(client, "extract.start", { text: "x" }, () => ({ update: (p) => seen.push({ ...p }), close: () => (closed = true) }));
    expect(result).toEqual({ items: [] });
    expect(seen.map((p) => p.done)).toEqual([0, 1]);
    expect(jobProgressText(seen[1])).toBe("Palinode: Extracting 1/3 — filing");
    expect(closed).toBe(true);
  });

  it("keeps progress and the end that arrive before the answer naming the job", async () => {
    const { sidecar, client } = await connected();
    sidecar.on("reindex.start", () => {
      // pushed before the answer leaves: a fast job reports before its start is answered
      sidecar.notify("job.progress", { id: "reindex-1", kind: "reindex", done: 0, total: 8, message: "" });
      sidecar.notify("job.done", { id: "reindex-1", kind: "reindex", state: "done", result: { notes: 8 } });
      return { ...job("reindex-1", "reindex"), total: 0 };
    });
    const seen: { done: number; total: number }[] = [];
    const result = await runJob(client, "reindex.start", {}, () => ({ update: (p) => seen.push({ done: p.done, total: p.total }), close() {} }));
    expect(result).toEqual({ notes: 8 });
    expect(seen).toContainEqual({ done: 0, total: 8 });
  });

  it("cancels through job.cancel and says nothing was written", async () => {
    const { sidecar, client } = await connected();
    sidecar.on("extract.start", () => job("extract-2"));
    sidecar.on("job.cancel", ({ id }) => {
      setTimeout(() => sidecar.notify("job.done", { id, kind: "extract", state: "cancelled" }), 10);
      return { ...job(id), state: "running" };
    });
    const notices: string[] = [];
    const ui = {
      notice: (m: string) => notices.push(m),
      jobDisplay: (cancel: (() => void) | null) => {
        setTimeout(() => cancel?.(), 20); // the person presses Cancel
        return { update() {}, close() {} };
      },
    } as unknown as PalinodeUI;
    const rpc = (m: any, p: any) => client.call(m, p);
    expect(await extractMemories(rpc, ui, "User: remember this.", undefined, client)).toBeNull();
    expect(notices).toEqual(["Palinode: extract cancelled; nothing was written."]);
    expect(sidecar.calls.map((c) => c.method)).toContain("job.cancel");
  });

  it("rejects with the job's error, and finds the end by polling when the notification was lost", async () => {
    const { sidecar, client } = await connected();
    sidecar.on("consolidate.start", () => job("consolidate-1", "consolidate"));
    sidecar.on("job.get", ({ id }) => ({ ...job(id, "consolidate"), state: "failed", error: "PROGRAM.md line 9: bad number" }));
    const failing = runJob(client, "consolidate.start", { dry_run: true }, undefined, 50);
    await expect(failing).rejects.toThrow("PROGRAM.md line 9: bad number");
    await expect(failing).rejects.not.toBeInstanceOf(JobCancelled);
  });
});
