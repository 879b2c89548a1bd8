// The official Obsidian review rules (eslint-plugin-obsidianmd, recommended) over src/.
// tests/eslint.test.ts runs this in `npm test` and fails on any finding.
import { defineConfig } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";

export default defineConfig([
  { ignores: ["main.js", "node_modules/**", "tests/**", "esbuild.config.mjs", "vitest.config.ts", "eslint.config.mjs"] },
  ...obsidianmd.configs.recommended,
  {
    files: ["src/**/*.ts"],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["eslint.config.*"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
]);
