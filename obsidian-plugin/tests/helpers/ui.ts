/** A review UI for tests: it confirms every diff and row, dismisses every picker and opens nothing,
 * except where `answers` says otherwise; notices go into `log` when one is given. */
import type { PalinodeUI } from "../../src/actions";

export function answeringUI(log: string[] | null, answers: Partial<PalinodeUI> = {}): PalinodeUI {
  return {
    notice: (m) => void log?.push(m),
    confirmDiff: async () => true,
    confirmRows: async () => true,
    pickNote: async () => null,
    pickType: async () => null,
    pickAbout: async () => null,
    openPath: () => undefined,
    ...answers,
  };
}
