/**
 * Reporting which notes are open and when the person last typed (`editor.state`), throttled so a
 * burst of keystrokes costs at most one message per interval.
 */
import type { EditorStateParams } from "./protocol";

export interface EditorStateOptions {
  intervalMs?: number;
  now?: () => number;
}

/** Keeps the editor state and sends it at most once per `intervalMs` (first change at once). */
export class EditorStateReporter {
  private state: EditorStateParams = { active: null, open: [], last_keystroke: null };
  private lastSentAt = -Infinity;
  private lastSent = "";
  private timer: number | null = null;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly send: (state: EditorStateParams) => unknown,
    options: EditorStateOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 500;
    this.now = options.now ?? Date.now;
  }

  /** The state as it will be sent next. */
  get current(): EditorStateParams {
    return { ...this.state, open: [...this.state.open] };
  }

  /** The active note and the open notes changed. */
  setOpen(active: string | null, open: string[]): void {
    const uniq = [...new Set(open)].sort();
    this.state = { ...this.state, active, open: uniq };
    this.schedule();
  }

  /** The person typed in the active note. */
  keystroke(): void {
    this.state = { ...this.state, last_keystroke: this.now() };
    this.schedule();
  }

  /** Sends the current state now, even if unchanged (after a reconnect). */
  flush(): void {
    this.clearTimer();
    this.emit(true);
  }

  dispose(): void {
    this.clearTimer();
  }

  private schedule(): void {
    if (this.timer) return; // a send is already due; it will carry the newest state
    const wait = this.lastSentAt + this.intervalMs - this.now();
    if (wait <= 0) {
      this.emit(false);
      return;
    }
    this.timer = window.setTimeout(() => {
      this.timer = null;
      this.emit(false);
    }, wait);
  }

  private emit(force: boolean): void {
    const body = JSON.stringify(this.state);
    if (!force && body === this.lastSent) return;
    this.lastSent = body;
    this.lastSentAt = this.now();
    try {
      const r = this.send(this.current);
      if (r && typeof (r as Promise<unknown>).catch === "function") (r as Promise<unknown>).catch(() => undefined);
    } catch {
      // not connected: the next change or the reconnect flush sends it
    }
  }

  private clearTimer(): void {
    if (this.timer) window.clearTimeout(this.timer);
    this.timer = null;
  }
}
