/**
 * A small JSON-RPC WebSocket server for the client's unit tests: token check at the handshake,
 * scripted method handlers, notifications and server→client requests. Not the real sidecar (the
 * integration tests use that); this one lets tests make it slow, drop connections, or answer badly.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

type Handler = (params: any) => unknown | Promise<unknown>;

export class FakeSidecar {
  readonly token = "t0ken-" + Math.random().toString(36).slice(2);
  port = 0;
  handlers = new Map<string, Handler>();
  calls: { method: string; params: any }[] = [];
  sockets = new Set<WebSocket>();
  private http: Server;
  private wss: WebSocketServer;
  private nextId = 1000;
  private waiting = new Map<number, (msg: any) => void>();

  constructor() {
    this.http = createServer((req, res) => {
      if (req.url === "/health") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok": true, "version": "0.1.0"}');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    this.wss = new WebSocketServer({ noServer: true });
    this.http.on("upgrade", (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (url.pathname !== "/rpc" || url.searchParams.get("token") !== this.token) {
        socket.write("HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\n\r\nwrong token\n");
        socket.destroy();
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
  }

  async listen(port = 0): Promise<this> {
    await new Promise<void>((resolve) => this.http.listen(port, "127.0.0.1", resolve));
    this.port = (this.http.address() as AddressInfo).port;
    return this;
  }

  discovery(token = this.token): string {
    return JSON.stringify({ port: this.port, token, pid: process.pid, version: "0.1.0" });
  }

  on(method: string, handler: Handler): this {
    this.handlers.set(method, handler);
    return this;
  }

  notify(method: string, params: unknown): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  /** Sends a request to the (first) connected client and resolves with its whole reply. */
  request(method: string, params: unknown): Promise<any> {
    const ws = [...this.sockets][0];
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  dropConnections(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private accept(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on("close", () => this.sockets.delete(ws));
    ws.on("message", async (data) => {
      const msg = JSON.parse(String(data));
      if (msg.method === undefined) {
        this.waiting.get(msg.id)?.(msg);
        this.waiting.delete(msg.id);
        return;
      }
      this.calls.push({ method: msg.method, params: msg.params });
      const handler = this.handlers.get(msg.method);
      if (!handler) {
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } }));
        return;
      }
      try {
        const result = await handler(msg.params);
        if (result === NO_REPLY) return;
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
      } catch (err: any) {
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: err.code ?? -32603, message: err.message } }));
      }
    });
  }
}

/** Return this from a handler to never answer (for timeout tests). */
export const NO_REPLY = Symbol("no reply");

/** Waits until `check()` is true, polling; fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
