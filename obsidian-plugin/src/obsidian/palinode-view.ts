/** The side view "Palinode": findings, backlinks by kind, related notes, duplicates, entities, inbox. */
import { approveInboxNote, approveInboxNoteAbout, approveInboxNoteAs, approveInboxNoteMayReplace, fixNote, isInboxNote, rejectInboxNote, repairLink } from "../actions";
import { renderInbox, renderSideView, renderSideViewMessage, type InboxHandlers } from "../dom/side-view";
import { inboxListing, loadInbox, loadSideView, sideViewModel } from "../side-view-model";
import { NoteFollowingView } from "./note-view";

export const PALINODE_VIEW = "palinode-view";

export class PalinodeView extends NoteFollowingView {
  getViewType(): string {
    return PALINODE_VIEW;
  }
  getDisplayText(): string {
    return "Palinode";
  }
  getIcon(): string {
    return "brain-circuit";
  }
  /** This note changed, or a note came into or left inbox/ (extract, approve, reject, undo). */
  protected shows(paths: string[]): boolean {
    return (this.path !== null && paths.includes(this.path)) || paths.some(isInboxNote);
  }
  /** The inbox section's handlers: review through the same actions as the commands, then refresh. */
  private inboxHandlers(): InboxHandlers {
    return {
      openPath: (p) => this.ctx.openPath(p),
      approve: async (row) => {
        if (row.needsAbout) {
          const kind = row.type === "ProjectSnapshot" ? "project" : "person";
          await approveInboxNoteAbout(this.ctx.rpc, this.ctx.reviewUI, row.path, this.ctx.aboutRows(kind), kind);
        } else if (row.mayReplace.length) await approveInboxNoteMayReplace(this.ctx.rpc, this.ctx.reviewUI, row.path, row.mayReplace);
        else await approveInboxNote(this.ctx.rpc, this.ctx.reviewUI, row.path);
        await this.refresh();
      },
      approveAs: async (row) => {
        if (await approveInboxNoteAs(this.ctx.rpc, this.ctx.reviewUI, row.path, row.type, (kind) => this.ctx.aboutRows(kind))) await this.refresh();
      },
      reject: async (row) => {
        await rejectInboxNote(this.ctx.rpc, this.ctx.ui, row.path);
        await this.refresh();
      },
    };
  }
  protected async draw(path: string | null, current: () => boolean): Promise<void> {
    if (!path) {
      // No note open: the inbox is the vault's, so it is still shown under the message.
      const inbox = inboxListing(await loadInbox(this.ctx.rpc));
      if (!current()) return;
      renderSideViewMessage(this.contentEl, "Open a note to see what Palinode knows about it.");
      return renderInbox(this.contentEl, inbox, this.inboxHandlers());
    }
    const data = await loadSideView(this.ctx.rpc, path);
    if (!current()) return; // a newer refresh is under way
    renderSideView(this.contentEl, sideViewModel(data), {
      ...this.inboxHandlers(),
      openLink: (l) => this.ctx.openLink(l, path),
      fix: async () => {
        await fixNote(this.ctx.rpc, this.ctx.ui, path, false);
        await this.refresh();
      },
      repair: async (row, candidate) => {
        if (row.target) await repairLink(this.ctx.rpc, this.ctx.ui, path, row.target, candidate);
        await this.refresh();
      },
    });
  }
}
