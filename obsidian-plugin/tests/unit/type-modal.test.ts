/** The "Approve as…" type picker (a SuggestModal): narrows as the person types, answers once. */
import { describe, expect, it } from "vitest";
import { App, FakeEl } from "../__mocks__/obsidian";
import { otherTypes } from "../../src/actions";
import { AboutModal, TypeModal } from "../../src/obsidian/modals";

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

describe("AboutModal", () => {
  const people = [
    { path: "people/ana.md", title: "Ana Costa", detail: "people/ana.md" },
    { path: "people/rui.md", title: "Rui", detail: "people/rui.md" },
  ];
  function about(): { modal: AboutModal; answers: (string | null)[] } {
    const answers: (string | null)[] = [];
    let first = true;
    const modal = new AboutModal(new App() as any, "x is about whom?", people, "person", (a) => {
      if (first) answers.push(a);
      first = false;
    });
    modal.open();
    return { modal, answers };
  }

  it("lists the people, narrowed by name or path, and offers what is typed as a new name", () => {
    const { modal } = about();
    expect(modal.getSuggestions("").map((r) => r.title)).toEqual(["Ana Costa", "Rui"]);
    expect(modal.getSuggestions("  ana ").map((r) => [r.path, r.title])).toEqual([
      ["people/ana.md", "Ana Costa"],
      ["", "ana"],
    ]);
    expect(modal.getSuggestions("rui.md").map((r) => r.path)).toEqual(["people/rui.md", ""]);
    // a name that is one of theirs exactly is not offered again as a new one
    expect(modal.getSuggestions("ana costa").map((r) => r.path)).toEqual(["people/ana.md"]);
    expect(modal.getSuggestions("Leonor  Pinto")).toEqual([{ path: "", title: "Leonor Pinto", detail: 'a new person note named "Leonor Pinto"' }]);
    expect((modal as any).placeholder).toBe("x is about whom?");
  });

  it("answers the note's path, or the new name, once; null when dismissed", async () => {
    const picked = about();
    picked.modal.close();
    picked.modal.onChooseSuggestion(picked.modal.getSuggestions("ana")[0]);
    await settle();
    expect(picked.answers).toEqual(["people/ana.md"]);
    const typed = about();
    typed.modal.onChooseSuggestion(typed.modal.getSuggestions("Leonor Pinto")[0]);
    await settle();
    expect(typed.answers).toEqual(["Leonor Pinto"]);
    const dismissed = about();
    dismissed.modal.close();
    await settle();
    expect(dismissed.answers).toEqual([null]);
  });
});
