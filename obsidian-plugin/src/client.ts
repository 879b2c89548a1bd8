/**
 * The connection to the palinode-vault sidecar: discovery, JSON-RPC 2.0 over a WebSocket, hard
 * timeouts, reconnection with backoff, notifications and the sidecar's requests (`apply_edit`).
 *
 * Imports nothing from `obsidian`: the WebSocket constructor and the way to read the discovery
 * file are given by the caller (Obsidian's global WebSocket and vault adapter in the app, the
 * `ws` package and the file system in Node tests).
 */
import {
  ErrorCode,
  type MethodName,
  type Notifications,
  type ParamsOf,
  type ResultOf,
} from "./protocol";

/** Where the sidecar announces itself, relative to the vault root. */
export const DISCOVERY_PATH = ".palinode/sidecar.json";

/** What `.palinode/sidecar.json` holds. */
export interface SidecarInfo {
  port: number;
  token: string;
  pid?: number;
  version?: string;
  vault?: string;
  started?: string;
}

export type Discovery =
  | { ok: true; info: SidecarInfo }
  | { ok: false; reason: "missing" | "invalid"; message: string };

/** The small part of the WebSocket API the client uses (browser and `ws` both provide it). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code?: number; reason?: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export type SocketConstructor = new (url: string) => SocketLike;

/** An error answered by the sidecar, or raised by the client (timeout, not connected). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/**
 * Reads and checks the discovery file. `read` reads a vault-relative path (Obsidian:
 * `app.vault.adapter.read`) and rejects when the file is not there.
 */
export async function discoverSidecar(read: (path: string) => Promise<string>): Promise<Discovery> {
  let text: string;
  try {
    text = await read(DISCOVERY_PATH);
  } catch {
    return { ok: false, reason: "missing", message: `${DISCOVERY_PATH} not found` };
  }
  return parseDiscovery(text);
}

/** Parses the discovery file's text; a clear message when it is not what the sidecar writes. */
export function parseDiscovery(text: string): Discovery {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, reason: "invalid", message: `${DISCOVERY_PATH} is not JSON` };
  }
  const d = data as Partial<SidecarInfo> | null;
  if (!d || typeof d !== "object" || !Number.isInteger(d.port) || typeof d.token !== "string" || !d.token) {
    return { ok: false, reason: "invalid", message: `${DISCOVERY_PATH} has no port and token` };
  }
  return { ok: true, info: d as SidecarInfo };
}

/** The WebSocket URL of a sidecar, token in the query (a browser WebSocket cannot set headers). */
export function sidecarUrl(info: Pick<SidecarInfo, "port" | "token">): string {
  return `ws://127.0.0.1:${info.port}/rpc?token=${encodeURIComponent(info.token)}`;
}

/** Delay before reconnect attempt number `attempt` (0-based): exponential, capped. */
export function backoffDelay(attempt: number, initialMs = 500, maxMs = 30_000, factor = 2): number {
  return Math.min(maxMs, initialMs * Math.pow(factor, Math.max(0, attempt)));
}

export type ConnectionState =
  | "idle" // not started
  | "connecting"
  | "connected"
  | "not-running" // no discovery file, or nothing listens on its port
  | "refused" // the sidecar is up but refused the handshake (token)
  | "stopped";

export interface ClientOptions {
  WebSocket: SocketConstructor;
  /** Finds the sidecar before each connection attempt (it may restart on a new port). */
  locate: () => Promise<Discovery>;
  /** Answers whether a sidecar listens on this port (`GET /health`); tells "refused" from "not running". */
  health?: (port: number) => Promise<boolean>;
  /** Absolute vault path, for the "how to start it" message. */
  vaultPath?: string;
  timeoutMs?: number;
  backoff?: { initialMs?: number; maxMs?: number; factor?: number };
  /** Reconnect after a lost or failed connection (default true). */
  reconnect?: boolean;
}

type Pending = {
  method: string;
  resolve: (value: unknown) => void;
  reject: (err: RpcError) => void;
  timer: number;
};

/** May return a promise; its value is the answer. */
type RequestHandler = (params: unknown) => unknown;

/** The message shown when the sidecar is not there: what to run, never a stack trace. */
export function notRunningMessage(vaultPath?: string): string {
  return `Palinode sidecar not running — start it with \`palinode-vault serve --vault ${vaultPath || "…"}\``;
}

/** A JSON-RPC message from the sidecar, as far as the client reads it (every field checked before use). */
interface IncomingMessage {
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown } | null;
}

/** The plugin's connection to one sidecar. */
export class SidecarClient {
  state: ConnectionState = "idle";
  /** One line for the person about the connection (status bar tooltip, view header). */
  statusMessage = "Palinode: not connected";
  info: SidecarInfo | null = null;

  private socket: SocketLike | null = null;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private notificationListeners = new Map<string, Set<(params: unknown) => void>>();
  private stateListeners = new Set<(state: ConnectionState, message: string) => void>();
  private requestHandlers = new Map<string, RequestHandler>();
  private attempt = 0;
  private retryTimer: number | null = null;
  private running = false;
  /** Hard timeout of each call in ms (settings may change it). */
  timeoutMs: number;

  constructor(private readonly options: ClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** Starts connecting; keeps reconnecting with backoff until `stop()`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempt = 0;
    void this.connect();
  }

  /** Closes the connection and stops reconnecting; pending calls fail. */
  stop(): void {
    this.running = false;
    if (this.retryTimer) window.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      // No-op handlers, not null: closing a socket that is still connecting reports an error
      // event, which must go somewhere.
      socket.onclose = () => undefined;
      socket.onerror = () => undefined;
      socket.onmessage = () => undefined;
      socket.onopen = () => undefined;
      try {
        socket.close(1000, "plugin stopped");
      } catch {
        // already closed
      }
    }
    this.failPending(ErrorCode.CONNECTION_CLOSED, "Palinode connection closed");
    this.setState("stopped", "Palinode: stopped");
  }

  /** Reconnects now (after settings change, or from the status bar). */
  restart(): void {
    this.stop();
    this.start();
  }

  /** Resolves when connected; rejects after `timeoutMs`, or at once when the client has given up. */
  waitConnected(timeoutMs = this.timeoutMs): Promise<void> {
    if (this.state === "connected") return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = window.setTimeout(() => {
        off();
        reject(new RpcError(ErrorCode.TIMEOUT, this.statusMessage));
      }, timeoutMs);
      const off = this.onState((state, message) => {
        const givenUp = state === "stopped" || (this.options.reconnect === false && (state === "not-running" || state === "refused"));
        if (state === "connected" || givenUp) {
          window.clearTimeout(timer);
          off();
          if (state === "connected") resolve();
          else reject(new RpcError(ErrorCode.NOT_CONNECTED, message));
        }
      });
    });
  }

  /** Calls a sidecar method; rejects with an `RpcError` on error, timeout or no connection. */
  call<M extends MethodName>(method: M, params: ParamsOf<M>, opts: { timeoutMs?: number } = {}): Promise<ResultOf<M>> {
    return this.request(method, params, opts) as Promise<ResultOf<M>>;
  }

  /** Untyped call, for methods not in `Methods`. */
  request(method: string, params: unknown, opts: { timeoutMs?: number } = {}): Promise<unknown> {
    const socket = this.socket;
    if (this.state !== "connected" || !socket) {
      return Promise.reject(new RpcError(ErrorCode.NOT_CONNECTED, this.statusMessage));
    }
    const id = this.nextId++;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = window.setTimeout(() => {
        this.pending.delete(id);
        reject(
          new RpcError(
            ErrorCode.TIMEOUT,
            `Palinode sidecar did not answer ${method} within ${Math.round(timeoutMs / 100) / 10} s`,
          ),
        );
      }, timeoutMs);
      this.pending.set(id, { method, resolve, reject, timer });
      try {
        socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params: params ?? {} }));
      } catch (err) {
        window.clearTimeout(timer);
        this.pending.delete(id);
        reject(new RpcError(ErrorCode.CONNECTION_CLOSED, `Palinode: could not send ${method}: ${messageOf(err)}`));
      }
    });
  }

  /** Listens to a notification; returns the function that stops listening. */
  onNotification<N extends keyof Notifications>(method: N, listener: (params: Notifications[N]) => void): () => void;
  onNotification(method: string, listener: (params: unknown) => void): () => void;
  onNotification(method: string, listener: (params: unknown) => void): () => void {
    let set = this.notificationListeners.get(method);
    if (!set) this.notificationListeners.set(method, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Answers the sidecar's requests of this method (e.g. `apply_edit`). */
  onRequest(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler);
  }

  /** Listens to connection state changes; returns the function that stops listening. */
  onState(listener: (state: ConnectionState, message: string) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private setState(state: ConnectionState, message: string): void {
    this.state = state;
    this.statusMessage = message;
    for (const l of [...this.stateListeners]) {
      try {
        l(state, message);
      } catch {
        // a listener's failure must not break the connection
      }
    }
  }

  private async connect(): Promise<void> {
    if (!this.running) return;
    this.setState("connecting", "Palinode: connecting…");
    let found: Discovery;
    try {
      found = await this.options.locate();
    } catch (err) {
      found = { ok: false, reason: "invalid", message: messageOf(err) };
    }
    if (!this.running) return;
    if (!found.ok) {
      const why = found.reason === "missing" ? "" : ` (${found.message})`;
      this.setState("not-running", notRunningMessage(this.options.vaultPath) + why);
      this.scheduleRetry();
      return;
    }
    const info = found.info;
    this.info = info;
    let socket: SocketLike;
    try {
      socket = new this.options.WebSocket(sidecarUrl(info));
    } catch (err) {
      this.setState("not-running", `${notRunningMessage(this.options.vaultPath)} (${messageOf(err)})`);
      this.scheduleRetry();
      return;
    }
    this.socket = socket;
    let opened = false;
    let errorText = "";
    socket.onopen = () => {
      opened = true;
      this.attempt = 0;
      this.setState("connected", `Palinode: connected to sidecar ${info.version ?? ""} on port ${info.port}`.trim());
    };
    socket.onmessage = (ev) => this.receive(socket, ev.data);
    socket.onerror = (ev) => {
      const e = ev as { message?: string; error?: unknown } | null;
      errorText = messageOf(e?.message ?? e?.error ?? "");
    };
    socket.onclose = (ev) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.failPending(ErrorCode.CONNECTION_CLOSED, "Palinode: the connection to the sidecar closed");
      if (!this.running) return;
      if (opened) {
        this.setState("connecting", `Palinode: connection lost (${ev?.code ?? "?"}); reconnecting…`);
        this.scheduleRetry();
      } else {
        void this.explainFailure(info, errorText).then(() => this.scheduleRetry());
      }
    };
  }

  /** Why a handshake failed: a refused token (the sidecar is up) or no sidecar at all. */
  private async explainFailure(info: SidecarInfo, errorText: string): Promise<void> {
    let up = /\b40[13]\b/.test(errorText);
    if (!up && this.options.health) {
      try {
        up = await this.options.health(info.port);
      } catch {
        up = false;
      }
    }
    if (!this.running) return;
    if (up) {
      this.setState(
        "refused",
        "Palinode sidecar refused the connection (wrong token or origin) — check the token in settings, or restart `palinode-vault serve`",
      );
    } else {
      this.setState("not-running", notRunningMessage(this.options.vaultPath));
    }
  }

  private scheduleRetry(): void {
    if (!this.running || this.options.reconnect === false) return;
    const b = this.options.backoff ?? {};
    const delay = backoffDelay(this.attempt++, b.initialMs, b.maxMs, b.factor);
    if (this.retryTimer) window.clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, delay);
  }

  private failPending(code: number, message: string): void {
    for (const [id, p] of this.pending) {
      window.clearTimeout(p.timer);
      p.reject(new RpcError(code, `${message} (while waiting for ${p.method})`));
      this.pending.delete(id);
    }
  }

  private receive(socket: SocketLike, raw: unknown): void {
    let msg: unknown;
    try {
      msg = JSON.parse(typeof raw === "string" ? raw : String(raw));
    } catch {
      return; // not JSON: nothing sensible to answer
    }
    const messages = Array.isArray(msg) ? msg : [msg];
    for (const m of messages) this.dispatch(socket, m);
  }

  private dispatch(socket: SocketLike, raw: unknown): void {
    if (!raw || typeof raw !== "object") return;
    const m = raw as IncomingMessage;
    if (typeof m.method === "string") {
      if (m.id === undefined || m.id === null) {
        for (const l of [...(this.notificationListeners.get(m.method) ?? [])]) {
          try {
            l(m.params ?? {});
          } catch {
            // a listener's failure must not break the connection
          }
        }
        return;
      }
      void this.answer(socket, m.id, m.method, m.params);
      return;
    }
    if (typeof m.id !== "number") return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    window.clearTimeout(p.timer);
    if (m.error) {
      const message = typeof m.error.message === "string" ? m.error.message : "error";
      p.reject(new RpcError(Number(m.error.code) || ErrorCode.INTERNAL, message, m.error.data));
    } else {
      p.resolve(m.result);
    }
  }

  private async answer(socket: SocketLike, id: unknown, method: string, params: unknown): Promise<void> {
    const handler = this.requestHandlers.get(method);
    let reply: object;
    if (!handler) {
      reply = { jsonrpc: "2.0", id, error: { code: ErrorCode.METHOD_NOT_FOUND, message: `plugin has no method ${method}` } };
    } else {
      try {
        reply = { jsonrpc: "2.0", id, result: await handler(params ?? {}) };
      } catch (err) {
        reply = { jsonrpc: "2.0", id, error: { code: ErrorCode.INTERNAL, message: messageOf(err) } };
      }
    }
    try {
      socket.send(JSON.stringify(reply));
    } catch {
      // the connection went away; the sidecar will time out and retry
    }
  }
}

/** A one-line message for any thrown value; never a stack trace. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}
