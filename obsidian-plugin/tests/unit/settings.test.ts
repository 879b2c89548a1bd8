import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, locateSidecar, normaliseSettings, parsePort, parseQuietSeconds, parseSeconds } from "../../src/settings";

describe("settings", () => {
  it("normalises saved data", () => {
    expect(normaliseSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(normaliseSettings({ connection: "manual", port: "4000", token: " t ", timeoutSeconds: 0, graphDepth: 2 })).toEqual({
      connection: "manual",
      port: 4000,
      token: "t",
      timeoutSeconds: 10,
      graphDepth: 2,
      manageSidecar: true,
      executablePath: "",
    });
    expect(normaliseSettings({ manageSidecar: false, executablePath: " /opt/pv " })).toMatchObject({ manageSidecar: false, executablePath: "/opt/pv" });
    expect(normaliseSettings({ manageSidecar: "no" }).manageSidecar).toBe(true);
  });
  it("parses ports, quiet periods and bounded seconds", () => {
    expect([parseSeconds("30", 1, 600), parseSeconds("0", 1, 600), parseSeconds("abc", 1, 600), parseSeconds(" ", 1, 600)]).toEqual([30, null, null, null]);
    expect([parsePort("80"), parsePort("0"), parsePort("x"), parsePort(70000)]).toEqual([80, null, null, null]);
    expect([parseQuietSeconds("5"), parseQuietSeconds(""), parseQuietSeconds("-1"), parseQuietSeconds("2.5")]).toEqual([5, null, null, 2.5]);
  });
  it("locates the sidecar from the discovery file or the manual settings", async () => {
    const read = async () => '{"port": 1234, "token": "abc"}';
    expect(await locateSidecar(DEFAULT_SETTINGS, read)).toEqual({ ok: true, info: { port: 1234, token: "abc" } });
    const manual = { ...DEFAULT_SETTINGS, connection: "manual" as const, port: 9, token: "z" };
    expect(await locateSidecar(manual, read)).toEqual({ ok: true, info: { port: 9, token: "z" } });
    expect(await locateSidecar({ ...manual, token: "" }, read)).toMatchObject({ ok: false, reason: "invalid" });
  });
});
