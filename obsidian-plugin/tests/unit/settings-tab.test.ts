/** The settings tab: declared for Obsidian's settings search, drawn by hand on older versions, numbers checked. */
import { describe, expect, it } from "vitest";
import { App, Setting, settingRows } from "../__mocks__/obsidian";
import { PalinodeSettingTab } from "../../src/obsidian/settings-tab";
import { DEFAULT_SETTINGS } from "../../src/settings";

function tab() {
  const saved: unknown[] = [];
  let written: string[] = [];
  const ctx: any = {
    settings: { ...DEFAULT_SETTINGS },
    client: { statusMessage: "Palinode: connected", timeoutMs: 10_000, restart() {}, call: async () => ({ quiet_seconds: 3, auto_fixes: { footer: true, cross_refs: true }, models: { embedding: "m.gguf", generation: null } }) },
    saveSettings: async () => void saved.push({ ...ctx.settings }),
    applySidecarSetting() {},
    sidecarProcessMessage: () => "Palinode: started the sidecar (pid 42)",
    readIgnoredFolders: async () => ["templates"],
    writeIgnoredFolders: async (lines: string[]) => void (written = lines),
    ui: { notice() {} },
  };
  const t = new PalinodeSettingTab(new App() as any, {} as any, ctx);
  return { t, ctx, saved, written: () => written };
}

function render(row: any): Setting {
  const s = new Setting(null);
  s.setName(row.name);
  row.render(s, undefined);
  return s;
}

describe("settings tab", () => {
  it("declares every setting with a name and a description for Obsidian's settings search", () => {
    const groups = tab().t.getSettingDefinitions() as any[];
    expect(groups.map((g) => g.heading)).toEqual(["Connection", "Sidecar process", "Sidecar"]);
    const names = groups.flatMap((g) => g.items.map((i: any) => i.name));
    expect(names).toContain("Start the sidecar with Obsidian");
    expect(names).toContain("Folders to ignore");
    expect(names).toContain("Call timeout (seconds)");
    for (const g of groups) for (const i of g.items) expect(typeof i.desc === "string" && i.desc.length > 10).toBe(true);
  });

  it("saves a valid timeout and refuses a bad one, marking the field", async () => {
    const { t, ctx, saved } = tab();
    const row = (t.getSettingDefinitions() as any[])[0].items.find((i: any) => i.name.startsWith("Call timeout"));
    const field = render(row).controls[0];
    await field.change!("abc");
    expect(field.inputEl.classes.has("palinode-invalid")).toBe(true);
    expect(saved).toEqual([]);
    await field.change!("30");
    expect(field.inputEl.classes.has("palinode-invalid")).toBe(false);
    expect(ctx.settings.timeoutSeconds).toBe(30);
    expect(ctx.client.timeoutMs).toBe(30_000);
    expect(saved).toHaveLength(1);
  });

  it("shows the manual port only for a manual connection, and draws the rows on older Obsidian", () => {
    const { t, ctx } = tab();
    settingRows.length = 0;
    t.display();
    const drawn = settingRows.map((r) => (r.heading ? `# ${r.name}` : r.name));
    expect(drawn).toContain("# Sidecar process");
    expect(drawn).not.toContain("Port");
    ctx.settings.connection = "manual";
    settingRows.length = 0;
    t.display();
    expect(settingRows.map((r) => r.name)).toContain("Port");
  });

  it("edits the folders to ignore", async () => {
    const { t, written } = tab();
    const row = (t.getSettingDefinitions() as any[])[1].items.find((i: any) => i.name === "Folders to ignore");
    const area = render(row).controls[0];
    await new Promise((r) => setTimeout(r, 0));
    expect(area.value).toBe("templates");
    await area.change!("templates\nprivate");
    expect(written()).toEqual(["templates", "private"]);
  });
});
