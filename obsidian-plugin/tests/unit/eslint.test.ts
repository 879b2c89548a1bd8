/** The official Obsidian review rules (eslint-plugin-obsidianmd, recommended; eslint.config.mjs) find nothing in src/. */
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { PLUGIN_DIR } from "../helpers/real-sidecar";

describe("eslint-plugin-obsidianmd", () => {
  it("reports no error and no warning in src/", async () => {
    const eslint = new ESLint({ cwd: PLUGIN_DIR });
    const config = await eslint.calculateConfigForFile("src/main.ts");
    expect(Object.keys(config.rules)).toEqual(expect.arrayContaining(["obsidianmd/no-unsupported-api", "obsidianmd/prefer-window-timers"]));
    const results = await eslint.lintFiles(["src/**/*.ts"]);
    const findings = results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(PLUGIN_DIR.length + 1)}:${m.line}: ${m.ruleId}: ${m.message}`));
    expect(results.length).toBeGreaterThan(20);
    expect(findings).toEqual([]);
  }, 180_000);
});
