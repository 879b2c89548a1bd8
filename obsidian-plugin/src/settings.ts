/**
 * The plugin's own settings (how to reach the sidecar, timeouts) and their checks. The sidecar's
 * settings (quiet period, automatic fixes, models) live in the sidecar: `settings.get`/`settings.set`.
 */
import { discoverSidecar, type Discovery } from "./client";

export interface PalinodeSettings {
  /** `file`: read `.palinode/sidecar.json`; `manual`: the port and token below. */
  connection: "file" | "manual";
  port: number | null;
  token: string;
  /** Hard timeout of every call, in seconds. */
  timeoutSeconds: number;
  /** Depth of the graph view: 1 or 2 hops. */
  graphDepth: 1 | 2;
  /** Start `palinode-vault serve` with the vault and stop it with Obsidian (off: you run it yourself). */
  manageSidecar: boolean;
  /** Path of the `palinode-vault` executable; empty: look in the usual places. */
  executablePath: string;
}

export const DEFAULT_SETTINGS: PalinodeSettings = {
  connection: "file",
  port: null,
  token: "",
  timeoutSeconds: 10,
  graphDepth: 1,
  manageSidecar: true,
  executablePath: "",
};

/** Saved data (possibly from an older version, or hand-edited) made into valid settings. */
export function normaliseSettings(raw: unknown): PalinodeSettings {
  const r = (raw && typeof raw === "object" ? raw : {}) as Partial<PalinodeSettings>;
  const port = parsePort(r.port);
  const timeout = Number(r.timeoutSeconds);
  return {
    connection: r.connection === "manual" ? "manual" : "file",
    port,
    token: typeof r.token === "string" ? r.token.trim() : "",
    timeoutSeconds: Number.isFinite(timeout) && timeout >= 1 && timeout <= 600 ? timeout : DEFAULT_SETTINGS.timeoutSeconds,
    graphDepth: r.graphDepth === 2 ? 2 : 1,
    manageSidecar: typeof r.manageSidecar === "boolean" ? r.manageSidecar : DEFAULT_SETTINGS.manageSidecar,
    executablePath: typeof r.executablePath === "string" ? r.executablePath.trim() : "",
  };
}

/** A TCP port from text or a number, or null. */
export function parsePort(value: unknown): number | null {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value.trim()) : NaN;
  return Number.isInteger(n) && n > 0 && n < 65536 ? n : null;
}

/** Where the folders palinode-vault ignores are listed (read by the sidecar and the CLI). */
export const IGNORE_PATH = ".palinode/ignore";

/** The folder lines worth saving: trimmed, '/'-separated, no empty, `.` or `..` parts. */
export function cleanFolders(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const parts = line.split("#")[0].trim().replace(/\\/g, "/").split("/").filter((p) => p && p !== ".");
    if (parts.length && !parts.includes("..") && !out.includes(parts.join("/"))) out.push(parts.join("/"));
  }
  return out;
}

/** A whole number of seconds in [min, max] from text, or null (the settings tab refuses the rest). */
export function parseSeconds(text: string, min: number, max: number): number | null {
  const t = text.trim();
  const n = Number(t);
  return t !== "" && Number.isFinite(n) && n >= min && n <= max ? n : null;
}

/** Seconds of quiet before the sidecar writes to a note the person has open; null if not valid. */
export function parseQuietSeconds(text: string): number | null {
  const n = Number(text.trim());
  return text.trim() !== "" && Number.isFinite(n) && n >= 0 && n <= 3600 ? n : null;
}

/** Where the sidecar is, following the settings (discovery file, or the manual port and token). */
export function locateSidecar(settings: PalinodeSettings, read: (path: string) => Promise<string>): Promise<Discovery> {
  if (settings.connection === "manual") {
    if (settings.port === null || !settings.token) {
      return Promise.resolve({ ok: false, reason: "invalid", message: "manual connection needs a port and a token in settings" });
    }
    return Promise.resolve({ ok: true, info: { port: settings.port, token: settings.token } });
  }
  return discoverSidecar(read);
}
