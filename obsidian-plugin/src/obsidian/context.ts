/** What the views and the settings tab need from the plugin (implemented by main.ts). */
import type { PalinodeUI, PickRow } from "../actions";
import type { SidecarClient } from "../client";
import type { SidecarSession } from "../session";
import type { PalinodeSettings } from "../settings";
import type { Rpc } from "../side-view-model";

export interface PalinodeContext {
  client: SidecarClient;
  session: SidecarSession;
  rpc: Rpc;
  ui: PalinodeUI;
  /** The UI for inbox review: opens the approved note once Obsidian's vault has picked it up. */
  reviewUI: PalinodeUI;
  settings: PalinodeSettings;
  saveSettings(): Promise<void>;
  /** The note the views follow: the active (or last active) markdown file. */
  activePath(): string | null;
  openPath(path: string): void;
  openLink(linktext: string, sourcePath: string): void;
  /** Starts or stops the sidecar process after the "Start the sidecar with Obsidian" setting changed. */
  applySidecarSetting(): void;
  /** What the plugin's sidecar process is doing, or null when it manages none. */
  sidecarProcessMessage(): string | null;
  /** The folders in .palinode/ignore (the "Folders to ignore" setting). */
  readIgnoredFolders(): Promise<string[]>;
  writeIgnoredFolders(lines: string[]): Promise<void>;
  /** The people's (`kind` "person") or projects' notes, to say whom an inbox memory is about. */
  aboutRows(kind: string): PickRow[];
}
