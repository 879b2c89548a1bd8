/**
 * The plugin's live picture of the sidecar: connection state, findings in the vault, progress of
 * long work. Fed by the client's state and notifications; read by the status bar and the views.
 */
import type { ConnectionState, SidecarClient } from "./client";
import type { SidecarProcessState } from "./sidecar-process";
import { statusBarModel, totalOf, type Progress, type StatusBarModel } from "./status-bar";

export class SidecarSession {
  findingsTotal: number | null = null;
  findingCounts: Record<string, number> = {};
  progress: Progress | null = null;
  /** The plugin's own sidecar process, when it manages one. */
  sidecarProcess: { state: SidecarProcessState; message: string } | null = null;
  private listeners = new Set<() => void>();
  private pathListeners = new Set<(paths: string[]) => void>();
  private offs: (() => void)[] = [];

  constructor(readonly client: SidecarClient) {
    this.offs.push(
      client.onState((state) => this.stateChanged(state)),
      client.onNotification("findings.changed", (p) => {
        this.findingCounts = p.counts ?? {};
        this.findingsTotal = typeof p.total === "number" ? p.total : totalOf(p.counts);
        this.changed();
        this.pathsChanged(p.paths ?? []);
      }),
      client.onNotification("progress", (p) => {
        this.progress = p.done >= p.total ? null : p;
        this.changed();
      }),
      client.onNotification("wrote", (p) => this.pathsChanged(p.paths ?? [])),
      // A job's progress shows in the status bar like the sidecar's own long work.
      client.onNotification("job.progress", (p) => {
        this.progress = p.done >= p.total ? null : { phase: p.kind, done: p.done, total: p.total };
        this.changed();
      }),
      client.onNotification("job.done", () => {
        this.progress = null;
        this.changed();
      }),
    );
  }

  /** What the status bar shows now. */
  get statusBar(): StatusBarModel {
    return statusBarModel({
      state: this.client.state,
      message: this.client.statusMessage,
      findingsTotal: this.findingsTotal,
      progress: this.progress,
      sidecar: this.sidecarProcess,
    });
  }

  /** Called by the plugin when its sidecar process changes state. */
  setSidecarProcess(state: SidecarProcessState, message: string): void {
    this.sidecarProcess = { state, message };
    this.changed();
  }

  /** Called on any change of what the status bar shows. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called with the notes whose findings or text changed (to refresh a view showing them). */
  onPathsChanged(listener: (paths: string[]) => void): () => void {
    this.pathListeners.add(listener);
    return () => this.pathListeners.delete(listener);
  }

  /** Asks the sidecar for the vault's findings count (after connecting, after a lint). */
  async refreshStatus(): Promise<void> {
    try {
      const status = await this.client.call("status", {});
      this.findingCounts = status.findings ?? {};
      this.findingsTotal = totalOf(status.findings);
      this.changed();
    } catch {
      // the status bar keeps the last known count; the connection state says what is wrong
    }
  }

  dispose(): void {
    for (const off of this.offs) off();
    this.listeners.clear();
    this.pathListeners.clear();
  }

  private stateChanged(state: ConnectionState): void {
    if (state !== "connected") this.progress = null;
    this.changed();
    if (state === "connected") void this.refreshStatus();
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }

  private pathsChanged(paths: string[]): void {
    for (const l of [...this.pathListeners]) l(paths);
  }
}
