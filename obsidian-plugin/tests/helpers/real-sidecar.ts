/**
 * Starting the real sidecar (`<repo>/.venv/bin/palinode-vault serve --vault TMP`) on a copy of the
 * fixture vault. When the `serve` command does not exist yet, `serveAvailability()` says why, and
 * the tests that need it skip with that reason.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDiscovery, type SidecarInfo } from "../../src/client";

const HERE = dirname(fileURLToPath(import.meta.url));
export const PLUGIN_DIR = resolve(HERE, "../..");
export const REPO = resolve(PLUGIN_DIR, "..");
export const FIXTURE_VAULT = resolve(HERE, "../fixtures/vault");
export const SIDECAR_BIN = process.env.PALINODE_VAULT_BIN ?? join(REPO, ".venv/bin/palinode-vault");

export type Availability = { ok: true; bin: string } | { ok: false; reason: string };

let cached: Availability | null = null;

/** Whether `palinode-vault serve` exists; checked once per test process. */
export function serveAvailability(): Availability {
  if (cached) return cached;
  if (!existsSync(SIDECAR_BIN)) {
    cached = { ok: false, reason: `${SIDECAR_BIN} not found (pip install -e . into .venv)` };
  } else {
    const help = spawnSync(SIDECAR_BIN, ["serve", "--help"], { encoding: "utf8", timeout: 30_000 });
    cached =
      help.status === 0
        ? { ok: true, bin: SIDECAR_BIN }
        : { ok: false, reason: "`palinode-vault serve` does not exist yet (the sidecar's serve command is not built)" };
  }
  return cached;
}

/** The skip line printed by suites that need the real sidecar. */
export function skipNote(what: string): string {
  const a = serveAvailability();
  return a.ok ? what : `${what} — SKIPPED: ${a.reason}`;
}

/** A fresh copy of the fixture vault in a temp folder. */
export function copyVault(): string {
  const dir = mkdtempSync(join(tmpdir(), "palinode-plugin-"));
  cpSync(FIXTURE_VAULT, dir, { recursive: true });
  return dir;
}

export interface RunningSidecar {
  vault: string;
  info: SidecarInfo;
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `serve` on `vault` and waits for its discovery file (written when it is ready). */
export async function startSidecar(vault: string, timeoutMs = 60_000): Promise<RunningSidecar> {
  const a = serveAvailability();
  if (!a.ok) throw new Error(a.reason);
  let out = "";
  const proc = spawn(a.bin, ["serve", "--vault", vault], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1", PALINODE_WEEKLY_CONSOLIDATION: "0" } });
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const discovery = join(vault, ".palinode", "sidecar.json");
  const start = Date.now();
  let info: SidecarInfo | null = null;
  while (!info) {
    if (proc.exitCode !== null) throw new Error(`palinode-vault serve exited with ${proc.exitCode}:\n${out}`);
    if (Date.now() - start > timeoutMs) {
      proc.kill("SIGKILL");
      throw new Error(`palinode-vault serve did not write ${discovery} within ${timeoutMs} ms:\n${out}`);
    }
    if (existsSync(discovery)) {
      const found = parseDiscovery(readFileSync(discovery, "utf8"));
      if (found.ok) info = found.info;
    }
    if (!info) await new Promise((r) => setTimeout(r, 100));
  }
  return {
    vault,
    info,
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(vault, { recursive: true, force: true });
    },
  };
}
