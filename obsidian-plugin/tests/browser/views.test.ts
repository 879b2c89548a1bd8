/**
 * The side view and the graph view rendered in headless Chromium (Debian's /usr/bin/chromium,
 * driven by playwright-core), from recorded answers and from the real sidecar. Screenshots go to
 * test-artifacts/.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import esbuild from "esbuild";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import recording from "../fixtures/recorded-alice.json";
import { copyVault, PLUGIN_DIR, serveAvailability, skipNote, startSidecar, type RunningSidecar } from "../helpers/real-sidecar";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const ARTIFACTS = join(PLUGIN_DIR, "test-artifacts");
const HOST_DIR = join(ARTIFACTS, "host");
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`[browser] skipping: ${CHROMIUM} not found (apt-get install -y chromium)`);

let server: Server;
let baseUrl = "";
let browser: Browser;

beforeAll(async () => {
  if (!haveChromium) return;
  mkdirSync(HOST_DIR, { recursive: true });
  await esbuild.build({
    entryPoints: [join(PLUGIN_DIR, "tests/browser/host.ts")],
    bundle: true,
    format: "iife",
    target: "es2020",
    outfile: join(HOST_DIR, "host.js"),
    logLevel: "silent",
  });
  const files: Record<string, [string, string]> = {
    "/": [join(PLUGIN_DIR, "tests/browser/host.html"), "text/html"],
    "/host.js": [join(HOST_DIR, "host.js"), "text/javascript"],
    "/styles.css": [join(PLUGIN_DIR, "styles.css"), "text/css"],
  };
  server = createServer((req, res) => {
    const f = files[req.url ?? ""];
    if (!f) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": f[1] }).end(readFileSync(f[0]));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r(null)));
});

async function openHost(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 980, height: 900 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(baseUrl);
  await page.waitForFunction(() => (window as any).palinode !== undefined);
  (page as any).errors = errors;
  return page;
}

const events = (page: Page) => page.evaluate(() => [...(window as any).palinode.events] as string[]);

describe.skipIf(!haveChromium)("views in Chromium, from recorded sidecar answers", () => {
  it("renders the side view: findings with fix and candidates, backlinks by kind, related, duplicates, entities", async () => {
    const page = await openHost();
    await page.evaluate((rec) => (window as any).palinode.renderRecorded(rec, 1), recording);
    const side = page.locator("#side");
    await expect.poll(() => side.locator(".palinode-title").textContent()).toBe("Alice Smith");
    expect(await side.locator(".palinode-chip").textContent()).toBe("People");

    const findings = side.locator(".palinode-finding");
    expect(await findings.count()).toBe(3);
    expect(await findings.nth(0).locator(".palinode-check").textContent()).toBe("Broken link");
    expect(await findings.nth(0).locator(".palinode-candidate").allTextContents()).toEqual(["bob-smith 92%", "bob-smithers 61%"]);
    expect(await findings.nth(0).locator(".palinode-fix").count()).toBe(0);
    expect(await findings.nth(1).locator(".palinode-fix").count()).toBe(1);

    const groups = await side.locator(".palinode-group-title").allTextContents();
    expect(groups).toEqual(["People (1)", "Projects (1)", "Decisions (1)", "Insights (1)", "Research (1)", "Daily (1)"]);
    expect(await side.locator('[data-section="related"] .palinode-note-link').allTextContents()).toEqual(["bob-smith", "checkout-redesign"]);
    expect(await side.locator('[data-section="duplicates"] .palinode-note').textContent()).toContain("likely duplicate");
    expect(await side.locator(".palinode-entity").count()).toBe(3);

    // the dot of a People backlink is People's colour
    const dotColour = await side.locator('[data-group="people"] .palinode-dot').first().evaluate((e) => getComputedStyle(e).backgroundColor);
    expect(dotColour).toBe("rgb(59, 130, 196)");

    await findings.nth(0).locator(".palinode-candidate").first().click();
    await findings.nth(1).locator(".palinode-fix").click();
    await side.locator('[data-section="backlinks"] .palinode-note-link', { hasText: "Checkout Redesign" }).click();
    await side.locator(".palinode-entity").first().click();
    expect(await events(page)).toEqual([
      "repair Bob Smiht -> people/bob-smith.md",
      "fix wiki_drift 4",
      "open projects/checkout-redesign.md",
      "link checkout-redesign",
    ]);

    mkdirSync(ARTIFACTS, { recursive: true });
    await side.screenshot({ path: join(ARTIFACTS, "side-view.png") });
    await page.screenshot({ path: join(ARTIFACTS, "views.png") });
    expect((page as any).errors).toEqual([]);
    await page.close();
  });

  it("renders the graph view coloured by category; a node opens its note", async () => {
    const page = await openHost();
    await page.evaluate((rec) => (window as any).palinode.renderRecorded(rec, 2), recording);
    const graph = page.locator("#graph");
    await expect.poll(() => graph.locator(".palinode-node").count()).toBe(9);
    expect(await graph.locator(".palinode-edge").count()).toBe(8);
    const centre = graph.locator(".palinode-node-center");
    expect(await centre.locator("text").textContent()).toBe("Alice Smith");
    expect(await graph.locator('[data-path="projects/payments-api.md"] circle').getAttribute("fill")).toBe("#e07b39");
    expect(await graph.locator('[data-path="people/carol-jones.md"] circle').getAttribute("fill")).toBe("#3b82c4");
    expect(await graph.locator(".palinode-legend-item").allTextContents()).toContain("Decisions");
    const box = await graph.locator("svg").boundingBox();
    expect(box!.width).toBeGreaterThan(400);

    await graph.locator('[data-path="projects/payments-api.md"]').click();
    expect(await events(page)).toEqual(["open projects/payments-api.md"]);
    expect(await page.locator("#status").textContent()).toBe("Palinode · 7 findings · embedding 40/120 (33%)");
    await graph.screenshot({ path: join(ARTIFACTS, "graph-view.png") });
    expect((page as any).errors).toEqual([]);
    await page.close();
  });

  it("lists the inbox with Approve and Reject; each refreshes the list until nothing is waiting", async () => {
    const page = await openHost();
    await page.evaluate((rec) => (window as any).palinode.renderRecorded(rec, 1), recording);
    const inbox = page.locator('#side [data-section="inbox"]');
    await expect.poll(() => inbox.locator(".palinode-inbox-item").count()).toBe(3);
    expect(await inbox.locator(".palinode-count").textContent()).toBe("3");
    expect(await inbox.locator(".palinode-note-link").allTextContents()).toEqual([
      "Alice S. notes",
      "Ship the checkout redesign weekly",
      "checkout-snapshot",
    ]);
    const first = inbox.locator(".palinode-inbox-item").first();
    expect(await first.locator(".palinode-inbox-meta span").allTextContents()).toEqual(["Person", "confidence 55%", "waiting since 2026-03-20"]);
    expect(await inbox.locator(".palinode-inbox-item").nth(2).locator(".palinode-inbox-meta span").allTextContents()).toEqual(["ProjectSnapshot", "about whom?"]);
    // a project memory naming no project: its Approve asks which first
    expect(await inbox.locator(".palinode-inbox-item").nth(1).locator(".palinode-inbox-may-replace").textContent()).toBe("replaces biweekly-release-train?");
    // ... and a decision that may replace another asks whether it does
    expect(await inbox.locator(".palinode-approve").allTextContents()).toEqual(["Approve", "Approve…", "Approve about…"]);
    expect(await first.locator(".palinode-dot").evaluate((e) => getComputedStyle(e).backgroundColor)).toBe("rgb(59, 130, 196)");
    expect(await inbox.locator(".palinode-approve").count()).toBe(3);
    expect(await inbox.locator(".palinode-reject").count()).toBe(3);

    await first.locator(".palinode-note-link").click();
    const item = (path: string) => inbox.locator(`.palinode-inbox-item[data-path="${path}"]`);
    await item("inbox/weekly-release-train.md").locator(".palinode-approve").click();
    await expect.poll(() => inbox.locator(".palinode-inbox-item").count()).toBe(2);
    expect(await item("inbox/weekly-release-train.md").count()).toBe(0);
    expect(await inbox.locator(".palinode-count").textContent()).toBe("2");
    await item("inbox/alice-s-notes.md").locator(".palinode-reject").click();
    await expect.poll(() => inbox.locator(".palinode-inbox-item").count()).toBe(1);
    await item("inbox/checkout-snapshot.md").locator(".palinode-reject").click();
    await expect.poll(() => inbox.locator(".palinode-inbox-empty").textContent()).toBe("Nothing is waiting for review.");
    expect(await inbox.locator(".palinode-count").textContent()).toBe("0");
    // the note's own sections are still there after each refresh
    expect(await page.locator("#side .palinode-finding").count()).toBe(3);
    expect(await events(page)).toEqual([
      "open inbox/alice-s-notes.md",
      'notice Palinode: approved: moved to decisions/weekly-release-train.md. "Undo the last fix" reverts it.',
      "open decisions/weekly-release-train.md",
      'notice Palinode: rejected: archived to archive/inbox/alice-s-notes.md. "Undo the last fix" reverts it.',
      'notice Palinode: rejected: archived to archive/inbox/checkout-snapshot.md. "Undo the last fix" reverts it.',
    ]);
    expect((page as any).errors).toEqual([]);
    await page.close();
  });

  it("approves an inbox note as another type: Approve as… offers the other types and files it as the one picked", async () => {
    const page = await openHost();
    await page.evaluate((rec) => (window as any).palinode.renderRecorded(rec, 1), recording);
    const inbox = page.locator('#side [data-section="inbox"]');
    await expect.poll(() => inbox.locator(".palinode-inbox-item").count()).toBe(3);
    expect(await inbox.locator(".palinode-approve-as").count()).toBe(3);
    const row = inbox.locator('.palinode-inbox-item[data-path="inbox/weekly-release-train.md"]');
    expect(await row.locator(".palinode-actions button").allTextContents()).toEqual(["Approve…", "Approve as…", "Reject"]);
    await row.locator(".palinode-approve-as").click();
    await expect.poll(() => inbox.locator(".palinode-inbox-item").count()).toBe(2);
    expect(await events(page)).toEqual([
      "pick Approve weekly-release-train as… PersonMemory, ProjectSnapshot, Insight, ResearchRef",
      'notice Palinode: approved as ResearchRef: moved to research/weekly-release-train.md. "Undo the last fix" reverts it.',
      "open research/weekly-release-train.md",
    ]);
    expect((page as any).errors).toEqual([]);
    await page.close();
  });

  it("says so in the inbox section when the sidecar cannot list it, like the other sections", async () => {
    const page = await openHost();
    const inbox = page.locator('#side [data-section="inbox"]');
    const unavailable = { ...recording, answers: { ...recording.answers, "inbox.list": { error: { code: -32013, message: "inbox review is not there yet" } } } };
    await page.evaluate((rec) => (window as any).palinode.renderRecorded(rec, 1), unavailable);
    await expect.poll(() => inbox.locator(".palinode-unavailable").textContent()).toBe("Inbox review is not there yet");
    expect(await inbox.locator(".palinode-inbox-item").count()).toBe(0);
    expect(await inbox.locator(".palinode-count").count()).toBe(0);
    const failing = { ...recording, answers: { ...recording.answers, "inbox.list": { error: { code: -32603, message: "inbox/x.md: bad front matter" } } } };
    await page.evaluate((rec) => (window as any).palinode.renderRecorded(rec, 1), failing);
    await expect.poll(() => inbox.locator(".palinode-error").textContent()).toBe("inbox/x.md: bad front matter");
    expect(await page.locator("#side .palinode-title").textContent()).toBe("Alice Smith");
    expect((page as any).errors).toEqual([]);
    await page.close();
  });

  it("shows the inbox under the message when no note is open", async () => {
    const page = await openHost();
    await page.evaluate((rec) => (window as any).palinode.renderNoNote(rec), recording);
    const side = page.locator("#side");
    expect(await side.locator(".palinode-empty-title").textContent()).toBe("Open a note to see what Palinode knows about it.");
    expect(await side.locator('[data-section="inbox"] .palinode-inbox-item').count()).toBe(3);
    expect(await side.locator(".palinode-finding").count()).toBe(0);
    await page.close();
  });

  it("shows how to start the sidecar when it is away", async () => {
    const page = await openHost();
    const message = "Palinode sidecar not running — start it with `palinode-vault serve --vault /home/me/vault`";
    await page.evaluate((m) => (window as any).palinode.renderOffline(m), message);
    expect(await page.locator("#side .palinode-empty-title").textContent()).toBe(message);
    expect(await page.locator("#status").textContent()).toBe("Palinode: offline");
    await page.close();
  });
});

const available = serveAvailability();
if (!available.ok) console.warn(`[browser] skipping the live-sidecar variant: ${available.reason}`);

describe.skipIf(!haveChromium || !available.ok)(skipNote("views in Chromium, connected to the real sidecar"), () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startSidecar(copyVault());
  });
  afterAll(async () => {
    await sidecar?.stop();
  });

  it("connects with the browser's WebSocket and renders the side view and the graph of a real note", async () => {
    const page = await openHost();
    const state = await page.evaluate(
      ([info, path]) => (window as any).palinode.renderLive(info, path, 1),
      [{ port: sidecar.info.port, token: sidecar.info.token }, "people/alice-smith.md"] as const,
    );
    expect(state).toBe("connected");
    const side = page.locator("#side");
    expect(await side.locator(".palinode-title").textContent()).toBe("Alice Smith");
    const broken = side.locator('.palinode-finding[data-check="broken_link"]');
    expect(await broken.locator(".palinode-target").first().textContent()).toBe("Bob Smiht");
    expect(await broken.first().locator(".palinode-candidate").first().getAttribute("data-path")).toBe("people/bob-smith.md");
    expect(await side.locator(".palinode-group-title").first().textContent()).toBe("People (1)");
    const graph = page.locator("#graph");
    expect(await graph.locator('[data-path="people/bob-smith.md"]').count()).toBe(1);
    expect(await graph.locator('[data-path="people/bob-smith.md"] circle').getAttribute("fill")).toBe("#3b82c4");
    await expect.poll(() => page.locator("#status").textContent()).toMatch(/^Palinode · \d+ findings?/);
    mkdirSync(ARTIFACTS, { recursive: true });
    await side.screenshot({ path: join(ARTIFACTS, "side-view-live.png") });
    await graph.screenshot({ path: join(ARTIFACTS, "graph-view-live.png") });
    expect((page as any).errors).toEqual([]);
    await page.close();
  });

  it("lists a note written into inbox/ and its Approve button moves it out of the list", async () => {
    mkdirSync(join(sidecar.vault, "inbox"), { recursive: true });
    writeFileSync(
      join(sidecar.vault, "inbox/weekly-release-train.md"),
      [
        "---",
        "id: decision-weekly-release-train",
        "category: decision",
        "type: Decision",
        "status: review",
        "confidence: 0.5",
        "entities: [project/checkout-redesign]",
        "last_updated: 2026-11-26T16:00:00Z",
        "---",
        "# Decision: Ship the checkout redesign weekly",
        "",
        "Floated once for [[checkout-redesign]]; not clear it is settled.",
        "",
      ].join("\n"),
    );
    const page = await openHost();
    const info = { port: sidecar.info.port, token: sidecar.info.token };
    const inbox = page.locator('#side [data-section="inbox"]');
    const item = inbox.locator('.palinode-inbox-item[data-path="inbox/weekly-release-train.md"]');
    // the sidecar picks the new file up from disk after its quiet period
    for (const start = Date.now(); Date.now() - start < 60_000; await new Promise((r) => setTimeout(r, 300))) {
      await page.evaluate(([i, path]) => (window as any).palinode.renderLive(i, path, 1), [info, "people/alice-smith.md"] as const);
      if ((await item.count()) > 0) break;
    }
    expect(await item.locator(".palinode-note-link").textContent()).toBe("Ship the checkout redesign weekly");
    expect(await item.locator(".palinode-inbox-meta span").allTextContents()).toEqual(["Decision", "confidence 50%", "waiting since 2026-11-26"]);
    await item.locator(".palinode-approve").click();
    await expect.poll(() => inbox.locator(".palinode-inbox-empty").count(), { timeout: 15_000 }).toBe(1);
    expect(await item.count()).toBe(0);
    const log = await events(page);
    expect(log[0]).toMatch(/^notice Palinode: approved: moved to decisions\/.*\.md\. "Undo the last fix" reverts it\.$/);
    expect(existsSync(join(sidecar.vault, "inbox/weekly-release-train.md"))).toBe(false);
    expect((page as any).errors).toEqual([]);
    await page.close();
  });

  it("a wrong token is refused and the view says so", async () => {
    const page = await openHost();
    const state = await page.evaluate((info) => (window as any).palinode.renderLive(info, "people/alice-smith.md"), {
      port: sidecar.info.port,
      token: "wrong",
    });
    expect(state).not.toBe("connected");
    expect(await page.locator("#side .palinode-empty-title").textContent()).toMatch(/not running|refused/);
    await page.close();
  });
});
