/**
 * Starting and stopping the sidecar with Obsidian (desktop only): finds the `palinode-vault`
 * executable, adopts a sidecar that already serves this vault (discovery file + `/health`), or
 * spawns `palinode-vault serve --vault VAULT`, restarts it with backoff when it dies, gives up with
 * a clear message after repeated failures, and stops the process it started when Obsidian quits.
 *
 * Imports nothing from `obsidian` or Node: spawning, file checks and the health probe are given by
 * the caller (Node's `child_process` and `fs` in the app and in tests).
 */
import { backoffDelay } from "./client";

/** The part of Node's ChildProcess the supervisor uses. */
export interface ChildLike {
  readonly pid?: number;
  readonly exitCode: number | null;
  kill(signal?: string): boolean;
  once(event: "exit", listener: (code: number | null, signal: string | null) => void): unknown;
  once(event: "error", listener: (err: Error) => void): unknown;
  stdout?: { on(event: "data", listener: (chunk: unknown) => void): unknown } | null;
  stderr?: { on(event: "data", listener: (chunk: unknown) => void): unknown } | null;
}

export type SpawnFn = (command: string, args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; windowsHide?: boolean }) => ChildLike;

export type SidecarProcessState =
  | "off" // not managing anything (setting off, or stopped)
  | "searching" // looking for an adoptable sidecar or the executable
  | "starting" // spawned, waiting for /health
  | "running" // our child answers /health
  | "adopted" // a sidecar we did not start serves this vault
  | "restarting" // our child died; waiting out the backoff
  | "failed"; // gave up (no executable, or too many failures in a row)

export interface SidecarProcessOptions {
  vaultPath: string;
  spawn: SpawnFn;
  /** Candidate executables in order (see `executableCandidates`). */
  candidates: () => string[];
  /** Whether a candidate is an existing file. */
  isFile: (path: string) => Promise<boolean>;
  /** Whether a sidecar for this vault answers (discovery file + `/health`). */
  alive: () => Promise<boolean>;
  env?: Record<string, string | undefined>;
  /** Consecutive failed starts before giving up (default 5). */
  maxFailures?: number;
  /** A child that ran this long before dying resets the failure count (default 60 s). */
  stableMs?: number;
  /** How long a start may take before it counts as failed (default 120 s: models load). */
  startTimeoutMs?: number;
  pollMs?: number;
  backoff?: { initialMs?: number; maxMs?: number; factor?: number };
}

/** The last lines of the sidecar's output kept for the failure message. */
const OUTPUT_LINES = 20;

/**
 * Where `palinode-vault` usually is, in the order tried: the setting, the vault's and its parent
 * project's virtualenv, every PATH folder, then the folders pipx and `uv tool` install into and
 * the package managers' bin folders (an app started from the Dock or Start menu has a short PATH).
 */
export function executableCandidates(input: {
  setting: string;
  vaultPath: string;
  platform: string;
  env: Record<string, string | undefined>;
  home: string;
}): string[] {
  const win = input.platform === "win32";
  const sep = win ? "\\" : "/";
  const join = (...parts: string[]) => parts.filter(Boolean).join(sep).replace(/[\\/]+/g, sep);
  // pipx and uv make an .exe on Windows; a .cmd would need a shell to spawn.
  const names = win ? ["palinode-vault.exe"] : ["palinode-vault"];
  const parent = input.vaultPath.replace(/[\\/]+[^\\/]+[\\/]*$/, "");
  const venvBin = win ? join(".venv", "Scripts") : join(".venv", "bin");
  const folders: string[] = [join(input.vaultPath, venvBin), join(parent, venvBin)];
  const pathVar = input.env.PATH ?? input.env.Path ?? "";
  folders.push(...pathVar.split(win ? ";" : ":").filter(Boolean));
  const env = input.env;
  for (const v of [env.PIPX_BIN_DIR, env.UV_TOOL_BIN_DIR, env.XDG_BIN_HOME]) if (v) folders.push(v);
  folders.push(join(input.home, ".local", "bin")); // pipx and uv tool, every OS
  if (win) {
    if (env.APPDATA) folders.push(join(env.APPDATA, "Python", "Scripts"));
    if (env.USERPROFILE) folders.push(join(env.USERPROFILE, ".local", "bin"), join(env.USERPROFILE, "pipx", "bin"));
  } else {
    folders.push(join(input.home, ".cargo", "bin"), "/opt/homebrew/bin", "/usr/local/bin", "/usr/bin");
  }
  const out: string[] = [];
  const setting = input.setting.trim();
  if (setting) out.push(setting);
  for (const folder of folders) for (const name of names) out.push(join(folder, name));
  return [...new Set(out)];
}

/** Supervises the sidecar of one vault. */
export class SidecarProcess {
  state: SidecarProcessState = "off";
  /** One line for the person: what is happening, or why it failed. */
  message = "";
  /** The executable in use, once found. */
  executable: string | null = null;
  /** How many times this supervisor has spawned the sidecar. */
  spawns = 0;

  private child: ChildLike | null = null;
  private wanted = false;
  private failures = 0;
  private output: string[] = [];
  private timer: number | null = null;
  private listeners = new Set<(state: SidecarProcessState, message: string) => void>();

  constructor(private readonly options: SidecarProcessOptions) {}

  /** The pid of the child this supervisor started, if it is running. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  onState(listener: (state: SidecarProcessState, message: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adopts a running sidecar or starts one; resolves once it answers, or has failed. */
  async start(): Promise<void> {
    if (this.wanted) return;
    this.wanted = true;
    this.failures = 0;
    await this.ensure();
  }

  /**
   * Makes sure a sidecar serves the vault: adopts one that answers, else spawns ours. Called on
   * start, after our child died, and when the connection to an adopted sidecar is lost.
   */
  async ensure(): Promise<void> {
    if (!this.wanted || this.child || this.state === "starting") return;
    this.setState("searching", "Palinode: looking for the sidecar…");
    if (await this.probe()) {
      if (!this.wanted) return;
      this.failures = 0;
      this.setState("adopted", "Palinode: using the sidecar already running for this vault");
      return;
    }
    if (!this.wanted) return;
    const exe = await this.findExecutable();
    if (!this.wanted) return;
    if (!exe) {
      this.setState(
        "failed",
        "Palinode could not find palinode-vault: install it (pipx install palinode-vault) or set its path in the plugin's settings",
      );
      return;
    }
    await this.spawnChild(exe);
  }

  /** Stops restarting and ends the child this supervisor started (an adopted sidecar keeps running). */
  async stop(graceMs = 5000): Promise<void> {
    this.wanted = false;
    if (this.timer) window.clearTimeout(this.timer);
    this.timer = null;
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const force = window.setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      window.clearTimeout(force);
    }
    this.setState("off", "Palinode: the plugin does not start the sidecar");
  }

  /** Ends our child at once without waiting (Obsidian is closing its window). */
  stopNow(): void {
    this.wanted = false;
    if (this.timer) window.clearTimeout(this.timer);
    this.timer = null;
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null) child.kill("SIGTERM");
  }

  private async probe(): Promise<boolean> {
    try {
      return await this.options.alive();
    } catch {
      return false;
    }
  }

  private async findExecutable(): Promise<string | null> {
    for (const candidate of this.options.candidates()) {
      try {
        if (await this.options.isFile(candidate)) return (this.executable = candidate);
      } catch {
        // unreadable folder: try the next
      }
    }
    return null;
  }

  private async spawnChild(exe: string): Promise<void> {
    this.output = [];
    let child: ChildLike;
    try {
      child = this.options.spawn(exe, ["serve", "--vault", this.options.vaultPath], {
        cwd: this.options.vaultPath,
        env: { ...this.options.env, PYTHONUNBUFFERED: "1" },
        windowsHide: true,
      });
    } catch (err) {
      this.childFailed(`could not start ${exe}: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    this.child = child;
    this.spawns++;
    const startedAt = Date.now();
    const keep = (chunk: unknown) => {
      this.output.push(...String(chunk).split(/\r?\n/).filter(Boolean));
      if (this.output.length > OUTPUT_LINES) this.output.splice(0, this.output.length - OUTPUT_LINES);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.once("error", (err) => keep(err.message));
    child.once("exit", (code, signal) => {
      if (this.child !== child) return; // stopped on purpose
      this.child = null;
      if (Date.now() - startedAt >= (this.options.stableMs ?? 60_000)) this.failures = 0;
      this.childFailed(`the sidecar exited (${signal ?? `code ${code}`})`);
    });
    this.setState("starting", "Palinode: starting the sidecar…");
    const deadline = startedAt + (this.options.startTimeoutMs ?? 120_000);
    while (this.child === child && this.wanted) {
      if (await this.probe()) {
        if (this.child !== child) return;
        this.setState("running", `Palinode: started the sidecar (pid ${child.pid ?? "?"})`);
        return;
      }
      if (Date.now() > deadline) {
        child.kill("SIGKILL"); // the exit handler counts the failure and schedules the restart
        return;
      }
      await new Promise((r) => window.setTimeout(r, this.options.pollMs ?? 250));
    }
  }

  private childFailed(why: string): void {
    if (!this.wanted) return;
    this.failures++;
    const max = this.options.maxFailures ?? 5;
    const tail = this.output.slice(-3).join(" | ");
    if (this.failures >= max) {
      this.setState(
        "failed",
        `Palinode sidecar failed ${this.failures} times in a row and will not be restarted: ${why}` +
          (tail ? ` — last output: ${tail}` : "") +
          ` — run \`palinode-vault serve --vault ${this.options.vaultPath}\` in a terminal to see why, then reload the plugin`,
      );
      return;
    }
    const b = this.options.backoff ?? {};
    const delay = backoffDelay(this.failures - 1, b.initialMs ?? 1000, b.maxMs ?? 30_000, b.factor);
    this.setState("restarting", `Palinode: ${why}; restarting in ${Math.round(delay / 100) / 10} s`);
    this.timer = window.setTimeout(() => {
      this.timer = null;
      void this.ensure();
    }, delay);
  }

  private setState(state: SidecarProcessState, message: string): void {
    this.state = state;
    this.message = message;
    for (const l of [...this.listeners]) {
      try {
        l(state, message);
      } catch {
        // a listener's failure must not stop the supervisor
      }
    }
  }
}
