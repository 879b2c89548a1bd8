import { describe, expect, it } from "vitest";
import { executableCandidates } from "../../src/sidecar-process";

describe("where palinode-vault is looked for", () => {
  it("tries the setting, the vault's and project's venv, PATH, then pipx/uv folders (Linux, macOS)", () => {
    const c = executableCandidates({
      setting: " /opt/pv/bin/palinode-vault ",
      vaultPath: "/home/ann/notes/vault",
      platform: "darwin",
      env: { PATH: "/usr/bin:/bin", PIPX_BIN_DIR: "/pipx/bin" },
      home: "/home/ann",
    });
    expect(c.slice(0, 5)).toEqual([
      "/opt/pv/bin/palinode-vault",
      "/home/ann/notes/vault/.venv/bin/palinode-vault",
      "/home/ann/notes/.venv/bin/palinode-vault",
      "/usr/bin/palinode-vault",
      "/bin/palinode-vault",
    ]);
    expect(c).toContain("/pipx/bin/palinode-vault");
    expect(c).toContain("/home/ann/.local/bin/palinode-vault");
    expect(c).toContain("/opt/homebrew/bin/palinode-vault");
    expect(new Set(c).size).toBe(c.length);
  });

  it("uses Scripts\\ and .exe on Windows, with ; in PATH", () => {
    const c = executableCandidates({
      setting: "",
      vaultPath: "C:\\Users\\ann\\vault",
      platform: "win32",
      env: { Path: "C:\\Python311\\Scripts;C:\\tools", USERPROFILE: "C:\\Users\\ann" },
      home: "C:\\Users\\ann",
    });
    expect(c[0]).toBe("C:\\Users\\ann\\vault\\.venv\\Scripts\\palinode-vault.exe");
    expect(c).toContain("C:\\Users\\ann\\.venv\\Scripts\\palinode-vault.exe");
    expect(c).toContain("C:\\Python311\\Scripts\\palinode-vault.exe");
    expect(c).toContain("C:\\Users\\ann\\.local\\bin\\palinode-vault.exe");
    expect(c.every((p) => !p.includes("/"))).toBe(true);
  });
});
