/** Rpcs that answer from recorded sidecar results (for tests that need no sidecar). */
import { MEMORY_TYPES, categoryOf } from "../../src/categories";
import { RpcError } from "../../src/client";
import type { InboxItem } from "../../src/protocol";
import type { Rpc } from "../../src/side-view-model";

export interface Recording {
  path: string;
  answers: Record<string, { result?: unknown; error?: { code: number; message: string } }>;
}

/** `graph.neighbourhood` with depth 2 is recorded under `graph.neighbourhood@2`. */
export function recordedRpc(recording: Recording, calls: { method: string; params: unknown }[] = []): Rpc {
  return (async (method: string, params: any) => {
    calls.push({ method, params });
    const key = method === "graph.neighbourhood" && params?.depth === 2 ? "graph.neighbourhood@2" : method;
    const answer = recording.answers[key];
    if (!answer) throw new RpcError(-32601, `not recorded: ${method}`);
    if (answer.error) throw new RpcError(answer.error.code, answer.error.message);
    return structuredClone(answer.result);
  }) as Rpc;
}

/**
 * Wraps `rpc` with a small in-memory inbox, for the review buttons: `inbox.list` answers what is
 * still waiting; `inbox.approve` moves a note to its type's folder (or `as_type`'s) and `inbox.reject` to
 * archive/inbox/, both taking it off the list (as the sidecar does). Anything else goes to `rpc`.
 */
export function withInbox(rpc: Rpc, items: InboxItem[], calls: { method: string; params: unknown }[] = []): Rpc {
  const waiting = structuredClone(items);
  const take = (path: string): InboxItem => {
    const i = waiting.findIndex((x) => x.path === path);
    if (i < 0) throw new RpcError(-32602, `${path} is not an inbox note waiting for review`);
    return waiting.splice(i, 1)[0];
  };
  const name = (path: string) => path.split("/").pop()!;
  const folderOf = (type: string) => (MEMORY_TYPES.find((c) => c.type === type) ?? categoryOf(type))?.folder ?? "notes";
  return (async (method: string, params: any) => {
    if (method === "inbox.list") {
      calls.push({ method, params });
      return { items: structuredClone(waiting) };
    }
    if (method === "inbox.approve" || method === "inbox.reject") {
      calls.push({ method, params });
      const item = take(params.path);
      const to =
        method === "inbox.approve" ? `${folderOf(params.as_type ?? item.type)}/${name(item.path)}` : `archive/inbox/${name(item.path)}`;
      return { path: to, written: [item.path, to], run: `r${calls.length}` };
    }
    return rpc(method as any, params);
  }) as Rpc;
}
