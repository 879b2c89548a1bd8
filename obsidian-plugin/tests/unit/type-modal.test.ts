/** The "Approve as…" type picker (a SuggestModal): narrows as the person types, answers once. */
import { describe, expect, it } from "vitest";
import { App, FakeEl } from "../__mocks__/obsidian";
import { otherTypes } from "../../src/actions";
import { TypeModal } from "../../src/obsidian/modals";

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

function opened(): { modal: TypeModal; answers: (string | null)[] } {
  const answers: (string | null)[] = [];
  let first = true;
  // a promise keeps its first answer: so does this recorder
  const modal = new TypeModal(new App() as any, "Approve x as…", otherTypes("Insight"), (t) => {
    if (first) answers.push(t);
    first = false;
  });
  modal.open();
  return { modal, answers };
}

describe("TypeModal", () => {
  it("lists the other types, narrowed by what is typed, any case", () => {
    const { modal } = opened();
    expect(modal.getSuggestions("").map((c) => c.type)).toEqual(["PersonMemory", "ProjectSnapshot", "Decision", "ResearchRef"]);
    expect(modal.getSuggestions(" DEC").map((c) => c.type)).toEqual(["Decision"]);
    expect(modal.getSuggestions("memory").map((c) => c.type)).toEqual(["PersonMemory"]);
    expect(modal.getSuggestions("meeting")).toEqual([]);
    expect((modal as any).placeholder).toBe("Approve x as…");
    const item = new FakeEl();
    modal.renderSuggestion(modal.getSuggestions("dec")[0], item as any);
    expect(item.children.map((c) => c.text)).toEqual(["Decision", "decisions/"]);
  });

  it("answers the type chosen, also when Obsidian closes it before calling onChooseSuggestion", async () => {
    const { modal, answers } = opened();
    modal.close();
    modal.onChooseSuggestion(modal.getSuggestions("decision")[0]);
    await settle();
    expect(answers).toEqual(["Decision"]);
  });

  it("answers null when dismissed", async () => {
    const { modal, answers } = opened();
    modal.close();
    await settle();
    expect(answers).toEqual([null]);
  });
});
