/**
 * The plugin starts, adopts, restarts and stops the real sidecar (`palinode-vault serve`) as real
 * child processes: the supervisor on its own, and the whole plugin loaded against the obsidian mock
 * on a real vault folder. Skips, saying why, when the serve command is not installed.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { App, notices } from "../__mocks__/obsidian";
import { discoverSidecar } from "../../src/client";
import PalinodePlugin from "../../src/main";
import { SidecarProcess, type SidecarProcessState, type SpawnFn } from "../../src/sidecar-process";
import { until } from "../helpers/fake-sidecar";
import { SIDECAR_BIN, copyVault, serveAvailability, skipNote, startSidecar, type RunningSidecar } from "../helpers/real-sidecar";

const available = serveAvailability();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

beforeAll(() => {
  Object.assign(window, { WebSocket });
});

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether the vault's discovery file names a sidecar whose /health answers. */
async function answers(vault: string): Promise<boolean> {
  const found = await discoverSidecar((p) => readFile(join(vault, p), "utf8"));
  if (!found.ok) return false;
  try {
    return (await fetch(`http://127.0.0.1:${found.info.port}/health`)).ok;
  } catch {
    return false;
  }
}

function supervisor(vault: string, candidates: string[], extra: Partial<ConstructorParameters<typeof SidecarProcess>[0]> = {}) {
  const states: SidecarProcessState[] = [];
  const proc = new SidecarProcess({
    vaultPath: vault,
    spawn: spawn as unknown as SpawnFn,
    env: process.env,
    candidates: () => candidates,
    isFile: async (p) => (await stat(p)).isFile(),
    alive: () => answers(vault),
    backoff: { initialMs: 200, maxMs: 1000 },
    pollMs: 100,
    ...extra,
  });
  proc.onState((s) => states.push(s));
  cleanups.push(() => proc.stop(2000));
  return { proc, states };
}

function tempVault(): string {
  const vault = copyVault();
  cleanups.push(() => rmSync(vault, { recursive: true, force: true }));
  return vault;
}

describe("finding palinode-vault and giving up clearly (real child processes)", () => {
  it("fails with a clear message when no executable is found", async () => {
    const { proc } = supervisor(tempVault(), ["/nonexistent/palinode-vault", join(tmpdir(), "no-such-dir", "palinode-vault")]);
    await proc.start();
    expect(proc.state).toBe("failed");
    expect(proc.message).toMatch(/could not find palinode-vault.*set its path in the plugin's settings/);
    expect(proc.spawns).toBe(0);
  });

  it.skipIf(process.platform === "win32")("restarts a sidecar that keeps dying with backoff, then gives up naming its output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "palinode-bad-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const bad = join(dir, "palinode-vault");
    writeFileSync(bad, "#!/bin/sh\necho 'cannot open the vault: boom' >&2\nexit 3\n");
    chmodSync(bad, 0o755);
    const { proc, states } = supervisor(tempVault(), [bad], { maxFailures: 3 });
    const started = Date.now();
    await proc.start();
    await until(() => proc.state === "failed", 15_000, "giving up");
    expect(proc.spawns).toBe(3);
    // Backoff: 200 ms then 400 ms between the three starts.
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(states.filter((s) => s === "restarting")).toHaveLength(2);
    expect(proc.message).toMatch(/failed 3 times in a row/);
    expect(proc.message).toContain("cannot open the vault: boom");
    expect(proc.message).toContain("palinode-vault serve --vault");
  });
});

describe.skipIf(!available.ok)(skipNote("the sidecar's lifecycle against the real sidecar"), () => {
  it("starts the sidecar, restarts it after a crash, and stops it", async () => {
    const vault = tempVault();
    const { proc } = supervisor(vault, ["/nonexistent/palinode-vault", SIDECAR_BIN]);
    await proc.start();
    expect(proc.state).toBe("running");
    expect(proc.executable).toBe(SIDECAR_BIN);
    const first = proc.pid!;
    expect(alive(first)).toBe(true);
    expect(await answers(vault)).toBe(true);

    process.kill(first, "SIGKILL"); // a crash: no clean shutdown, the discovery file stays behind
    await until(() => proc.state === "restarting", 10_000, "noticing the crash");
    await until(() => proc.state === "running", 60_000, "the restart");
    expect(proc.spawns).toBe(2);
    expect(proc.pid).not.toBe(first);
    expect(await answers(vault)).toBe(true);

    const second = proc.pid!;
    await proc.stop();
    expect(proc.state).toBe("off");
    expect(alive(second)).toBe(false);
    expect(await answers(vault)).toBe(false);
  });

  it("adopts a sidecar already running for the vault and leaves it running on stop", async () => {
    let running: RunningSidecar | null = await startSidecar(copyVault());
    cleanups.push(() => running?.stop());
    const { proc } = supervisor(running.vault, [SIDECAR_BIN]);
    await proc.start();
    expect(proc.state).toBe("adopted");
    expect(proc.spawns).toBe(0);
    await proc.stop();
    expect(alive(running.proc.pid)).toBe(true);
    expect(await answers(running.vault)).toBe(true);
    const r = running;
    running = null;
    await r.stop();
  });

  it("the plugin starts the sidecar when the vault opens (status bar: starting…) and stops it on unload", async () => {
    const vault = tempVault();
    const app = new App() as any;
    app.vault.adapter.basePath = vault;
    const plugin = new PalinodePlugin(app, { id: "palinode-vault", version: "0.1.0" } as any) as any;
    plugin.saved = { executablePath: SIDECAR_BIN };
    const seen: string[] = [];
    await plugin.onload();
    cleanups.push(() => plugin.onunload());
    const bar = plugin.statusBarItems[0];
    plugin.session.onChange(() => seen.push(bar.text));
    await until(() => /^Palinode · \d+ findings?$/.test(bar.text), 60_000, "connected status bar");
    expect(seen).toContain("Palinode: starting…");
    const pid = plugin.sidecarProcess.pid;
    expect(alive(pid)).toBe(true);
    // The client may connect before the supervisor's next /health probe (every 250 ms) sees the
    // sidecar answer: the state follows within a probe, slower on a loaded machine.
    await until(() => plugin.sidecarProcess.state === "running", 10_000, "the supervisor to see the sidecar running");

    plugin.onunload();
    await until(() => !alive(pid), 10_000, "the sidecar to exit with the plugin");
    expect(notices.filter((n) => /failed/.test(n))).toEqual([]);
  });

  it("does not start anything when the setting is off", async () => {
    const vault = tempVault();
    const app = new App() as any;
    app.vault.adapter.basePath = vault;
    const plugin = new PalinodePlugin(app, { id: "palinode-vault", version: "0.1.0" } as any) as any;
    plugin.saved = { manageSidecar: false, executablePath: SIDECAR_BIN };
    await plugin.onload();
    cleanups.push(() => plugin.onunload());
    await new Promise((r) => setTimeout(r, 1500));
    expect(plugin.sidecarProcess).toBeNull();
    expect(existsSync(join(vault, ".palinode", "sidecar.json"))).toBe(false);
    expect(plugin.statusBarItems[0].text).toMatch(/offline|connecting/);
  });
});
