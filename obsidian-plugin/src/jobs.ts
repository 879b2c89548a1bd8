/**
 * Long work in the sidecar (extract, consolidate, reindex) as jobs: `X.start` answers at once with
 * a job id; `job.progress` and `job.done` arrive as notifications. `runJob` turns that into one
 * promise, reporting progress on the way and offering cancel. Imports nothing from `obsidian`.
 */
import { RpcError } from "./client";
import type { JobInfo, MethodName, Notifications, ParamsOf, ResultOf } from "./protocol";

/** The part of the client a job needs (SidecarClient provides it). */
export interface JobClient {
  call<M extends MethodName>(method: M, params: ParamsOf<M>, opts?: { timeoutMs?: number }): Promise<ResultOf<M>>;
  onNotification<N extends keyof Notifications>(method: N, listener: (params: Notifications[N]) => void): () => void;
}

export interface JobProgress {
  kind: string;
  done: number;
  total: number;
  message: string;
}

/** What the person sees while a job runs (Obsidian: a notice with a Cancel button). */
export interface JobDisplay {
  update(progress: JobProgress): void;
  close(): void;
}

export type StartMethod = "extract.start" | "consolidate.start" | "reindex.start";

/** The job was cancelled by the person; nothing more to say. */
export class JobCancelled extends Error {
  constructor(readonly kind: string) {
    super(`${kind} cancelled`);
    this.name = "JobCancelled";
  }
}

/** "extracting 1/3 — the model is reading the text". */
export function jobProgressText(p: JobProgress): string {
  const word: Record<string, string> = { extract: "Extracting", consolidate: "Consolidating", reindex: "Re-indexing" };
  const head = `Palinode: ${word[p.kind] ?? p.kind}`;
  const count = p.total ? ` ${Math.min(p.done, p.total)}/${p.total}` : "…";
  return `${head}${count}${p.message ? ` — ${p.message}` : ""}`;
}

/**
 * Starts a job and resolves with its result when `job.done` says so; rejects with the job's error,
 * or with JobCancelled. `display(cancel)` is shown while it runs. A `job.get` every `pollMs` covers
 * a notification lost to a reconnect.
 */
export async function runJob<T>(
  client: JobClient,
  method: StartMethod,
  params: ParamsOf<StartMethod>,
  display?: (cancel: (() => void) | null) => JobDisplay,
  pollMs = 5000,
): Promise<T> {
  // Listen before starting: the job's first notifications may arrive before the answer that
  // names it. Until then they are kept, and replayed once the id is known.
  let job: JobInfo | null = null;
  const early: (["progress", Notifications["job.progress"]] | ["done", Notifications["job.done"]])[] = [];
  let onProgress: (p: Notifications["job.progress"]) => void = (p) => void early.push(["progress", p]);
  let onDone: (end: Notifications["job.done"]) => void = (end) => void early.push(["done", end]);
  const offs: (() => void)[] = [
    client.onNotification("job.progress", (p) => onProgress(p)),
    client.onNotification("job.done", (end) => onDone(end)),
  ];
  let view: JobDisplay | undefined;
  try {
    job = await client.call(method, params);
    const started: JobInfo = job;
    return await new Promise<T>((resolve, reject) => {
      const finish = (end: { state: string; result?: unknown; error?: string }) => {
        if (end.state === "done") resolve(end.result as T);
        else if (end.state === "cancelled") reject(new JobCancelled(started.kind));
        else reject(new RpcError(-32000, end.error ?? `${started.kind} failed`));
      };
      onProgress = (p) => {
        if (p.id === started.id) view?.update(p);
      };
      onDone = (end) => {
        if (end.id === started.id) finish(end);
      };
      const cancel = started.cancellable
        ? () => {
            client.call("job.cancel", { id: started.id }).catch(() => undefined);
          }
        : null;
      view = display?.(cancel);
      view?.update(started);
      for (const [kind, event] of early.splice(0)) {
        if (kind === "progress") onProgress(event);
        else onDone(event);
      }
      const timer = window.setInterval(() => {
        client.call("job.get", { id: started.id }).then(
          (info: JobInfo) => {
            if (info.state !== "running") finish(info);
          },
          () => undefined, // not connected right now: the next poll or the notification will tell
        );
      }, pollMs);
      offs.push(() => window.clearInterval(timer));
      if (started.state !== "running") finish(started);
    });
  } finally {
    for (const off of offs) off();
    view?.close();
  }
}
