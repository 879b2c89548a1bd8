/** The settings tab: connection, call timeout, and the sidecar's own settings (quiet period, fixes, models). */
import { App, Plugin, PluginSettingTab, Setting } from "obsidian";
import { describeError } from "../actions";
import type { ParamsOf, SidecarSettings } from "../protocol";
import { parsePort, parseQuietSeconds, parseSeconds } from "../settings";
import type { PalinodeContext } from "./context";

export class PalinodeSettingTab extends PluginSettingTab {
  constructor(app: App, plugin: Plugin, private readonly ctx: PalinodeContext) {
    super(app, plugin);
  }

  display(): void {
    const { containerEl } = this;
    containerEl.empty();
    const s = this.ctx.settings;

    new Setting(containerEl).setName("Connection").setHeading();
    new Setting(containerEl).setName("Status").setDesc(this.ctx.client.statusMessage).addButton((b) =>
      b.setButtonText("Reconnect").onClick(() => {
        this.ctx.client.restart();
        window.setTimeout(() => this.display(), 1500);
      }),
    );
    new Setting(containerEl)
      .setName("Find the sidecar")
      .setDesc("The discovery file .palinode/sidecar.json that `palinode-vault serve` writes, or a port and token you enter.")
      .addDropdown((d) =>
        d
          .addOption("file", "Discovery file")
          .addOption("manual", "Manual port and token")
          .setValue(s.connection)
          .onChange(async (v) => {
            s.connection = v === "manual" ? "manual" : "file";
            await this.ctx.saveSettings();
            this.ctx.client.restart();
            this.display();
          }),
      );
    if (s.connection === "manual") {
      new Setting(containerEl).setName("Port").addText((t) =>
        t.setPlaceholder("53121").setValue(s.port === null ? "" : String(s.port)).onChange(async (v) => {
          s.port = parsePort(v);
          markValidity(t.inputEl, s.port !== null, "A port from 1 to 65535");
          await this.ctx.saveSettings();
        }),
      );
      new Setting(containerEl).setName("Token").setDesc("From .palinode/sidecar.json.").addText((t) => {
        t.inputEl.type = "password";
        t.setValue(s.token).onChange(async (v) => {
          s.token = v.trim();
          await this.ctx.saveSettings();
        });
      });
    }
    new Setting(containerEl)
      .setName("Call timeout (seconds)")
      .setDesc("Every call to the sidecar gives up after this long, so Obsidian never waits on it (1 to 600).")
      .addText((t) =>
        t.setValue(String(s.timeoutSeconds)).onChange(async (v) => {
          const n = parseSeconds(v, 1, 600);
          markValidity(t.inputEl, n !== null, "A number of seconds from 1 to 600");
          if (n !== null) {
            s.timeoutSeconds = n;
            this.ctx.client.timeoutMs = n * 1000;
            await this.ctx.saveSettings();
          }
        }),
      );

    new Setting(containerEl).setName("Sidecar process").setHeading();
    new Setting(containerEl)
      .setName("Start the sidecar with Obsidian")
      .setDesc(
        "Start palinode-vault serve when this vault opens, restart it if it stops, and stop it when Obsidian quits. " +
          "Turn off if you run it yourself (for example as a service). A sidecar already running for this vault is used as it is.",
      )
      .addToggle((t) =>
        t.setValue(s.manageSidecar).onChange(async (v) => {
          s.manageSidecar = v;
          await this.ctx.saveSettings();
          this.ctx.applySidecarSetting();
        }),
      );
    new Setting(containerEl)
      .setName("palinode-vault executable")
      .setDesc("Leave empty to look in the vault's .venv, PATH and the pipx/uv folders. " + (this.ctx.sidecarProcessMessage() ?? ""))
      .addText((t) =>
        t.setPlaceholder("/home/you/.local/bin/palinode-vault").setValue(s.executablePath).onChange(async (v) => {
          s.executablePath = v.trim();
          await this.ctx.saveSettings();
        }),
      );

    new Setting(containerEl).setName("Sidecar").setHeading();
    const sidecarEl = containerEl.createDiv();
    void this.displaySidecar(sidecarEl);
  }

  private async displaySidecar(el: HTMLElement): Promise<void> {
    let current: SidecarSettings;
    try {
      current = await this.ctx.client.call("settings.get", {});
    } catch (err) {
      el.createEl("p", { cls: "palinode-muted", text: describeError(err, "reading the sidecar's settings") });
      return;
    }
    const set = async (params: ParamsOf<"settings.set">) => {
      try {
        current = await this.ctx.client.call("settings.set", params);
      } catch (err) {
        this.ctx.ui.notice(describeError(err, "saving settings"));
      }
    };
    new Setting(el)
      .setName("Quiet period (seconds)")
      .setDesc("The sidecar does not rewrite a note you have open until you have stopped typing this long.")
      .addText((t) =>
        t.setValue(String(current.quiet_seconds)).onChange(async (v) => {
          const n = parseQuietSeconds(v);
          markValidity(t.inputEl, n !== null, "A number of seconds from 0 to 3600");
          if (n !== null) await set({ quiet_seconds: n });
        }),
      );
    new Setting(el)
      .setName("Automatic fix: See also footer")
      .setDesc("Keep the generated ## See also footer in step with the entities: list.")
      .addToggle((t) => t.setValue(current.auto_fixes.footer).onChange((v) => set({ auto_fixes: { footer: v } })));
    new Setting(el)
      .setName("Automatic fix: cross references")
      .setDesc("Keep entities: and the body's links in step.")
      .addToggle((t) => t.setValue(current.auto_fixes.cross_refs).onChange((v) => set({ auto_fixes: { cross_refs: v } })));
    new Setting(el).setName("Embedding model").setDesc(current.models.embedding ?? "none (keyword search only)");
    new Setting(el).setName("Generation model").setDesc(current.models.generation ?? "none (extraction unavailable)");
  }
}

/** Marks a text field valid or not (red outline and a tooltip saying what is expected). */
function markValidity(input: HTMLInputElement | undefined, valid: boolean, expected: string): void {
  if (!input) return;
  input.toggleClass?.("palinode-invalid", !valid);
  input.setAttribute?.("aria-invalid", valid ? "false" : "true");
  input.title = valid ? "" : expected;
}
