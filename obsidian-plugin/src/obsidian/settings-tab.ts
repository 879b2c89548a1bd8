/**
 * The settings tab: connection, call timeout, the sidecar process, folders to ignore, and the
 * sidecar's own settings (quiet period, fixes, models).
 *
 * Declared once as setting definitions: Obsidian 1.13+ renders them and puts them in its settings
 * search; older versions get the same rows from `display()`.
 */
import { App, Plugin, PluginSettingTab, Setting, type SettingDefinitionItem, type SettingDefinitionRender } from "obsidian";
import { describeError } from "../actions";
import type { ParamsOf, SidecarSettings } from "../protocol";
import { parsePort, parseQuietSeconds, parseSeconds } from "../settings";
import type { PalinodeContext } from "./context";

type Row = SettingDefinitionRender;
interface Group {
  heading: string;
  items: Row[];
}

export class PalinodeSettingTab extends PluginSettingTab {
  private sidecarSettings: Promise<SidecarSettings> | null = null;

  constructor(app: App, plugin: Plugin, private readonly ctx: PalinodeContext) {
    super(app, plugin);
  }

  /** Obsidian 1.13+: the rows, searchable from Obsidian's settings search. */
  getSettingDefinitions(): SettingDefinitionItem[] {
    this.sidecarSettings = null;
    return this.groups().map((g) => ({ type: "group", heading: g.heading, items: g.items }));
  }

  /** Obsidian before 1.13: the same rows drawn by hand. */
  display(): void {
    this.sidecarSettings = null;
    this.drawLegacy();
  }

  private drawLegacy(): void {
    const { containerEl } = this;
    containerEl.empty();
    for (const group of this.groups()) {
      new Setting(containerEl).setName(group.heading).setHeading();
      for (const row of group.items) {
        const visible = typeof row.visible === "function" ? row.visible() : row.visible !== false;
        if (!visible) continue;
        const setting = new Setting(containerEl).setName(row.name);
        if (row.desc) setting.setDesc(row.desc);
        row.render(setting, undefined as never);
      }
    }
  }

  /** Draws the rows again (a choice changed which rows show). */
  private redraw(): void {
    const tab = this as unknown as { update?: () => void };
    if (typeof tab.update === "function" && typeof (this as unknown as { getSettingDefinitions?: unknown }).getSettingDefinitions === "function" && "settingItems" in this) {
      tab.update();
    } else {
      this.drawLegacy();
    }
  }

  private groups(): Group[] {
    const s = this.ctx.settings;
    const manual = () => s.connection === "manual";
    return [
      {
        heading: "Connection",
        items: [
          {
            name: "Status",
            desc: "Whether the plugin is connected to the sidecar.",
            searchable: false,
            render: (setting) => {
              setting.setDesc(this.ctx.client.statusMessage).addButton((b) =>
                b.setButtonText("Reconnect").onClick(() => {
                  this.ctx.client.restart();
                  window.setTimeout(() => this.redraw(), 1500);
                }),
              );
            },
          },
          {
            name: "Find the sidecar",
            desc: "The discovery file .palinode/sidecar.json that `palinode-vault serve` writes, or a port and token you enter.",
            render: (setting) => {
              setting.addDropdown((d) =>
                d
                  .addOption("file", "Discovery file")
                  .addOption("manual", "Manual port and token")
                  .setValue(s.connection)
                  .onChange(async (v) => {
                    s.connection = v === "manual" ? "manual" : "file";
                    await this.ctx.saveSettings();
                    this.ctx.client.restart();
                    this.redraw();
                  }),
              );
            },
          },
          {
            name: "Port",
            desc: "A port from 1 to 65535.",
            visible: manual,
            render: (setting) => {
              setting.addText((t) =>
                t.setPlaceholder("53121").setValue(s.port === null ? "" : String(s.port)).onChange(async (v) => {
                  s.port = parsePort(v);
                  markValidity(t.inputEl, s.port !== null, "A port from 1 to 65535");
                  await this.ctx.saveSettings();
                }),
              );
            },
          },
          {
            name: "Token",
            desc: "From .palinode/sidecar.json.",
            visible: manual,
            render: (setting) => {
              setting.addText((t) => {
                t.inputEl.type = "password";
                t.setValue(s.token).onChange(async (v) => {
                  s.token = v.trim();
                  await this.ctx.saveSettings();
                });
              });
            },
          },
          {
            name: "Call timeout (seconds)",
            desc: "Every call to the sidecar gives up after this long, so Obsidian never waits on it (1 to 600). Long work (extract, consolidate) runs as a job and is not limited by it.",
            render: (setting) => {
              setting.addText((t) =>
                t.setValue(String(s.timeoutSeconds)).onChange(async (v) => {
                  const n = parseSeconds(v, 1, 600);
                  markValidity(t.inputEl, n !== null, "A number of seconds from 1 to 600");
                  if (n === null) return;
                  s.timeoutSeconds = n;
                  this.ctx.client.timeoutMs = n * 1000;
                  await this.ctx.saveSettings();
                }),
              );
            },
          },
        ],
      },
      {
        heading: "Sidecar process",
        items: [
          {
            name: "Start the sidecar with Obsidian",
            desc:
              "Start palinode-vault serve when this vault opens, restart it if it stops, and stop it when Obsidian quits. " +
              "Turn off if you run it yourself (for example as a service). A sidecar already running for this vault is used as it is.",
            aliases: ["autostart", "serve"],
            render: (setting) => {
              setting.addToggle((t) =>
                t.setValue(s.manageSidecar).onChange(async (v) => {
                  s.manageSidecar = v;
                  await this.ctx.saveSettings();
                  this.ctx.applySidecarSetting();
                }),
              );
            },
          },
          {
            name: "Path to the palinode-vault executable",
            desc: "Leave empty to look in the vault's .venv, PATH and the pipx/uv folders.",
            render: (setting) => {
              const now = this.ctx.sidecarProcessMessage();
              if (now) setting.setDesc(`Leave empty to look in the vault's .venv, PATH and the pipx/uv folders. ${now}`);
              setting.addText((t) =>
                t.setPlaceholder("/home/you/.local/bin/palinode-vault").setValue(s.executablePath).onChange(async (v) => {
                  s.executablePath = v.trim();
                  await this.ctx.saveSettings();
                }),
              );
            },
          },
          {
            name: "Folders to ignore",
            desc:
              "One folder per line (templates, attachments, a private folder). palinode-vault never reads, lints, indexes or writes them. " +
              "Saved in .palinode/ignore; Obsidian's own Excluded files are ignored too.",
            aliases: ["exclude", "exclusions"],
            render: (setting) => {
              setting.addTextArea((t) => {
                void this.ctx.readIgnoredFolders().then((folders) => t.setValue(folders.join("\n")));
                t.onChange(async (v) => {
                  await this.ctx.writeIgnoredFolders(v.split("\n"));
                });
              });
            },
          },
        ],
      },
      {
        heading: "Sidecar",
        items: [
          {
            name: "Quiet period (seconds)",
            desc: "The sidecar does not rewrite a note you have open until you have stopped typing this long (0 to 3600).",
            render: (setting) => {
              setting.addText((t) => {
                t.setDisabled(true);
                void this.withSidecar(setting, (current) => {
                  t.setDisabled(false).setValue(String(current.quiet_seconds));
                  t.onChange(async (v) => {
                    const n = parseQuietSeconds(v);
                    markValidity(t.inputEl, n !== null, "A number of seconds from 0 to 3600");
                    if (n !== null) await this.setSidecar({ quiet_seconds: n });
                  });
                });
              });
            },
          },
          {
            name: "Automatic fix: related notes footer",
            desc: "Keep the generated footer of related notes in step with the entities: list.",
            render: (setting) => {
              setting.addToggle((t) => {
                t.setDisabled(true);
                void this.withSidecar(setting, (current) => {
                  t.setDisabled(false).setValue(current.auto_fixes.footer);
                  t.onChange((v) => void this.setSidecar({ auto_fixes: { footer: v } }));
                });
              });
            },
          },
          {
            name: "Automatic fix: cross references",
            desc: "Keep entities: and the body's links in step.",
            render: (setting) => {
              setting.addToggle((t) => {
                t.setDisabled(true);
                void this.withSidecar(setting, (current) => {
                  t.setDisabled(false).setValue(current.auto_fixes.cross_refs);
                  t.onChange((v) => void this.setSidecar({ auto_fixes: { cross_refs: v } }));
                });
              });
            },
          },
          {
            name: "Embedding model",
            desc: "The model the sidecar embeds notes with.",
            render: (setting) => {
              void this.withSidecar(setting, (current) => {
                setting.setDesc(current.models.embedding ?? "none (keyword search only)");
              });
            },
          },
          {
            name: "Generation model",
            desc: "The model the sidecar extracts memories with.",
            render: (setting) => {
              void this.withSidecar(setting, (current) => {
                setting.setDesc(current.models.generation ?? "none (extraction unavailable)");
              });
            },
          },
        ],
      },
    ];
  }

  /** Runs `fill` with the sidecar's settings, or says on the row why they cannot be read. */
  private async withSidecar(setting: Setting, fill: (current: SidecarSettings) => void): Promise<void> {
    this.sidecarSettings ??= this.ctx.client.call("settings.get", {});
    try {
      fill(await this.sidecarSettings);
    } catch (err) {
      setting.setDesc(describeError(err, "reading the sidecar's settings"));
    }
  }

  private async setSidecar(params: ParamsOf<"settings.set">): Promise<void> {
    try {
      this.sidecarSettings = Promise.resolve(await this.ctx.client.call("settings.set", params));
    } catch (err) {
      this.ctx.ui.notice(describeError(err, "saving settings"));
    }
  }
}

/** Marks a text field valid or not (red outline and a tooltip saying what is expected). */
function markValidity(input: HTMLInputElement | undefined, valid: boolean, expected: string): void {
  if (!input) return;
  input.toggleClass("palinode-invalid", !valid);
  input.setAttribute("aria-invalid", valid ? "false" : "true");
  input.title = valid ? "" : expected;
}
