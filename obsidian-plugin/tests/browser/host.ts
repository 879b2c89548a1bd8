/**
 * The browser host page's script: renders the side view and the graph view with the plugin's own
 * view models and DOM layer, from recorded answers or from a live sidecar over the browser's
 * WebSocket. Clicks are recorded in `window.palinode.events` for the tests to check. The inbox's
 * Approve, Approve as… and Reject run the plugin's own actions and then render again, as the Obsidian
 * view does; the type picker records what it offers and picks the last type offered.
 */
import { approveInboxNote, approveInboxNoteAs, rejectInboxNote } from "../../src/actions";
import { SidecarClient, type SocketConstructor } from "../../src/client";
import { renderGraph } from "../../src/dom/graph";
import { renderInbox, renderSideView, renderSideViewMessage, type InboxHandlers } from "../../src/dom/side-view";
import { layoutNeighbourhood } from "../../src/graph-layout";
import type { InboxItem } from "../../src/protocol";
import { SidecarSession } from "../../src/session";
import { statusBarModel } from "../../src/status-bar";
import { answeringUI } from "../helpers/ui";
import { inboxListing, loadInbox, loadSideView, sideViewModel, type Rpc } from "../../src/side-view-model";
import { recordedRpc, withInbox, type Recording } from "../helpers/recorded";

// Obsidian adds createEl to every element; this page stands in for it with the same behaviour the
// views use (create, append, return).
(HTMLElement.prototype as any).createEl ??= function (this: HTMLElement, tag: string) {
  const node = this.ownerDocument.createElement(tag);
  this.appendChild(node);
  return node;
};

const events: string[] = [];
const side = document.getElementById("side")!;
const graph = document.getElementById("graph")!;
const status = document.getElementById("status")!;

/** Notices and opened notes of the review actions, into the event log. */
const ui = answeringUI(null, {
  notice: (m) => void events.push(`notice ${m}`),
  pickType: async (title, choices) => {
    events.push(`pick ${title} ${choices.map((c) => c.type).join(", ")}`);
    return choices[choices.length - 1]?.type ?? null;
  },
  openPath: (p) => void events.push(`open ${p}`),
});

function inboxHandlers(rpc: Rpc, again: () => Promise<void>): InboxHandlers {
  return {
    openPath: (p) => events.push(`open ${p}`),
    approve: async (row) => {
      await approveInboxNote(rpc, ui, row.path);
      await again();
    },
    approveAs: async (row) => {
      if (await approveInboxNoteAs(rpc, ui, row.path, row.type)) await again();
    },
    reject: async (row) => {
      await rejectInboxNote(rpc, ui, row.path);
      await again();
    },
  };
}

async function render(rpc: Rpc, path: string, depth: 1 | 2): Promise<void> {
  const model = sideViewModel(await loadSideView(rpc, path));
  renderSideView(side, model, {
    ...inboxHandlers(rpc, () => render(rpc, path, depth)),
    openLink: (l) => events.push(`link ${l}`),
    fix: (row) => events.push(`fix ${row.check} ${row.finding.line}`),
    repair: (row, candidate) => events.push(`repair ${row.target} -> ${candidate}`),
  });
  const hood = await rpc("graph.neighbourhood", { path, depth });
  renderGraph(graph, layoutNeighbourhood(hood, { width: 560, height: 440 }), {
    openNode: (node) => events.push(`open ${node.path ?? node.title}`),
  });
}

function showStatus(text: string, title: string): void {
  status.textContent = text;
  status.title = title;
}

let client: SidecarClient | null = null;

(window as any).palinode = {
  events,
  /** Renders from recorded sidecar answers (no sidecar needed); the recorded inbox can be reviewed. */
  async renderRecorded(recording: Recording, depth: 1 | 2 = 1, findingsTotal = 7): Promise<void> {
    const inbox = recording.answers["inbox.list"]?.result as { items: InboxItem[] } | undefined;
    const rpc = inbox ? withInbox(recordedRpc(recording), inbox.items) : recordedRpc(recording);
    await render(rpc, recording.path, depth);
    const m = statusBarModel({ state: "connected", message: "recorded", findingsTotal, progress: { phase: "embed", done: 40, total: 120 } });
    showStatus(m.text, m.title);
  },
  /** What the view shows with no note open: the message, and the inbox under it. */
  async renderNoNote(recording: Recording): Promise<void> {
    const rpc = recordedRpc(recording);
    const again = async () => {
      const inbox = inboxListing(await loadInbox(rpc));
      renderSideViewMessage(side, "Open a note to see what Palinode knows about it.");
      renderInbox(side, inbox, inboxHandlers(rpc, again));
    };
    await again();
  },
  /** Connects to a live sidecar with the browser's WebSocket and renders `path`. */
  async renderLive(info: { port: number; token: string }, path: string, depth: 1 | 2 = 1): Promise<string> {
    client?.stop();
    client = new SidecarClient({
      WebSocket: WebSocket as unknown as SocketConstructor,
      locate: async () => ({ ok: true, info }),
      timeoutMs: 15_000,
      reconnect: false,
    });
    const session = new SidecarSession(client);
    session.onChange(() => showStatus(session.statusBar.text, session.statusBar.title));
    client.start();
    try {
      await client.waitConnected(10_000);
    } catch {
      renderSideViewMessage(side, client.statusMessage);
      return client.state;
    }
    await session.refreshStatus();
    await render((m, p) => client!.call(m, p), path, depth);
    return client.state;
  },
  /** Shows what the view shows when the sidecar is away. */
  renderOffline(message: string): void {
    renderSideViewMessage(side, message);
    graph.textContent = "";
    const m = statusBarModel({ state: "not-running", message, findingsTotal: null, progress: null });
    showStatus(m.text, m.title);
  },
};
