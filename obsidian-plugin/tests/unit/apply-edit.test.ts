import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { applyEdit, isApplyEditParams, sha256Hex, type EditableVault } from "../../src/apply-edit";

function memoryVault(files: Record<string, string>, beforeProcess?: (path: string) => void): EditableVault & { files: Record<string, string> } {
  return {
    files,
    async read(path) {
      return path in files ? files[path] : null;
    },
    async process(path, fn) {
      beforeProcess?.(path);
      files[path] = fn(files[path]);
      return files[path];
    },
  };
}

const sha = (t: string) => createHash("sha256").update(Buffer.from(t, "utf8")).digest("hex");

describe("sha256Hex", () => {
  it("matches Python's hashlib.sha256(text.encode('utf-8')).hexdigest()", async () => {
    for (const text of ["", "hello\n", "Ünïcödé — ✓ 🧠\r\n"]) expect(await sha256Hex(text)).toBe(sha(text));
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("applyEdit", () => {
  it("applies when the hash matches", async () => {
    const v = memoryVault({ "a.md": "old\n" });
    expect(await applyEdit({ path: "a.md", old_hash: sha("old\n"), new_text: "new\n" }, v)).toEqual({ applied: true });
    expect(v.files["a.md"]).toBe("new\n");
  });

  it("accepts an upper-case hash", async () => {
    const v = memoryVault({ "a.md": "old" });
    expect((await applyEdit({ path: "a.md", old_hash: sha("old").toUpperCase(), new_text: "n" }, v)).applied).toBe(true);
  });

  it("refuses a stale hash and leaves the file alone", async () => {
    const v = memoryVault({ "a.md": "typed since\n" });
    expect(await applyEdit({ path: "a.md", old_hash: sha("old\n"), new_text: "new\n" }, v)).toEqual({
      applied: false,
      reason: "hash mismatch",
    });
    expect(v.files["a.md"]).toBe("typed since\n");
  });

  it("refuses when the text changes between the hash check and the write", async () => {
    const files = { "a.md": "old" };
    const v = memoryVault(files, () => {
      files["a.md"] = "old plus a keystroke";
    });
    expect(await applyEdit({ path: "a.md", old_hash: sha("old"), new_text: "new" }, v)).toEqual({ applied: false, reason: "hash mismatch" });
    expect(files["a.md"]).toBe("old plus a keystroke");
  });

  it("refuses a missing file and bad params", async () => {
    const v = memoryVault({});
    expect(await applyEdit({ path: "gone.md", old_hash: sha(""), new_text: "" }, v)).toEqual({ applied: false, reason: "not found" });
    expect((await applyEdit({ path: "a.md" }, v)).applied).toBe(false);
    expect(isApplyEditParams(null)).toBe(false);
    expect(isApplyEditParams({ path: "a", old_hash: "h", new_text: "" })).toBe(true);
  });
});
