import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  DISCOVERY_PATH,
  RpcError,
  SidecarClient,
  backoffDelay,
  discoverSidecar,
  notRunningMessage,
  parseDiscovery,
  sidecarUrl,
  type ClientOptions,
  type SocketConstructor,
} from "../../src/client";
import { ErrorCode } from "../../src/protocol";
import { FakeSidecar, NO_REPLY, until } from "../helpers/fake-sidecar";

const Socket = WebSocket as unknown as SocketConstructor;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function sidecar(): Promise<FakeSidecar> {
  const s = await new FakeSidecar().listen();
  cleanups.push(() => s.close());
  return s;
}

function client(options: Partial<ClientOptions> & Pick<ClientOptions, "locate">): SidecarClient {
  const c = new SidecarClient({ WebSocket: Socket, backoff: { initialMs: 20, maxMs: 100 }, timeoutMs: 2000, ...options });
  cleanups.push(() => c.stop());
  return c;
}

describe("discovery", () => {
  it("reads .palinode/sidecar.json through the given reader", async () => {
    const seen: string[] = [];
    const found = await discoverSidecar(async (p) => {
      seen.push(p);
      return '{"port": 53121, "token": "abc", "pid": 1, "version": "0.1.0"}';
    });
    expect(seen).toEqual([DISCOVERY_PATH]);
    expect(found).toEqual({ ok: true, info: { port: 53121, token: "abc", pid: 1, version: "0.1.0" } });
  });

  it("says missing when the file cannot be read", async () => {
    const found = await discoverSidecar(() => Promise.reject(new Error("ENOENT")));
    expect(found).toMatchObject({ ok: false, reason: "missing" });
  });

  it("rejects files without a port and token", () => {
    expect(parseDiscovery("not json")).toMatchObject({ ok: false, reason: "invalid" });
    expect(parseDiscovery('{"port": "x", "token": "t"}')).toMatchObject({ ok: false, reason: "invalid" });
    expect(parseDiscovery('{"port": 1}')).toMatchObject({ ok: false, reason: "invalid" });
  });

  it("builds a loopback URL with the token in the query", () => {
    expect(sidecarUrl({ port: 4000, token: "a/b+c" })).toBe("ws://127.0.0.1:4000/rpc?token=a%2Fb%2Bc");
  });
});

describe("backoff", () => {
  it("doubles from the initial delay up to the cap", () => {
    expect([0, 1, 2, 3, 10].map((a) => backoffDelay(a, 500, 30_000))).toEqual([500, 1000, 2000, 4000, 30_000]);
  });
});

describe("SidecarClient", () => {
  it("connects, calls methods and reports the connection", async () => {
    const s = await sidecar();
    s.on("status", () => ({ version: "0.1.0", findings: { broken_link: 2 } }));
    const c = client({ locate: async () => parseDiscovery(s.discovery()) });
    c.start();
    await c.waitConnected();
    expect(c.state).toBe("connected");
    expect(c.statusMessage).toContain(`port ${s.port}`);
    const status = await c.call("status", {});
    expect(status.findings).toEqual({ broken_link: 2 });
    expect(s.calls).toEqual([{ method: "status", params: {} }]);
  });

  it("turns error answers into RpcError with the sidecar's code and message", async () => {
    const s = await sidecar();
    s.on("related", () => {
      throw Object.assign(new Error("no embedding model: run `palinode-vault models prepare`"), { code: -32013 });
    });
    const c = client({ locate: async () => parseDiscovery(s.discovery()) });
    c.start();
    await c.waitConnected();
    const err = await c.call("related", { path: "a.md" }).catch((e) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err.code).toBe(ErrorCode.NOT_AVAILABLE);
    expect(err.message).toContain("models prepare");
  });

  it("gives up on a call after the hard timeout", async () => {
    const s = await sidecar();
    s.on("lint", () => NO_REPLY);
    const c = client({ locate: async () => parseDiscovery(s.discovery()), timeoutMs: 150 });
    c.start();
    await c.waitConnected();
    const t0 = Date.now();
    const err = await c.call("lint", {}).catch((e) => e);
    expect(err.code).toBe(ErrorCode.TIMEOUT);
    expect(err.message).toContain("did not answer lint");
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it("refuses calls while not connected, with the how-to-start message", async () => {
    const c = client({ locate: async () => ({ ok: false, reason: "missing", message: "" }), vaultPath: "/home/me/vault" });
    c.start();
    await until(() => c.state === "not-running");
    expect(c.statusMessage).toBe("Palinode sidecar not running — start it with `palinode-vault serve --vault /home/me/vault`");
    const err = await c.call("status", {}).catch((e) => e);
    expect(err.code).toBe(ErrorCode.NOT_CONNECTED);
    expect(err.message).toBe(notRunningMessage("/home/me/vault"));
    expect(err.message).not.toMatch(/at .*\.ts:\d+/); // never a stack trace
  });

  it("says not running when the discovery file points at a closed port", async () => {
    const s = await sidecar();
    const stale = s.discovery();
    await s.close();
    const c = client({ locate: async () => parseDiscovery(stale), reconnect: false });
    c.start();
    await until(() => c.state === "not-running");
    expect(c.statusMessage).toContain("palinode-vault serve");
  });

  it("says refused when the token is wrong", async () => {
    const s = await sidecar();
    const c = client({ locate: async () => parseDiscovery(s.discovery("wrong")), reconnect: false });
    c.start();
    await until(() => c.state === "refused");
    expect(c.statusMessage).toContain("refused");
    expect(s.calls).toEqual([]);
  });

  it("tells refused from not running with the health check when the socket error says nothing", async () => {
    const s = await sidecar();
    // A browser WebSocket reports no HTTP status; emulate it with a constructor that hides it.
    class QuietSocket extends (WebSocket as any) {
      constructor(url: string) {
        super(url);
        this.on("error", () => undefined);
      }
      set onerror(_f: unknown) {}
      get onerror() {
        return null;
      }
    }
    let asked = 0;
    const c = client({
      WebSocket: QuietSocket as unknown as SocketConstructor,
      locate: async () => parseDiscovery(s.discovery("wrong")),
      health: async (port) => {
        asked++;
        return (await fetch(`http://127.0.0.1:${port}/health`)).ok;
      },
      reconnect: false,
    });
    c.start();
    await until(() => c.state === "refused");
    expect(asked).toBe(1);
  });

  it("reconnects with backoff after the connection drops, re-reading discovery", async () => {
    const s = await sidecar();
    s.on("status", () => ({ ok: 1 }));
    let located = 0;
    const c = client({
      locate: async () => {
        located++;
        return parseDiscovery(s.discovery());
      },
    });
    const states: string[] = [];
    c.onState((st) => states.push(st));
    c.start();
    await c.waitConnected();
    s.dropConnections();
    await until(() => c.state !== "connected");
    await c.waitConnected(3000);
    expect(located).toBeGreaterThanOrEqual(2);
    expect(states.filter((x) => x === "connected").length).toBe(2);
    expect(await c.call("status", {})).toEqual({ ok: 1 });
  });

  it("keeps retrying until a sidecar appears", async () => {
    let text: string | null = null;
    const c = client({ locate: async () => (text ? parseDiscovery(text) : { ok: false, reason: "missing", message: "" }) });
    c.start();
    await until(() => c.state === "not-running");
    const s = await sidecar();
    text = s.discovery();
    await c.waitConnected(3000);
    expect(c.state).toBe("connected");
  });

  it("fails pending calls when the connection closes", async () => {
    const s = await sidecar();
    s.on("lint", () => NO_REPLY);
    const c = client({ locate: async () => parseDiscovery(s.discovery()), reconnect: false });
    c.start();
    await c.waitConnected();
    const pending = c.call("lint", {}).catch((e) => e);
    await until(() => s.calls.length === 1);
    s.dropConnections();
    const err = await pending;
    expect(err.code).toBe(ErrorCode.CONNECTION_CLOSED);
    expect(err.message).toContain("lint");
  });

  it("dispatches notifications to their listeners", async () => {
    const s = await sidecar();
    const c = client({ locate: async () => parseDiscovery(s.discovery()) });
    const got: unknown[] = [];
    const off = c.onNotification("findings.changed", (p) => got.push(p));
    c.onNotification("progress", () => {
      throw new Error("a broken listener must not break the client");
    });
    c.start();
    await c.waitConnected();
    s.notify("progress", { phase: "index", done: 1, total: 2 });
    s.notify("findings.changed", { paths: ["a.md"], counts: { broken_link: 1 }, total: 1 });
    await until(() => got.length === 1);
    expect(got[0]).toEqual({ paths: ["a.md"], counts: { broken_link: 1 }, total: 1 });
    off();
    s.notify("findings.changed", { paths: ["b.md"], counts: {}, total: 0 });
    await new Promise((r) => setTimeout(r, 50));
    expect(got.length).toBe(1);
    expect(c.state).toBe("connected");
  });

  it("answers the sidecar's requests, and unknown ones with method not found", async () => {
    const s = await sidecar();
    const c = client({ locate: async () => parseDiscovery(s.discovery()) });
    c.onRequest("apply_edit", async (p: any) => ({ applied: p.path === "ok.md" }));
    c.start();
    await c.waitConnected();
    await until(() => s.sockets.size === 1);
    expect(await s.request("apply_edit", { path: "ok.md" })).toMatchObject({ result: { applied: true } });
    expect(await s.request("nope", {})).toMatchObject({ error: { code: -32601 } });
  });

  it("answers a failing handler with an error message, not a stack", async () => {
    const s = await sidecar();
    const c = client({ locate: async () => parseDiscovery(s.discovery()) });
    c.onRequest("apply_edit", () => {
      throw new Error("disk full");
    });
    c.start();
    await c.waitConnected();
    await until(() => s.sockets.size === 1);
    const reply = await s.request("apply_edit", {});
    expect(reply.error).toEqual({ code: -32603, message: "disk full" });
  });

  it("stops: closes the socket and does not reconnect", async () => {
    const s = await sidecar();
    const c = client({ locate: async () => parseDiscovery(s.discovery()) });
    c.start();
    await c.waitConnected();
    c.stop();
    expect(c.state).toBe("stopped");
    await until(() => s.sockets.size === 0);
    await new Promise((r) => setTimeout(r, 150));
    expect(s.sockets.size).toBe(0);
  });
});

describe("waitConnected", () => {
  it("rejects at once, with the status message, when a client that does not reconnect gives up", async () => {
    const c = new SidecarClient({
      WebSocket: Socket,
      locate: async () => ({ ok: false, reason: "missing", message: "" }),
      reconnect: false,
      vaultPath: "/v",
    });
    const t0 = Date.now();
    const waiting = c.waitConnected(5000).catch((e) => e);
    c.start();
    const err = await waiting;
    expect(err.message).toBe(notRunningMessage("/v"));
    expect(Date.now() - t0).toBeLessThan(1000);
    c.stop();
  });
});
