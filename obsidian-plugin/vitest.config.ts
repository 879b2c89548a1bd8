import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // The app provides `obsidian` at run time; tests get a small hand-written stand-in.
    alias: { obsidian: fileURLToPath(new URL("./tests/__mocks__/obsidian.ts", import.meta.url)) },
  },
  test: {
    include: ["tests/**/*.test.ts"],
    setupFiles: ["tests/setup-window.ts"],
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Integration and browser tests each start their own sidecar; keep files sequential.
    fileParallelism: false,
  },
});
