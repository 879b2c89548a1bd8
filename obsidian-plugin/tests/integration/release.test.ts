/**
 * The release assets install the way BRAT installs a plugin: read manifest.json at the repository
 * root for the id and version, fetch main.js, manifest.json and styles.css from the release of that
 * version (here: the folder scripts/release-plugin fills), write them to
 * VAULT/.obsidian/plugins/<id>/ and enable the id in community-plugins.json. Then Obsidian's load
 * step: main.js evaluated as CommonJS with `obsidian` provided, and the plugin's onload.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as obsidian from "../__mocks__/obsidian";
import { PLUGIN_DIR, REPO } from "../helpers/real-sidecar";

const ASSETS = ["main.js", "manifest.json", "styles.css"];
let out = "";
let vault = "";

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), "palinode-release-"));
  vault = mkdtempSync(join(tmpdir(), "palinode-brat-vault-"));
  execFileSync("bash", [join(REPO, "scripts/release-plugin"), out], { cwd: REPO, stdio: "pipe", timeout: 300_000 });
}, 300_000);

afterAll(() => {
  rmSync(out, { recursive: true, force: true });
  rmSync(vault, { recursive: true, force: true });
});

function json(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

describe("release assets, installed as BRAT does", () => {
  it("keeps the root manifest.json and versions.json equal to the plugin's", () => {
    expect(json(join(REPO, "manifest.json"))).toEqual(json(join(PLUGIN_DIR, "manifest.json")));
    expect(json(join(REPO, "versions.json"))).toEqual(json(join(PLUGIN_DIR, "versions.json")));
    const m = json(join(REPO, "manifest.json"));
    expect(json(join(REPO, "versions.json"))[m.version]).toBe(m.minAppVersion);
    expect(m.isDesktopOnly).toBe(true);
  });

  it("builds exactly the three assets", () => {
    for (const a of ASSETS) expect(existsSync(join(out, a))).toBe(true);
    expect(json(join(out, "manifest.json"))).toEqual(json(join(REPO, "manifest.json")));
  });

  it("installs into a fresh vault and the plugin loads from main.js", async () => {
    // BRAT: the repository's root manifest names the plugin and the release to fetch.
    const root = json(join(REPO, "manifest.json"));
    const release = json(join(out, "manifest.json"));
    expect(release.version).toBe(root.version);
    expect(release.id).toBe(root.id);
    const dir = join(vault, ".obsidian", "plugins", root.id);
    mkdirSync(dir, { recursive: true });
    for (const a of ASSETS) writeFileSync(join(dir, a), readFileSync(join(out, a)));
    writeFileSync(join(vault, ".obsidian", "community-plugins.json"), JSON.stringify([root.id]));

    // Obsidian: evaluate main.js as CommonJS with `obsidian` provided, then load the default export.
    const nodeRequire = createRequire(import.meta.url);
    const mod = { exports: {} as any };
    const code = readFileSync(join(dir, "main.js"), "utf8");
    new Function("require", "module", "exports", code)((name: string) => (name === "obsidian" ? obsidian : nodeRequire(name)), mod, mod.exports);
    const PluginClass = mod.exports.default ?? mod.exports;
    const app = new obsidian.App() as any;
    app.vault.adapter.basePath = vault;
    const plugin = new PluginClass(app, json(join(dir, "manifest.json")));
    plugin.saved = { manageSidecar: false };
    await plugin.onload();
    expect(plugin.commands.length).toBeGreaterThanOrEqual(10);
    expect(plugin.statusBarItems.length).toBe(1);
    plugin.onunload();
  });
});
