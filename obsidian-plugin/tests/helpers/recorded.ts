/** An Rpc that answers from a recording of sidecar results (for tests that need no sidecar). */
import { RpcError } from "../../src/client";
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
